/**
 * A simulated servo arm for the calibration routine: each motor has an unknown mounting offset and end
 * stops; a scripted "person" moves it to the middle and then sweeps each joint end to end. Used by tests and
 * by `rlft calibrate arm --source sim` to try the flow without hardware.
 */
import type { JointPositionSource } from "./JointPositionSource.ts";

/** One simulated motor, in raw ticks. */
export interface SimMotor {
  name: string;
  /** Raw reading at the joint's mechanical middle. */
  middleRaw: number;
  /** Half the range of motion, ticks (the end stops are middleRaw ± halfRange). */
  halfRange: number;
}

/** The SO-100 follower's six joints with made-up mounting offsets (ranges roughly as on the real arm). */
export const SO100_SIM_MOTORS: SimMotor[] = [
  { name: "shoulder_pan", middleRaw: 2100, halfRange: 1200 },
  { name: "shoulder_lift", middleRaw: 1830, halfRange: 1000 },
  { name: "elbow_flex", middleRaw: 2260, halfRange: 1050 },
  { name: "wrist_flex", middleRaw: 1990, halfRange: 1100 },
  { name: "wrist_roll", middleRaw: 2048, halfRange: 1900 },
  { name: "gripper", middleRaw: 2500, halfRange: 600 },
];

/** The simulated arm. `phase` is driven by the scripted person: "middle" holds, "sweep" moves joint by joint. */
export class SimServoArm implements JointPositionSource {
  readonly motors: readonly string[];
  readonly resolution: readonly number[];
  #motors: SimMotor[];
  #phase: "rest" | "middle" | "sweep" = "rest";
  #t = 0;
  /** Reads per joint during the sweep (one end stop to the other and back). */
  readonly readsPerJoint: number;
  torqueOff = false;

  constructor(motors: SimMotor[] = SO100_SIM_MOTORS, opts: { readsPerJoint?: number } = {}) {
    this.#motors = motors;
    this.motors = motors.map((m) => m.name);
    this.resolution = motors.map(() => 4096);
    this.readsPerJoint = 4 * Math.ceil((opts.readsPerJoint ?? 40) / 4); // a multiple of 4 reaches both stops exactly
  }

  /** The person moves the arm: to the middle, or starts sweeping. */
  setPhase(phase: "middle" | "sweep"): void {
    this.#phase = phase;
    this.#t = 0;
  }

  /** True once every joint has been swept. */
  get sweepDone(): boolean {
    return this.#phase === "sweep" && this.#t >= this.readsPerJoint * this.#motors.length;
  }

  async disableTorque(): Promise<void> {
    this.torqueOff = true;
  }

  async readPositions(): Promise<number[]> {
    const t = this.#t++;
    return this.#motors.map((m, i) => {
      if (this.#phase === "rest") return m.middleRaw - 0.6 * m.halfRange; // folded, as it comes out of the box
      if (this.#phase === "middle") return m.middleRaw;
      const k = t - i * this.readsPerJoint;
      if (k < 0 || k >= this.readsPerJoint) return m.middleRaw;
      // middle → lower stop → upper stop → middle
      const s = k / this.readsPerJoint;
      const x = s < 0.25 ? -4 * s : s < 0.75 ? -1 + 4 * (s - 0.25) : 1 - 4 * (s - 0.75);
      return Math.round(m.middleRaw + x * m.halfRange);
    });
  }
}
