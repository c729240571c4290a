/** rlft_arm5's kinematics (sim/kinematics.ts) in the shape TeleopMapper needs. */
import { forwardKinematics, inverseKinematics } from "../../sim/kinematics.ts";
import type { TeleopKinematics } from "./TeleopMapper.ts";

/** Tool pitch is the sum of the three pitch joints (angles from vertical, see sim/kinematics.ts). */
export const ARM5_KINEMATICS: TeleopKinematics = {
  forward: (q) => forwardKinematics(q),
  toolPitch: (q) => q[1] + q[2] + q[3],
  inverse: (p, pitch) => {
    const s = inverseKinematics(p, { pitch });
    return { q: [...s.q], reachable: s.reachable };
  },
};
