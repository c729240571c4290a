/**
 * End-effector position from joint angles for the workspace check: a Denavit–Hartenberg chain (standard DH,
 * as UR publishes for its arms) or a named preset. Plain functions; no dependency on a robot description.
 */
import { forwardKinematics as rlftArm5Fk } from "../sim/kinematics.ts";
import { So101Kinematics } from "../sim/so101/so101Kinematics.ts";

/** One standard-DH row: a (m), alpha (rad), d (m), theta offset (rad). */
export interface DhRow {
  a: number;
  alpha: number;
  d: number;
  theta?: number;
}

/** Maps joint angles to the end-effector position (m, base frame). */
export type ForwardKinematics = (q: ArrayLike<number>) => [number, number, number];

/**
 * UR5e standard DH (Universal Robots, "DH parameters for calculations of kinematics and dynamics", UR5e row).
 * Tool flange position, base frame.
 */
export const UR5E_DH: DhRow[] = [
  { a: 0, alpha: Math.PI / 2, d: 0.1625 },
  { a: -0.425, alpha: 0, d: 0 },
  { a: -0.3922, alpha: 0, d: 0 },
  { a: 0, alpha: Math.PI / 2, d: 0.1333 },
  { a: 0, alpha: -Math.PI / 2, d: 0.0997 },
  { a: 0, alpha: 0, d: 0.0996 },
];

/** Forward kinematics of a standard-DH chain (joint i rotates about z_{i-1}). */
export function dhForwardKinematics(rows: readonly DhRow[]): ForwardKinematics {
  return (q) => {
    // 4×4 homogeneous transform as a row-major 12-element 3×4 matrix.
    let m = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0];
    rows.forEach((r, i) => {
      const th = (q[i] ?? 0) + (r.theta ?? 0);
      const ct = Math.cos(th);
      const st = Math.sin(th);
      const ca = Math.cos(r.alpha);
      const sa = Math.sin(r.alpha);
      const t = [ct, -st * ca, st * sa, r.a * ct, st, ct * ca, -ct * sa, r.a * st, 0, sa, ca, r.d];
      const out = new Array<number>(12);
      for (let row = 0; row < 3; row++) {
        for (let col = 0; col < 4; col++) {
          let v = col === 3 ? m[row * 4 + 3] : 0;
          for (let k = 0; k < 3; k++) v += m[row * 4 + k] * t[k * 4 + col];
          out[row * 4 + col] = v;
        }
      }
      m = out;
    });
    return [m[3], m[7], m[11]];
  };
}

/** Built-in kinematics by name. */
export const FK_PRESETS: Record<string, ForwardKinematics> = {
  rlft_arm5: rlftArm5Fk,
  ur5e: dhForwardKinematics(UR5E_DH),
  // The SO-101's gripper tip (`gripperframe`) from MuJoCo Menagerie's so101.xml, in rlft's Feetech joint convention.
  so101: (q) => So101Kinematics.shared().position(q),
};
