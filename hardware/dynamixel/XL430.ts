/**
 * Dynamixel XL430-W250-T (Koch v1.0 follower). Source: ROBOTIS e-Manual, XL430-W250-T, "Control Table"
 * (https://emanual.robotis.com/docs/en/dxl/x/xl430-w250/): Model Number 1060, 4096 pulse/rev, no current
 * control; Present Load(126) in 0.1 % of the maximum torque.
 */
import type { ServoModel } from "../servo/ServoModel.ts";
import { X_SERIES_COMMON, X_VELOCITY_SCALE } from "./xSeriesTable.ts";

/** The XL430-W250-T control table. */
export const XL430: ServoModel = {
  name: "XL430-W250-T",
  modelNumber: 1060,
  ticksPerRev: 4096,
  byteOrder: "little",
  velocityScale: X_VELOCITY_SCALE,
  effort: { register: "Present_Load", scale: 0.001, unit: "fraction of max torque" },
  source: "ROBOTIS e-Manual XL430-W250-T Control Table",
  registers: {
    ...X_SERIES_COMMON,
    Present_Load: { address: 126, size: 2, access: "R", area: "RAM", signed: "twos", unit: "0.1 %" },
  },
};
