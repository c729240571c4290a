/**
 * Servo-arm calibration data: per joint a homing offset (raw ticks at the middle pose minus half a turn,
 * so the middle of the range reads 0 rad) and the range seen while the joint was moved end to end — the
 * LeRobot "middle, then full range" routine (lerobot `MotorsBus.set_half_turn_homings` and
 * `record_ranges_of_motion`). The file is JSON, one per robot, with LeRobot's field names so a LeRobot
 * calibration file loads as is.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname } from "node:path";
import { z } from "zod";
import { PHYSICAL_BOUNDS } from "../contracts/physicalBounds.ts";

/** One joint's calibration, in raw encoder ticks. */
export const JointCalibrationSchema = z
  .object({
    /** Servo id on the bus (informational; the driver's config owns the mapping). */
    id: z.number().int().min(0).optional(),
    /** 1: the joint's positive direction is the motor's negative one. */
    drive_mode: z.union([z.literal(0), z.literal(1)]).default(0),
    /** Subtracted from raw ticks (Feetech: written to Homing_Offset, SMS/STS manual addr 31). */
    homing_offset: z.number().int(),
    /** Lowest and highest homed position seen in the full-range sweep, ticks. */
    range_min: z.number().int(),
    range_max: z.number().int(),
    /** Encoder ticks per revolution. */
    resolution: z.number().int().positive().default(4096),
  })
  .strict()
  .refine((j) => j.range_max > j.range_min, { message: "range_max must be greater than range_min" })
  .superRefine((j, ctx) => {
    // No joint of a servo arm travels more than one turn (a single-turn encoder reads 0..resolution-1, a full-turn
    // joint is calibrated 0..resolution-1); a wider range is a wrapped or glitched sweep or an edited file, and its
    // limits would clamp nothing.
    const span = j.range_max - j.range_min;
    if (span > j.resolution) {
      ctx.addIssue({ code: "custom", path: ["range_max"], message: `range_min ${j.range_min} .. range_max ${j.range_max} spans ${span} ticks, wider than one turn (${j.resolution} ticks = 2π rad): no joint travels that far, so the sweep or the file is wrong` });
      return;
    }
    const bound = PHYSICAL_BOUNDS.joint_range;
    const [lo, hi] = jointLimits(j);
    if (lo < bound.min || hi > bound.max) {
      ctx.addIssue({ code: "custom", path: ["range_min"], message: `the calibrated range is [${lo.toFixed(3)}, ${hi.toFixed(3)}] rad, outside the bound joint_range (in [${bound.min}, ${bound.max}] ${bound.unit}) that protects ${bound.protects}` });
    }
  });

/** A joint's calibration. */
export type JointCalibration = z.infer<typeof JointCalibrationSchema>;

/** The calibration file of one robot. */
export const ArmCalibrationSchema = z
  .object({
    format: z.literal("rlft-arm-calibration"),
    version: z.literal(1),
    /** The robot this belongs to (e.g. so100_follower_left); recorded into every episode. */
    robot: z.string().min(1),
    /** ISO time of the calibration. */
    created_at: z.string(),
    joints: z.record(z.string(), JointCalibrationSchema),
  })
  .strict();

/** A robot's calibration. */
export type ArmCalibration = z.infer<typeof ArmCalibrationSchema>;

/** A calibration file that cannot be used; names the file and the fix. */
export class ArmCalibrationError extends Error {
  readonly code = "RLFT_ARM_CALIBRATION_INVALID";
}

/** Homing offsets that make the current (middle) pose read half a turn, i.e. 0 rad. */
export function halfTurnHomings(raw: readonly number[], resolution: readonly number[]): number[] {
  return raw.map((r, i) => Math.round(r) - Math.floor((resolution[i] - 1) / 2));
}

/** Raw ticks → joint angle in radians (0 at the middle pose) under a joint's calibration. */
export function ticksToRadians(raw: number, j: JointCalibration): number {
  const half = Math.floor((j.resolution - 1) / 2);
  const rad = ((raw - j.homing_offset - half) * 2 * Math.PI) / j.resolution;
  return j.drive_mode === 1 ? -rad : rad;
}

/** Joint angle in radians → raw ticks, clamped to the calibrated range (a target beyond it is never sent). */
export function radiansToTicks(rad: number, j: JointCalibration): number {
  const half = Math.floor((j.resolution - 1) / 2);
  const signed = j.drive_mode === 1 ? -rad : rad;
  const homed = Math.round((signed * j.resolution) / (2 * Math.PI)) + half;
  return Math.min(j.range_max, Math.max(j.range_min, homed)) + j.homing_offset;
}

/** The calibrated range as joint limits in radians, [lower, upper]. */
export function jointLimits(j: JointCalibration): [number, number] {
  const a = ticksToRadians(j.range_min + j.homing_offset, j);
  const b = ticksToRadians(j.range_max + j.homing_offset, j);
  return [Math.min(a, b), Math.max(a, b)];
}

/** Parses calibration JSON: an rlft file, or a LeRobot file ({joint: {id, drive_mode, homing_offset, range_min, range_max}}). */
export function parseArmCalibration(text: string, file = "<calibration>", robot?: string): ArmCalibration {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ArmCalibrationError(`${file}: not JSON (${(e as Error).message}); run \`rlft calibrate arm\` to make a new one`);
  }
  const isRlft = typeof raw === "object" && raw !== null && (raw as { format?: unknown }).format === "rlft-arm-calibration";
  const candidate = isRlft ? raw : { format: "rlft-arm-calibration", version: 1, robot: robot ?? "unknown", created_at: "imported from LeRobot", joints: raw };
  const res = ArmCalibrationSchema.safeParse(candidate);
  if (!res.success) {
    const issues = res.error.issues.map((i) => `${i.path.join(".") || "(top level)"}: ${i.message}`).join("; ");
    throw new ArmCalibrationError(`${file}: invalid arm calibration (${issues}); run \`rlft calibrate arm\` again`);
  }
  return res.data;
}

/** Reads a calibration file; errors name the file and the fix. */
export function loadArmCalibration(path: string, robot?: string): ArmCalibration {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ArmCalibrationError(`Cannot read arm calibration ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}; run \`rlft calibrate arm --robot <name> --out ${path}\` first`);
  }
  return parseArmCalibration(text, path, robot);
}

/** Writes a calibration file atomically (write + rename), so a crash never leaves half a file. */
export function saveArmCalibration(path: string, cal: ArmCalibration): void {
  ArmCalibrationSchema.parse(cal);
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(cal, null, 2)}\n`);
  renameSync(tmp, path);
}

/** sha256 of a file's bytes: recorded next to the calibration so an episode names exactly which one it used. */
export function fileSha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}
