/**
 * A sim camera from calibration files, the same two JSON files `rlft calibrate intrinsics` and `rlft calibrate
 * hand-eye` write for a real camera (calibration/CalibrationFiles.ts): the intrinsics give the image model, the
 * hand-eye transform gives the pose of the optical frame on a body — eye_to_hand: the world / robot base, for a
 * fixed camera; eye_in_hand: the gripper, for a wrist camera. In the sim `parent_frame` names a MuJoCo body.
 */
import { loadHandEye, loadIntrinsics, type HandEyeFile, type IntrinsicsFile } from "../../calibration/CalibrationFiles.ts";
import type { CameraModel } from "../../calibration/CameraModel.ts";
import { matrixFromQuaternion, quaternionFromMatrix, type Pose } from "../../calibration/rotation.ts";
import type { SimCameraSpec } from "./cameraPose.ts";

/** Where a camera's calibration files are, and the frame size it should render. */
export interface SimCameraFiles {
  name: string;
  intrinsics: string;
  handEye: string;
  /** Frame size; default: the intrinsics file's own. A different size with the same aspect scales the intrinsics. */
  width?: number;
  height?: number;
}

/** Reads and checks both files of camera `f.name`; every error names the camera, the file and the fix. */
export function simCameraFromFiles(f: SimCameraFiles): SimCameraSpec {
  const wrap = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (e) {
      throw new Error(`camera ${f.name}: ${(e as Error).message}`);
    }
  };
  const intr = wrap(() => loadIntrinsics(f.intrinsics));
  const he = wrap(() => loadHandEye(f.handEye));
  return simCameraFromCalibration(f.name, intr, he, { width: f.width, height: f.height, intrinsicsPath: f.intrinsics, handEyePath: f.handEye });
}

/** The spec of camera `name` from parsed calibration files. */
export function simCameraFromCalibration(name: string, intr: IntrinsicsFile, he: HandEyeFile, o: { width?: number; height?: number; intrinsicsPath?: string; handEyePath?: string } = {}): SimCameraSpec {
  const ip = o.intrinsicsPath ?? "the intrinsics file";
  const hp = o.handEyePath ?? "the hand-eye file";
  if (intr.camera !== name) {
    throw new Error(`camera ${name}: ${ip} is the calibration of camera "${intr.camera}", not "${name}" — point camera ${name} at its own intrinsics file (or rename the camera to "${intr.camera}")`);
  }
  const cameraFrame = he.child_frame;
  if (!cameraFrame.includes(name) && cameraFrame !== "camera_optical_frame") {
    throw new Error(`camera ${name}: ${hp} places frame "${cameraFrame}", which is not camera ${name}'s optical frame — point camera ${name} at its own hand-eye file (child_frame "${name}_optical_frame")`);
  }
  const fixed = he.parent_frame === "world";
  if (fixed && he.mode === "eye_in_hand") {
    throw new Error(`camera ${name}: ${hp} is an eye_in_hand calibration but its parent_frame is "world" — an eye-in-hand camera rides on the gripper: set parent_frame to the gripper body`);
  }
  const model = scaledModel(name, intr.model, o.width ?? intr.model.width, o.height ?? intr.model.height, ip);
  const pose: Pose = { R: matrixFromQuaternion(he.transform.quaternion_xyzw), t: [...he.transform.translation] };
  return { name, model, parentBody: he.parent_frame, pose };
}

/**
 * The intrinsics for frames of width × height: a frame resized from the calibrated size (OpenCV / ROS image_proc
 * resize: f and c scale with the size, pixel centres kept). A different aspect ratio would need a crop the file does
 * not describe, so it is refused.
 */
export function scaledModel(name: string, m: CameraModel, width: number, height: number, file = "the intrinsics file"): CameraModel {
  if (width === m.width && height === m.height) return { ...m };
  const sx = width / m.width;
  const sy = height / m.height;
  if (Math.abs(sx - sy) > 0.5 / Math.min(m.width, m.height) + 1e-9) {
    throw new Error(`camera ${name}: ${file} is calibrated for ${m.width}×${m.height} frames, which cannot be resized to ${width}×${height} (another aspect ratio) — set camera ${name}'s width/height to ${m.width}×${m.height} or a multiple of it, or use a calibration made at ${width}×${height}`);
  }
  return { ...m, width, height, fx: m.fx * sx, fy: m.fy * sy, cx: (m.cx + 0.5) * sx - 0.5, cy: (m.cy + 0.5) * sy - 0.5 };
}

/** Calibration files that describe `spec` exactly (a sim camera's ground truth): what launch/cameras/ ships. */
export function calibrationFilesFor(spec: SimCameraSpec, createdAt = "2026-01-01T00:00:00Z"): { intrinsics: IntrinsicsFile; handEye: HandEyeFile } {
  const transform = { translation: spec.pose.t.map((v) => round(v, 9)), quaternion_xyzw: quaternionFromMatrix(spec.pose.R).map((v) => round(v, 12)) };
  return {
    intrinsics: {
      format: "rlft-camera-intrinsics",
      version: 1,
      camera: spec.name,
      created_at: createdAt,
      model: { ...spec.model },
      // A sim camera is exact: no views, no reprojection error.
      rms_px: 0,
      per_view_rms_px: [],
      std_dev: {},
      views: 0,
      board: { cols: 0, rows: 0, square_m: 0 },
    },
    handEye: {
      format: "rlft-hand-eye",
      version: 1,
      created_at: createdAt,
      mode: spec.parentBody === "world" ? "eye_to_hand" : "eye_in_hand",
      method: "park",
      parent_frame: spec.parentBody,
      child_frame: `${spec.name}_optical_frame`,
      transform,
      closed_form: transform,
      residuals: { mean_deg: 0, max_deg: 0, mean_mm: 0, max_mm: 0, reprojection_rms_px: null },
      stations: 0,
    },
  };
}

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
