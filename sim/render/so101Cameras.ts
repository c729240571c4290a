/**
 * The SO-101's two sim cameras, as the calibration files in launch/cameras/ describe them:
 * - front: fixed, 0.5 m in front of the arm's base and 0.36 m up, looking down at the workspace (vertical FOV 55°);
 * - wrist: Menagerie's `wrist_cam` on the `camera_mount` body (pose unchanged), expressed on the `gripper` body as an
 *   eye-in-hand calibration would be, with the sensor Menagerie gives it (focal 3.6 mm, 5.76 × 3.24 mm, 1920 × 1080)
 *   centre-cropped to the square frame.
 * - front_wide (files so101_front_wide.*, the camera is still named "front"; launch/sim_so101_wide.yaml): the
 *   alternative front camera of docs/results.md "A front camera that frames the workspace", 144 × 96.
 * Run `node --import tsx sim/render/so101Cameras.ts <dir>` to write the files (84 × 84, front_wide 144 × 96); a test
 * checks that the shipped ones match.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { MainModule, MjData, MjModel } from "mujoco-js";
import type { SimCameraSpec } from "./cameraPose.ts";
import { lookAtPose, pinholeModel, specFromMujocoCamera } from "./mujocoCamera.ts";
import { calibrationFilesFor, simCameraFromFiles } from "./cameraCalibration.ts";

/** A fixed camera: where it stands and looks (world frame: arm base at the origin, x forward, z up), and its frame. */
export interface FixedView {
  position: readonly number[];
  target: readonly number[];
  fovyDeg: number;
  width: number;
  height: number;
}

/** The front camera launch/sim_so101.yaml uses. */
export const SO101_FRONT_VIEW: FixedView = { position: [0.5, 0, 0.36], target: [0.2, 0, 0.0], fovyDeg: 55, width: 84, height: 84 };

/**
 * The alternative front camera (launch/sim_so101_wide.yaml). The cube starts and the targets lie across a region
 * about 0.6 m wide and 0.35 m deep (sim/so101/sampleSo101Episode.ts); this 3:2 frame, looking down more steeply, shows
 * the cube ~3× as large as SO101_FRONT_VIEW does with the same targets wholly in view (bench/pixdiag/frontView.ts),
 * for twice the pixels. Its pixel BC did no better in closed loop (docs/results.md).
 */
export const SO101_FRONT_WIDE_VIEW: FixedView = { position: [0.5, 0, 0.42], target: [0.2, 0, 0.0], fovyDeg: 35.5, width: 144, height: 96 };

/** The spec of fixed camera `name` looking as `view` says. */
export function fixedCameraSpec(name: string, view: FixedView): SimCameraSpec {
  return { name, model: pinholeModel(view.width, view.height, view.fovyDeg), parentBody: "world", pose: lookAtPose(view.position, view.target) };
}

/** The front camera (its own frame size) and the wrist camera (wristSize²), from a forwarded SO-101 model (any scene that includes so101.xml). */
export function so101CameraSpecs(mj: MainModule, model: MjModel, data: MjData, wristSize = 84): SimCameraSpec[] {
  const front = fixedCameraSpec("front", SO101_FRONT_VIEW);
  const wrist = specFromMujocoCamera(mj, model, data, "wrist_cam", { name: "wrist", parentBody: "gripper", width: wristSize, height: wristSize });
  return [front, wrist];
}

/** The calibration file paths of SO-101 camera `name` in `dir` (`stem`: the files' own name, e.g. front_wide). */
export function so101CalibrationPaths(dir: string, name: string, stem = name): { intrinsics: string; handEye: string } {
  return { intrinsics: join(dir, `so101_${stem}.intrinsics.json`), handEye: join(dir, `so101_${stem}.hand_eye.json`) };
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

/** Writes the cameras' calibration files into `dir` (`stems`: file names other than the camera's, by camera index). */
export function writeSo101Calibrations(specs: readonly SimCameraSpec[], dir: string, stems: readonly (string | undefined)[] = []): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const [i, spec] of specs.entries()) {
    const files = calibrationFilesFor(spec);
    const p = so101CalibrationPaths(dir, spec.name, stems[i]);
    writeFileSync(p.intrinsics, JSON.stringify(files.intrinsics, null, 2) + "\n");
    writeFileSync(p.handEye, JSON.stringify(files.handEye, null, 2) + "\n");
    written.push(p.intrinsics, p.handEye);
  }
  return written;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { loadSo101RenderScene } = await import("./so101RenderScene.ts");
  const s = await loadSo101RenderScene();
  const specs = [...so101CameraSpecs(s.mj, s.model, s.data), fixedCameraSpec("front", SO101_FRONT_WIDE_VIEW)];
  for (const f of writeSo101Calibrations(specs, process.argv[2] ?? "launch/cameras", [undefined, undefined, "front_wide"])) console.log(`wrote ${f}`);
  s.close();
}
