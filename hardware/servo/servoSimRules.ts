/**
 * What a write may change and what a status packet reports, per servo family, for ServoBusSim.
 *
 * Dynamixel X on Protocol 2.0 (ROBOTIS e-Manual, "DYNAMIXEL Protocol 2.0" §Status Packet "Error" and the X-series
 * control table pages):
 * - error numbers: 4 Data Range, 5 Data Length, 6 Data Limit, 7 Access; bit 7 (0x80) Alert while Hardware Error
 *   Status is not 0.
 * - Access Error: a read-only register, or an EEPROM register while Torque Enable is 1 ("EEPROM area can only be
 *   written with torque off").
 * - Data Length Error: a write that covers only part of a register.
 * - "Shutdown(63)": a hardware error whose bit is set in Shutdown clears Torque Enable; "REBOOT is the only method
 *   to reset Torque Enable(64) to '1' after the shutdown" — a later write of 1 leaves it 0.
 * - "Bus Watchdog(98)": once it reads -1 the goal values (Goal PWM / Current / Velocity / Position) are read-only
 *   and a write of them is answered Data Range Error, until Bus Watchdog is written 0.
 * - "Goal Position(116)": in Position Control Mode (Operating Mode 3) a goal outside Min/Max Position Limit
 *   (52, 48) is not taken: Data Limit Error ("outside of the Limit value", Protocol 2.0 §Error).
 *
 * Feetech STS/SMS (Feetech SCServo memory table and communication protocol manual):
 * - the status byte holds fault bits only — bit 0 input voltage, 1 angle sensor, 2 overheat, 3 overcurrent,
 *   4 angle, 5 overload (the Status register 65) — there is no access or range error number: a write to a read-only
 *   register, or to EEPROM while Lock (55) is 1, is ignored and answered with the current fault bits.
 * - Min/Max Position Limit (9, 11): the goal is clamped into them in position mode (both 0: no limit).
 * - a fault whose bit is set in Unloading_Condition (19) releases the torque (Torque_Enable 0).
 */
import type { SimServo } from "./SimServo.ts";
import { decodeRegister, encodeRegister } from "./ServoModel.ts";

/** Faults a test can inject, by the vendor's name. */
export type ServoFault = "voltage" | "overheating" | "encoder" | "electrical_shock" | "overload" | "angle_sensor" | "overcurrent" | "angle";

/** Bit of each fault in Hardware Error Status (Dynamixel X, e-Manual "Shutdown(63)") and in Status (Feetech). */
export const FAULT_BITS: Record<"dynamixel" | "feetech", Partial<Record<ServoFault, number>>> = {
  dynamixel: { voltage: 0, overheating: 2, encoder: 3, electrical_shock: 4, overload: 5 },
  feetech: { voltage: 0, angle_sensor: 1, overheating: 2, overcurrent: 3, angle: 4, overload: 5 },
};

const GOALS = ["Goal_PWM", "Goal_Current", "Goal_Velocity", "Goal_Position"];

/** Protocol rules of one family. */
export interface SimRules {
  readonly family: "dynamixel" | "feetech";
  /** Applies a write (WRITE, REG_WRITE+ACTION, SYNC/BULK WRITE); returns the status error byte to answer. */
  write(s: SimServo, address: number, data: Uint8Array): number;
  /** The error byte of a status packet for a read or ping. */
  status(s: SimServo): number;
  /** A hardware fault appears (overload, overheating, …). */
  fault(s: SimServo, f: ServoFault): void;
  /** The fault's cause goes away (Feetech clears its bits; Dynamixel stays shut down until a reboot). */
  clear(s: SimServo): void;
}

/** Dynamixel X (Protocol 2.0). */
export const dynamixelRules: SimRules = {
  family: "dynamixel",
  write(s, address, data) {
    const touched = s.touched(address, data.length);
    if (touched.length === 0 || touched.some(([, r]) => r.access === "R")) return 7 | this.status(s);
    if (touched.some(([, r]) => r.address < address || r.address + r.size > address + data.length)) return 5 | this.status(s);
    if (s.get("Torque_Enable") === 1 && touched.some(([n, r]) => r.area === "EEPROM" && n !== "Torque_Enable")) return 7 | this.status(s);
    if (s.has("Bus_Watchdog") && s.get("Bus_Watchdog") === -1 && touched.some(([n]) => GOALS.includes(n))) return 4 | this.status(s);
    const next = Uint8Array.from(s.mem);
    next.set(data, address);
    const val = (n: string) => {
      const r = s.model.registers[n];
      return decodeRegister(r, next.subarray(r.address, r.address + r.size), s.model.byteOrder);
    };
    if (touched.some(([n]) => n === "Goal_Position") && s.get("Operating_Mode") === 3) {
      const g = val("Goal_Position");
      if (g < s.get("Min_Position_Limit") || g > s.get("Max_Position_Limit")) return 6 | this.status(s);
    }
    // Torque stays off after a shutdown until REBOOT.
    if (s.faults && touched.some(([n]) => n === "Torque_Enable")) next.set(encodeRegister(s.model.registers.Torque_Enable, 0, s.model.byteOrder), s.model.registers.Torque_Enable.address);
    s.mem.set(next);
    return this.status(s);
  },
  status(s) {
    return s.has("Hardware_Error_Status") && s.get("Hardware_Error_Status") ? 0x80 : 0;
  },
  fault(s, f) {
    const bit = FAULT_BITS.dynamixel[f];
    if (bit === undefined) throw new Error(`Dynamixel X servos have no '${f}' hardware error (known: ${Object.keys(FAULT_BITS.dynamixel).join(", ")})`);
    s.set("Hardware_Error_Status", s.get("Hardware_Error_Status") | (1 << bit));
    if (s.get("Shutdown") & (1 << bit)) {
      s.faults |= 1 << bit;
      s.set("Torque_Enable", 0);
    }
  },
  clear() {
    // The error stays latched in Hardware Error Status until the servo reboots.
  },
};

/** Feetech STS/SMS (SCServo protocol). */
export const feetechRules: SimRules = {
  family: "feetech",
  write(s, address, data) {
    const locked = s.has("Lock") && s.get("Lock") === 1;
    for (const [name, r] of s.touched(address, data.length)) {
      if (r.access === "R" || (locked && r.area === "EEPROM")) continue;
      const from = Math.max(r.address, address);
      const to = Math.min(r.address + r.size, address + data.length);
      s.mem.set(data.subarray(from - address, to - address), from);
      if (name === "Goal_Position") {
        const lo = s.get("Min_Position_Limit");
        const hi = s.get("Max_Position_Limit");
        if (lo !== 0 || hi !== 0) s.set("Goal_Position", Math.min(hi, Math.max(lo, s.get("Goal_Position"))));
      }
      if (name === "Torque_Enable" && s.faults & s.get("Unloading_Condition")) s.set("Torque_Enable", 0);
    }
    return this.status(s);
  },
  status(s) {
    return s.has("Status") ? s.get("Status") & 0x3f : 0;
  },
  fault(s, f) {
    const bit = FAULT_BITS.feetech[f];
    if (bit === undefined) throw new Error(`Feetech STS servos have no '${f}' fault bit (known: ${Object.keys(FAULT_BITS.feetech).join(", ")})`);
    s.faults |= 1 << bit;
    s.set("Status", s.faults);
    if (s.has("Unloading_Condition") && s.get("Unloading_Condition") & (1 << bit)) s.set("Torque_Enable", 0);
  },
  clear(s) {
    s.faults = 0;
    s.set("Status", 0);
  },
};
