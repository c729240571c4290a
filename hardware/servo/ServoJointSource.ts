/**
 * A servo bus read by position, for a person moving the arm by hand: `rlft calibrate arm --source feetech|dynamixel`
 * (raw encoder ticks, calibration/JointPositionSource.ts) and the leader arm of `--operator leader`
 * (joint radians, hardware/teleop/JointPositionSource.ts). Torque goes off on open when asked (a leader arm
 * must be limp), and every read is one sync read of Present_Position with the servos' stored Homing_Offset undone.
 */
import type { JointPositionSource as CalibrationSource } from "../../calibration/JointPositionSource.ts";
import type { JointPositionSource as TeleopSource } from "../teleop/JointPositionSource.ts";
import { ticksToRadians, type JointCalibration } from "../../calibration/ArmCalibration.ts";
import type { ServoBus } from "./ServoBus.ts";
import { ServoError } from "./ServoError.ts";
import { presentToRawShifts } from "./servoCalibration.ts";

/** One joint of the source. */
export interface ServoSourceJoint {
  name: string;
  id: number;
  /** Raw ticks → rad for `read()` (the leader arm); calibration reads raw ticks and needs none. */
  calibration?: JointCalibration;
}

/** Options of {@link ServoJointSource.open}. */
export interface ServoJointSourceOptions {
  openBus: () => Promise<{ bus: ServoBus; close: () => Promise<void> }>;
  joints: readonly ServoSourceJoint[];
  /** Switch torque off on every joint at open (leader arm). */
  torqueOff?: boolean;
}

/** A position-only view of a servo bus. */
export class ServoJointSource implements CalibrationSource, TeleopSource {
  readonly motors: readonly string[];
  readonly jointNames: readonly string[];
  readonly resolution: readonly number[];
  readonly path: string;
  #bus: ServoBus;
  #close: () => Promise<void>;
  #joints: readonly ServoSourceJoint[];
  #shifts: number[];

  private constructor(bus: ServoBus, close: () => Promise<void>, joints: readonly ServoSourceJoint[], shifts: number[]) {
    this.#bus = bus;
    this.#close = close;
    this.#joints = joints;
    this.#shifts = shifts;
    this.motors = joints.map((j) => j.name);
    this.jointNames = this.motors;
    this.resolution = joints.map(() => bus.model.ticksPerRev);
    this.path = bus.port;
  }

  /** Opens the bus, pings every joint's servo (a silent one is named with the fix) and reads the stored offsets. */
  static async open(opts: ServoJointSourceOptions): Promise<ServoJointSource> {
    const ids = opts.joints.map((j) => j.id);
    const dup = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (dup.length) throw new Error(`servo ids must be unique per bus: ${dup.join(", ")} used twice — give each joint its own id`);
    const { bus, close } = await opts.openBus();
    try {
      const missing: string[] = [];
      for (const j of opts.joints) {
        try {
          await bus.ping(j.id);
        } catch (e) {
          if (e instanceof ServoError && e.code === "NO_REPLY") missing.push(`${j.name} (id ${j.id})`);
          else throw e;
        }
      }
      if (missing.length) {
        throw new ServoError("NO_REPLY", [], `${bus.protocol.name} bus ${bus.port}: ${missing.join(", ")} did not answer a ping — check power, cables, --baud and the ids (list what answers: rlft servo-scan --bus ${bus.protocol.name} --port ${bus.port})`);
      }
      const shifts = await presentToRawShifts(bus, ids);
      const src = new ServoJointSource(bus, close, opts.joints, shifts);
      if (opts.torqueOff) await src.disableTorque();
      return src;
    } catch (e) {
      await close();
      throw e;
    }
  }

  /** Raw encoder ticks per joint. */
  async readPositions(): Promise<number[]> {
    const v = await this.#bus.syncRead(this.#joints.map((j) => j.id), ["Present_Position"]);
    return v.map((r, i) => r[0] + this.#shifts[i]);
  }

  /** Joint angles (rad) under each joint's calibration. */
  async read(): Promise<number[]> {
    const raw = await this.readPositions();
    return raw.map((t, i) => {
      const c = this.#joints[i].calibration;
      if (!c) throw new Error(`${this.path}: joint ${this.#joints[i].name} has no calibration, so its angle is unknown`);
      return ticksToRadians(t, c);
    });
  }

  async disableTorque(): Promise<void> {
    await this.#bus.syncWrite("Torque_Enable", this.#joints.map((j) => ({ id: j.id, value: 0 })));
  }

  async close(): Promise<void> {
    await this.#close();
  }
}
