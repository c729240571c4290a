/**
 * On-disk formats of camera and hand-eye calibrations (JSON), and the episode metadata made from every
 * calibration a launch file names, so each recorded episode says exactly which calibration it ran with.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import type { CameraModel } from "./CameraModel.ts";
import { fileSha256, loadArmCalibration } from "./ArmCalibration.ts";
import type { Pose } from "./rotation.ts";
import { quaternionFromMatrix } from "./rotation.ts";

const vec3 = z.array(z.number()).length(3);

/** A camera intrinsics file, written by `rlft calibrate intrinsics`. */
export const IntrinsicsFileSchema = z
  .object({
    format: z.literal("rlft-camera-intrinsics"),
    version: z.literal(1),
    camera: z.string(),
    created_at: z.string(),
    model: z.object({ width: z.number().int().positive(), height: z.number().int().positive(), fx: z.number(), fy: z.number(), cx: z.number(), cy: z.number(), k1: z.number(), k2: z.number(), p1: z.number(), p2: z.number() }).strict(),
    /** RMS reprojection error over all corners, pixels. */
    rms_px: z.number(),
    per_view_rms_px: z.array(z.number()),
    std_dev: z.record(z.string(), z.number()),
    views: z.number().int(),
    board: z.object({ cols: z.number().int(), rows: z.number().int(), square_m: z.number() }).strict(),
  })
  .strict();

/** An intrinsics file. */
export type IntrinsicsFile = z.infer<typeof IntrinsicsFileSchema>;

const poseJson = z.object({ translation: vec3, quaternion_xyzw: z.array(z.number()).length(4) }).strict();

/** A hand-eye file, written by `rlft calibrate hand-eye`. */
export const HandEyeFileSchema = z
  .object({
    format: z.literal("rlft-hand-eye"),
    version: z.literal(1),
    created_at: z.string(),
    mode: z.enum(["eye_in_hand", "eye_to_hand"]),
    method: z.enum(["tsai", "park"]),
    /** eye_in_hand: parent = gripper frame; eye_to_hand: parent = base frame. Child = camera optical frame. */
    parent_frame: z.string(),
    child_frame: z.string(),
    transform: poseJson,
    closed_form: poseJson,
    residuals: z.object({ mean_deg: z.number(), max_deg: z.number(), mean_mm: z.number(), max_mm: z.number(), reprojection_rms_px: z.number().nullable() }).strict(),
    stations: z.number().int(),
  })
  .strict();

/** A hand-eye file. */
export type HandEyeFile = z.infer<typeof HandEyeFileSchema>;

/** A pose as JSON (translation + ROS-order quaternion). */
export function poseToJson(p: Pose): z.infer<typeof poseJson> {
  return { translation: [...p.t], quaternion_xyzw: quaternionFromMatrix(p.R) };
}

/** An intrinsics file's camera model. */
export function cameraFromFile(f: IntrinsicsFile): CameraModel {
  return { ...f.model };
}

function readJson<T>(path: string, schema: z.ZodType<T>, what: string, fix: string): T {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`Cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}; ${fix}`);
  }
  const r = schema.safeParse(raw);
  if (!r.success) throw new Error(`${path}: not a valid ${what} (${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}); ${fix}`);
  return r.data;
}

/** Loads an intrinsics file. */
export function loadIntrinsics(path: string): IntrinsicsFile {
  return readJson(path, IntrinsicsFileSchema, "camera intrinsics file", "run `rlft calibrate intrinsics` to make one");
}

/** Loads a hand-eye file. */
export function loadHandEye(path: string): HandEyeFile {
  return readJson(path, HandEyeFileSchema, "hand-eye file", "run `rlft calibrate hand-eye` to make one");
}

/** Calibration files named by a launch file. */
export interface CalibrationPaths {
  arm?: string;
  camera?: string;
  hand_eye?: string;
}

/**
 * Episode metadata for the named calibration files: each validated, recorded whole (compact JSON) with its
 * sha256 and path, under `calibration_<kind>`. Throws with the file and fix when one is missing or invalid, so a
 * session never starts with a calibration it cannot record.
 */
export function calibrationMetadata(paths: CalibrationPaths, robot?: string): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (kind: string, path: string, value: unknown) => {
    out[`calibration_${kind}`] = JSON.stringify(value);
    out[`calibration_${kind}_sha256`] = fileSha256(path);
    out[`calibration_${kind}_path`] = path;
  };
  if (paths.arm) add("arm", paths.arm, loadArmCalibration(paths.arm, robot));
  if (paths.camera) add("camera", paths.camera, loadIntrinsics(paths.camera));
  if (paths.hand_eye) add("hand_eye", paths.hand_eye, loadHandEye(paths.hand_eye));
  return out;
}
