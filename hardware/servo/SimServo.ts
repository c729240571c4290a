/**
 * One simulated bus servo: its register memory (the model's control/memory table), its position, and the motion
 * it makes towards Goal_Position with torque on. Protocol rules (what a write may change, what a status reports)
 * live in servoSimRules.ts; the bus (packets, replies) in ServoBusSim.ts.
 */
import { decodeRegister, encodeRegister, type ServoModel } from "./ServoModel.ts";

/** One servo. */
export class SimServo {
  readonly id: number;
  readonly model: ServoModel;
  readonly mem = new Uint8Array(256);
  /** Exact position (ticks), integrated between packets. */
  pos: number;
  /** Last motion integration (s). */
  movedAt: number;
  /** Last instruction packet it received (s), for the Dynamixel Bus Watchdog. */
  heardAt: number;
  /** Silent until then while it reboots (s). */
  bootedAt = 0;
  /** A REG_WRITE waiting for ACTION. */
  registered: { address: number; data: Uint8Array } | null = null;
  /** Dynamixel: a hardware error that shut the servo down; only a reboot clears it. Feetech: the fault bits present. */
  faults = 0;

  constructor(id: number, model: ServoModel, startTicks: number, now: number) {
    this.id = id;
    this.model = model;
    this.pos = startTicks;
    this.movedAt = now;
    this.heardAt = now;
    this.reset(startTicks);
  }

  /** Power-on memory: table defaults the simulator models (EEPROM survives a reboot; see `reboot`). */
  reset(startTicks: number): void {
    const m = this.model;
    this.mem.fill(0);
    const defaults: Record<string, number> = {
      Model_Number: m.modelNumber,
      ID: this.id,
      Min_Position_Limit: 0,
      Max_Position_Limit: m.ticksPerRev - 1,
      Present_Position: startTicks,
      Goal_Position: startTicks,
      Present_Voltage: 120,
      Present_Input_Voltage: 120,
      Present_Temperature: 30,
      Firmware_Version: 52,
      Firmware_Major_Version: 3,
      Firmware_Minor_Version: 10,
      // Dynamixel X: Operating Mode 3 (position control); Shutdown 52 = overload | electrical shock | overheating
      // (e-Manual "Shutdown(63)", the default bits); Temperature Limit 80 °C; Status Return Level 2.
      Operating_Mode: m.registers.Hardware_Error_Status ? 3 : 0,
      Shutdown: 52,
      Temperature_Limit: 80,
      Status_Return_Level: 2,
      Max_Voltage_Limit: m.registers.Hardware_Error_Status ? 70 : 140,
      Min_Voltage_Limit: m.registers.Hardware_Error_Status ? 31 : 40,
      // Feetech STS: torque is released on overheat, overcurrent and overload (Unloading_Condition bits 2, 3, 5),
      // the STS3215's factory setting; Lock 1 (EEPROM write-protected) after power-on.
      Unloading_Condition: 0b101100,
      LED_Alarm_Condition: 0b101111,
      Max_Torque_Limit: 1000,
      Torque_Limit: 1000,
      Lock: 1,
    };
    for (const [name, v] of Object.entries(defaults)) if (m.registers[name]) this.set(name, v);
    this.pos = startTicks;
  }

  has(name: string): boolean {
    return name in this.model.registers;
  }

  get(name: string): number {
    const r = this.model.registers[name];
    return decodeRegister(r, this.mem.subarray(r.address, r.address + r.size), this.model.byteOrder);
  }

  set(name: string, value: number): void {
    const r = this.model.registers[name];
    if (!r) return;
    this.mem.set(encodeRegister(r, Math.round(value), this.model.byteOrder, name), r.address);
  }

  /** Names of the registers a write of `length` bytes at `address` touches. */
  touched(address: number, length: number): [string, ServoModel["registers"][string]][] {
    return Object.entries(this.model.registers).filter(([, r]) => r.address < address + length && r.address + r.size > address);
  }

  /** Integrates motion up to `now`: towards the goal at `maxSpeed` ticks/s while torque is on. */
  advance(now: number, maxSpeed: number): void {
    const dt = Math.max(0, now - this.movedAt);
    this.movedAt = now;
    let vel = 0;
    if (this.get("Torque_Enable") === 1) {
      const d = this.get("Goal_Position") - this.pos;
      const step = maxSpeed * dt;
      const moved = Math.abs(d) <= step ? d : Math.sign(d) * step;
      this.pos += moved;
      vel = dt > 0 ? moved / dt : 0;
    }
    const m = this.model;
    this.set("Present_Position", this.pos);
    this.set("Present_Velocity", vel / (m.velocityScale / ((2 * Math.PI) / m.ticksPerRev)));
    if (this.has("Moving")) this.set("Moving", Math.abs(vel) > 1 ? 1 : 0);
  }
}
