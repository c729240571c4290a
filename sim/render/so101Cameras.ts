/**
 * The SO-101's two sim cameras, as the calibration files in launch/cameras/ describe them:
 * - front: fixed, 0.5 m in front of the arm's base and 0.42 m up, looking down at (0.2, 0, 0) (vertical FOV 35.5°,
 *   144 × 96: the workspace crop of a 3:2 frame; docs/results.md "A front camera that frames the workspace");
 * - wrist: Menagerie's `wrist_cam` on the `camera_mount` body (pose unchanged), expressed on the `gripper` body as an
 *   eye-in-hand calibration would be, with the sensor Menagerie gives it (focal 3.6 mm, 5.76 × 3.24 mm, 1920 × 1080)
 *   centre-cropped to the square frame.
 * Run `node --import tsx sim/render/so101Cameras.ts <dir>` to write the files (front 144 × 96, wrist 84 × 84); a test
 * checks that the shipped ones match.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { MainModule, MjData, MjModel } from "mujoco-js";
import type { SimCameraSpec } from "./cameraPose.ts";
import { lookAtPose, pinholeModel, specFromMujocoCamera } from "./mujocoCamera.ts";
import { calibrationFilesFor, simCameraFromFiles } from "./cameraCalibration.ts";

/**
 * Where the front camera stands and looks (world frame: arm base at the origin, x forward, z up), and its frame. The
 * cube starts and the targets lie across a region about 0.6 m wide and 0.35 m deep (sim/so101/sampleSo101Episode.ts);
 * a wide frame, looking down more steeply than the first camera (0.36 m up, 55°, 84 × 84), shows the cube ~3× as
 * large while keeping ~97% of the targets wholly in view (bench/pixdiag/frontView.ts).
 */
export const SO101_FRONT_VIEW = { position: [0.5, 0, 0.42], target: [0.2, 0, 0.0], fovyDeg: 35.5, width: 144, height: 96 } as const;

/** The front camera (its own frame size) and the wrist camera (wristSize²), from a forwarded SO-101 model (any scene that includes so101.xml). */
export function so101CameraSpecs(mj: MainModule, model: MjModel, data: MjData, wristSize = 84): SimCameraSpec[] {
  const v = SO101_FRONT_VIEW;
  const front: SimCameraSpec = { name: "front", model: pinholeModel(v.width, v.height, v.fovyDeg), parentBody: "world", pose: lookAtPose(v.position, v.target) };
  const wrist = specFromMujocoCamera(mj, model, data, "wrist_cam", { name: "wrist", parentBody: "gripper", width: wristSize, height: wristSize });
  return [front, wrist];
}

/** The calibration file paths of SO-101 camera `name` in `dir`. */
export function so101CalibrationPaths(dir: string, name: string): { intrinsics: string; handEye: string } {
  return { intrinsics: join(dir, `so101_${name}.intrinsics.json`), handEye: join(dir, `so101_${name}.hand_eye.json`) };
}

/**
 * Camera `name` from its calibration files in `dir`, its frames resized by `scale` (1: the calibrated size; the
 * aspect ratio is kept, so benches can render every camera "at 1.5×" whatever its own frame size).
 */
export function so101CameraFromFiles(dir: string, name: string, scale = 1): SimCameraSpec {
  const paths = so101CalibrationPaths(dir, name);
  const spec = simCameraFromFiles({ name, ...paths });
  if (scale === 1) return spec;
  return simCameraFromFiles({ name, ...paths, width: Math.round(spec.model.width * scale), height: Math.round(spec.model.height * scale) });
}

/** Writes both cameras' calibration files into `dir`. */
export function writeSo101Calibrations(specs: readonly SimCameraSpec[], dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const spec of specs) {
    const files = calibrationFilesFor(spec);
    const p = so101CalibrationPaths(dir, spec.name);
    writeFileSync(p.intrinsics, JSON.stringify(files.intrinsics, null, 2) + "\n");
    writeFileSync(p.handEye, JSON.stringify(files.handEye, null, 2) + "\n");
    written.push(p.intrinsics, p.handEye);
  }
  return written;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { loadSo101RenderScene } = await import("./so101RenderScene.ts");
  const s = await loadSo101RenderScene();
  for (const f of writeSo101Calibrations(so101CameraSpecs(s.mj, s.model, s.data), process.argv[2] ?? "launch/cameras")) console.log(`wrote ${f}`);
  s.close();
}
