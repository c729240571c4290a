/**
 * Test helper: the SO-101 push_cube scene seen by two sim cameras of different sizes (front 40×40 over the workspace,
 * wrist 32×32 on the hand), for tests that record episodes with frames and train pixel policies on them.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { calibrationFilesFor } from "../../sim/render/cameraCalibration.ts";
import { lookAtPose, pinholeModel } from "../../sim/render/mujocoCamera.ts";

/** Writes the two cameras' intrinsics and hand-eye files under `dir`/cal; returns that directory. */
export function cameraFiles(dir: string): string {
  const cal = join(dir, "cal");
  mkdirSync(cal, { recursive: true });
  const specs = [
    { name: "front", model: pinholeModel(40, 40, 45), parentBody: "world", pose: lookAtPose([0.62, 0, 0.45], [0.14, 0, 0]) },
    { name: "wrist", model: pinholeModel(32, 32, 70), parentBody: "hand", pose: { R: [[0, 1, 0], [-1, 0, 0], [0, 0, 1]], t: [0.03, 0, 0.02] } },
  ];
  for (const s of specs) {
    const f = calibrationFilesFor(s);
    writeFileSync(join(cal, `${s.name}.intrinsics.json`), JSON.stringify(f.intrinsics));
    writeFileSync(join(cal, `${s.name}.hand_eye.json`), JSON.stringify(f.handEye));
  }
  return cal;
}

/** A launch file recording scripted push_cube episodes of `maxSteps` ticks with both cameras at 10 Hz (calibration in `cal`). */
export function pixelDemoLaunch(cal: string, maxSteps = 15): string {
  return `task: push_cube
control_hz: 10
actor: {kind: expert, expert_quality: 1}
episodes: {max_steps: ${maxSteps}}
camera:
  rate_hz: 10
  depth: false
  cameras:
    - {name: front, intrinsics: ${cal}/front.intrinsics.json, hand_eye: ${cal}/front.hand_eye.json}
    - {name: wrist, intrinsics: ${cal}/wrist.intrinsics.json, hand_eye: ${cal}/wrist.hand_eye.json}
`;
}
