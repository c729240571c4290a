/**
 * Bounds on the launch file's physical settings, each named after what it protects (issue 24 item 9:
 * `safety.max_step: 1e308` and `watchdog_sec: 1e300` were accepted and switched the step clamp and the watchdog off
 * in effect). A bound is generous for every arm rlft drives and tight enough that the protection it names still acts;
 * a value outside it is refused at start-up with the file, the line, the bound and the reason.
 *
 * Reference speeds: UR e-Series joints 180 °/s = π rad/s, UR5e base/shoulder/elbow likewise (UR5e technical
 * specifications); Feetech STS3215 0.222 s/60° at 12 V ≈ 4.7 rad/s no-load (STS3215 datasheet); Dynamixel XL330-M288
 * 103 rpm ≈ 10.8 rad/s no-load (ROBOTIS e-Manual).
 */
import { z } from "zod";

/** One bound: the range, its unit, and what it protects (used in the error message). */
export interface PhysicalBound {
  /** Lower end: exclusive when 0 (any positive value), inclusive otherwise. */
  min: number;
  max: number;
  unit: string;
  protects: string;
}

/** Every bound of the launch schema, by the setting it bounds. */
export const PHYSICAL_BOUNDS = {
  step_clamp: {
    min: 0,
    max: 1,
    unit: "rad (gripper: m) per tick",
    protects: "the step clamp, the largest target change one control tick may command; beyond 1 rad a policy glitch swings a joint across most of its range in one tick",
  },
  command_watchdog: {
    min: 0,
    max: 2,
    unit: "s",
    protects: "the command watchdog, how long the arm follows a stale target after commands stop before it holds the measured position",
  },
  joint_velocity: {
    min: 0,
    max: 12,
    unit: "rad/s",
    protects: "the joint velocity limit; 12 rad/s is beyond what a joint under a learning policy should reach on any arm rlft drives (UR e-Series π rad/s, STS3215 ≈ 4.7 rad/s, XL330-M288 ≈ 10.8 rad/s no-load), so more turns the limit off",
  },
  joint_acceleration: {
    min: 0,
    max: 200,
    unit: "rad/s²",
    protects: "the joint acceleration limit; more than any servo or UR joint reaches, so more would turn the limit off",
  },
  control_rate: {
    min: 1,
    max: 1000,
    unit: "Hz",
    protects: "the control loop: below 1 Hz the step clamp, the watchdog and the e-stop act once a second at most; above 1 kHz no driver keeps up",
  },
  joint_range: {
    min: -6.3,
    max: 6.3,
    unit: "rad (prismatic joints: m)",
    protects: "the joint limits commands are clamped to; one turn (2π ≈ 6.28 rad) holds every joint rlft drives (UR e-Series ±2π, a servo's full turn), so a wider limit clamps nothing and a command beyond the arm's travel reaches the driver",
  },
  homing_speed: {
    min: 0,
    max: 2,
    unit: "rad/s",
    protects: "the unsupervised motion to the home pose before each episode",
  },
  homing_tolerance: {
    min: 0,
    max: 0.5,
    unit: "rad",
    protects: "the check that the arm reached home before an episode starts",
  },
  frame_age: {
    min: 0,
    max: 2,
    unit: "s",
    protects: "the stale-camera check of VLA policies: an older frame counts as missing and the arm holds",
  },
  reading_age: {
    min: 0,
    max: 2,
    unit: "s",
    protects: "the stale-reading check: an older joint reading fails, the state stops and the watchdog holds the arm",
  },
  controller_watchdog: {
    min: 0,
    max: 1,
    unit: "s",
    protects: "the watchdog in the UR script, which stops the arm when no fresh target arrives",
  },
} as const satisfies Record<string, PhysicalBound>;

/** A number inside `PHYSICAL_BOUNDS[name]`; the error names the bound, its unit, what it protects and the value. */
export function bounded(name: keyof typeof PHYSICAL_BOUNDS): z.ZodNumber {
  const b: PhysicalBound = PHYSICAL_BOUNDS[name];
  const range = b.min === 0 ? `in (0, ${b.max}] ${b.unit}` : `in [${b.min}, ${b.max}] ${b.unit}`;
  const error = (iss: { input?: unknown }) => `${String(iss.input)} is outside the bound ${name} (${range}) that protects ${b.protects}`;
  return (b.min === 0 ? z.number().gt(0, { error }) : z.number().min(b.min, { error })).max(b.max, { error });
}

/** One bounded value for every joint, or one per joint. */
export function perJoint(name: keyof typeof PHYSICAL_BOUNDS): z.ZodUnion<[z.ZodNumber, z.ZodArray<z.ZodNumber>]> {
  return z.union([bounded(name), z.array(bounded(name))]);
}
