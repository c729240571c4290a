/** Shared pieces of the SO-101 scripted motions: the plan a phase machine hands the expert, tuning, angle helpers. */
import type { EePose } from "./so101Kinematics.ts";
import { SO101_LOW_Z, SO101_TRAVEL_Z } from "./sampleSo101Episode.ts";

export { stepTowards } from "../ScriptedExpert.ts";

/** One tick's intent: where the gripperframe site should go, how the jaws turn, how fast, and the gripper. */
export interface MotionPlan {
  site: number[];
  /** Yaw of the jaw axis for a vertical gripper; null: position only (the wrist roll stays). */
  yaw: number | null;
  /** Cartesian speed (m/s). */
  speed: number;
  /** Gripper target (rad). */
  gripper: number;
  /** Travel moves may tilt the gripper where a vertical one cannot reach (near the base, up high); work moves may not. */
  loose?: boolean;
}

/** Tuning, in metres, radians and seconds. */
export const SO101_MOTION = {
  /** Site height while travelling: the jaw tips ~2 cm over the 3 cm cube (a vertical gripper tops out near 8 cm). */
  zTravel: SO101_TRAVEL_Z,
  /** Site height while pushing or grasping: the tips ~1 cm over the table, on the cube's lower half. */
  zLow: SO101_LOW_Z,
  travelSpeed: 0.15,
  descendSpeed: 0.08,
  pushSpeed: 0.05,
  /** Fastest joint motion (1.8 rad/s: under the STS3215's ~4.7 rad/s no-load speed and sim_so101.yaml's 2 rad/s step limit). */
  maxJointSpeed: 1.8,
  gripperSpeed: 1.8,
  yawSpeed: 2.5,
  /** The closed jaws push as a paddle centred 1 cm along −z of the site (fixed jaw −2 cm, moving jaw ~0). */
  paddleOffset: -0.01,
  /** Half thickness of the closed jaw tips across the push (their flat sides push). */
  paddleHalf: 0.005,
  /** Closed for pushing (rad). */
  pushGrip: -0.1,
} as const;

/** Yaw of the jaw axis (site z) of a pose, from world x. */
export function jawYaw(p: EePose): number {
  return Math.atan2(p.R[1][2], p.R[0][2]);
}

/** Where the shoulder_pan axis stands on the table (so101.xml: the shoulder body sits 3.9 cm in front of the base origin). */
const PAN_AXIS_X = 0.0388;

/**
 * The jaw yaw among `base + n·period` to use over the points `at` (the object, and where it goes): the one closest
 * to `current` while it needs little wrist roll everywhere, else the one whose worst roll is cheapest. For a
 * vertical gripper roll ≈ yaw + pan, with pan ≈ −(azimuth of the point seen from the pan axis). A positive roll
 * beyond ~0.7 rad is dear: with the arm folded near the base the camera mount meets the upper arm there (the arm
 * stalls at roll ≈ 0.8), while negative rolls are free to the joint limit.
 */
export function chooseYaw(base: number, period: number, current: number, at: readonly (readonly number[])[]): number {
  const cost = (yaw: number): number =>
    Math.max(
      ...at.map((p) => {
        const roll = wrapAngle(yaw - Math.atan2(p[1], p[0] - PAN_AXIS_X));
        return roll > 0.5 ? 1 + roll : Math.abs(roll);
      }),
    );
  const near = nearestYaw(base, current, period);
  if (cost(near) < 0.5) return near;
  let best = near;
  for (let n = -4; n <= 4; n++) {
    const c = near + n * period;
    if (cost(c) < cost(best) - 1e-9 && Math.abs(c - current) <= Math.PI + 1e-9) best = c;
  }
  return best;
}

/** The yaw among `base + n·period` closest to `current`. */
export function nearestYaw(base: number, current: number, period: number): number {
  return current + wrapPeriod(base - current, period);
}

export function wrapPeriod(a: number, period: number): number {
  return a - period * Math.round(a / period);
}

/** An angle folded into [−π, π). */
export function wrapAngle(a: number): number {
  return wrapPeriod(a, 2 * Math.PI);
}

/** v clamped to [−m, m]. */
export function clampAbs(v: number, m: number): number {
  return Math.max(-m, Math.min(m, v));
}
