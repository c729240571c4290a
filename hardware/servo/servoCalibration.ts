/**
 * Servo encoder ticks ↔ joint radians for bus arms, through the calibration math of
 * calibration/ArmCalibration.ts (one formula for the driver, the leader arm and `rlft calibrate arm`).
 *
 * "Raw" ticks are the encoder's own reading, independent of any Homing_Offset stored in the servo's EEPROM
 * (LeRobot writes one there): Feetech STS reports Present_Position = Actual − Homing_Offset (SMS/STS memory
 * table, addr 31; lerobot `FeetechMotorsBus._get_half_turn_homings`), Dynamixel X reports
 * Present_Position = Actual + Homing_Offset (e-Manual "Homing Offset(20)"). rlft reads the stored offset once
 * and undoes it, so `zero_ticks` and rlft calibration files mean the same thing on every servo.
 */
import type { JointCalibration } from "../../calibration/ArmCalibration.ts";
import type { ServoBus } from "./ServoBus.ts";

/** Per id: raw ticks = Present_Position + shift (0 when the model has no Homing_Offset register). */
export async function presentToRawShifts(bus: ServoBus, ids: readonly number[]): Promise<number[]> {
  if (!bus.model.registers.Homing_Offset) return ids.map(() => 0);
  const v = await bus.syncRead(ids, ["Homing_Offset"]);
  return v.map((r) => (bus.protocol.name === "dynamixel" ? -r[0] : r[0]));
}

/**
 * The JointCalibration that converts Present_Position ticks of a joint whose angle is 0 at raw `zeroTicks`
 * and that turns with `direction` (ranges are left open: the driver clamps in radians).
 */
export function presentCalibration(zeroTicks: number, direction: 1 | -1, resolution: number, shift = 0): JointCalibration {
  const half = Math.floor((resolution - 1) / 2);
  return { drive_mode: direction === -1 ? 1 : 0, homing_offset: zeroTicks - shift - half, range_min: -(1 << 24), range_max: 1 << 24, resolution };
}

/** A calibration file's joint as launch-file terms: raw ticks at 0 rad and the direction. */
export function zeroAndDirection(j: JointCalibration): { zeroTicks: number; direction: 1 | -1 } {
  return { zeroTicks: j.homing_offset + Math.floor((j.resolution - 1) / 2), direction: j.drive_mode === 1 ? -1 : 1 };
}
