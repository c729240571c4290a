/**
 * Maps teleop samples to the robot's action space (absolute joint targets in command order):
 * twist devices move an end-effector target through the arm's kinematics, the leader arm maps joint to
 * joint through a per-joint calibration. The target starts from the measured joints at takeover, so the
 * operator's first command equals where the arm is (no jump); every result is clamped to the joint limits.
 */
import { clamp } from "./shaping.ts";
import type { TeleopSample } from "./TeleopDevice.ts";

/** The arm's kinematics as the mapper needs it (sim/kinematics.ts provides it for rlft_arm5). */
export interface TeleopKinematics {
  /** Tool position for joints q (base frame, metres). */
  forward(q: readonly number[]): [number, number, number];
  /** Tool pitch of joints q (radians; π = pointing down). */
  toolPitch(q: readonly number[]): number;
  /** Joints (arm joints only) reaching p with the tool at `pitch`; reachable false when out of reach. */
  inverse(p: readonly number[], pitch: number): { q: number[]; reachable: boolean };
}

/** Options of {@link TeleopMapper}. */
export interface TeleopMapperOptions {
  jointLower: readonly number[];
  jointUpper: readonly number[];
  /** Index of the gripper in the command (default: the last joint). */
  gripperIndex?: number;
  kinematics?: TeleopKinematics;
  /** Leader arm: follower = offset + scale × leader, per joint (default identity). */
  jointScale?: readonly number[];
  jointOffset?: readonly number[];
  /** A twist step whose IK solution moves any joint further than this (rad) is refused (branch flip, singularity). */
  maxJointJump?: number;
}

/** The mapper; `begin` at takeover, `apply` each tick while in control. */
export class TeleopMapper {
  readonly #o: TeleopMapperOptions;
  readonly #gi: number;
  #target: number[] | null = null;
  /** Ticks on which the twist target was out of reach (the target then stays where it was). */
  unreachable = 0;

  constructor(opts: TeleopMapperOptions) {
    if (opts.jointLower.length !== opts.jointUpper.length) throw new Error("TeleopMapper: jointLower and jointUpper differ in length");
    this.#o = opts;
    this.#gi = opts.gripperIndex ?? opts.jointLower.length - 1;
  }

  /** Starts from the measured joints (takeover). */
  begin(measured: readonly number[]): void {
    this.#target = [...measured];
  }

  /** The current target, or null before `begin`. */
  get target(): readonly number[] | null {
    return this.#target;
  }

  /** Applies one sample; returns the new joint target. */
  apply(s: TeleopSample): number[] {
    if (!this.#target) throw new Error("TeleopMapper.apply: begin(measured) first");
    const lo = this.#o.jointLower;
    const hi = this.#o.jointUpper;
    let t = [...this.#target];
    if (s.joints) {
      const scale = this.#o.jointScale;
      const off = this.#o.jointOffset;
      t = t.map((_, i) => (s.joints![i] === undefined ? t[i] : (off?.[i] ?? 0) + (scale?.[i] ?? 1) * s.joints![i]));
    } else if (this.#o.kinematics && (s.linear.some((x) => x !== 0) || s.angular[1] !== 0)) {
      const k = this.#o.kinematics;
      const p = k.forward(t);
      const goal = [p[0] + s.linear[0], p[1] + s.linear[1], p[2] + s.linear[2]];
      const sol = k.inverse(goal, k.toolPitch(t) + s.angular[1]);
      const jump = Math.max(...sol.q.map((q, i) => Math.abs(q - t[i])));
      if (sol.reachable && jump <= (this.#o.maxJointJump ?? 0.3)) sol.q.forEach((q, i) => (t[i] = q));
      else this.unreachable++;
    }
    if (s.gripper !== null && !s.joints) t[this.#gi] = lo[this.#gi] + clamp(s.gripper, 0, 1) * (hi[this.#gi] - lo[this.#gi]);
    t = t.map((x, i) => clamp(x, lo[i], hi[i]));
    this.#target = t;
    return [...t];
  }
}
