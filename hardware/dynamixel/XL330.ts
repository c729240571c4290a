/**
 * Dynamixel XL330-M288-T (Koch v1.1 follower/leader). Source: ROBOTIS e-Manual, XL330-M288-T,
 * "Control Table" (https://emanual.robotis.com/docs/en/dxl/x/xl330-m288/): Model Number 1200,
 * 4096 pulse/rev, Current Limit(38), Goal Current(102), Present Current(126) in 1 mA.
 */
import type { ServoModel } from "../servo/ServoModel.ts";
import { X_SERIES_COMMON, X_VELOCITY_SCALE } from "./xSeriesTable.ts";

/** The XL330-M288-T control table. */
export const XL330: ServoModel = {
  name: "XL330-M288-T",
  modelNumber: 1200,
  ticksPerRev: 4096,
  byteOrder: "little",
  velocityScale: X_VELOCITY_SCALE,
  effort: { register: "Present_Current", scale: 0.001, unit: "A" },
  source: "ROBOTIS e-Manual XL330-M288-T Control Table",
  registers: {
    ...X_SERIES_COMMON,
    Current_Limit: { address: 38, size: 2, access: "RW", area: "EEPROM", unit: "1 mA" },
    Goal_Current: { address: 102, size: 2, access: "RW", area: "RAM", signed: "twos", unit: "1 mA" },
    Present_Current: { address: 126, size: 2, access: "R", area: "RAM", signed: "twos", unit: "1 mA" },
  },
};
