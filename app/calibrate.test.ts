import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { handEyeCommand, intrinsicsCommand, renderBoardCommand, boardOption } from "./calibrate.ts";
import { loadArmCalibration } from "../calibration/ArmCalibration.ts";
import { matrixFromQuaternion, rotationAngle } from "../calibration/rotation.ts";

const tmp = mkdtempSync(join(tmpdir(), "rlft-calib-cli-"));
const board = boardOption("9x6", 0.025);

test("calibrate render-board → intrinsics → hand-eye (eye-to-hand) on rendered images recovers the ground truth", () => {
  const dir = join(tmp, "he");
  const lines: string[] = [];
  const say = (l: string) => void lines.push(l);
  renderBoardCommand({ out: dir, views: 12, seed: 3, handEye: "eye_to_hand", say });
  const cam = intrinsicsCommand({ images: [dir], board, out: join(dir, "cam.json"), say });
  assert.equal(cam.views, 12);
  assert.ok(Math.abs(cam.model.fx - 600) / 600 < 0.005, `fx ${cam.model.fx}`);
  assert.ok(cam.rms_px < 0.3);
  assert.ok(lines.some((l) => /reprojection error: RMS \d\.\d{3} px over 12 views/.test(l)));
  const he = handEyeCommand({ stations: join(dir, "stations.json"), intrinsics: join(dir, "cam.json"), board, mode: "eye_to_hand", method: "tsai", out: join(dir, "he.json"), say });
  const truth = JSON.parse(readFileSync(join(dir, "truth.json"), "utf8"));
  const deg = (rotationAngle(matrixFromQuaternion(he.transform.quaternion_xyzw), matrixFromQuaternion(truth.X.quaternion_xyzw)) * 180) / Math.PI;
  const mm = 1000 * Math.hypot(...he.transform.translation.map((v: number, i: number) => v - truth.X.translation[i]));
  console.log(`cli hand-eye from rendered images: ${deg.toFixed(3)}°, ${mm.toFixed(2)} mm; ${lines.find((l) => l.startsWith("residuals"))}`);
  assert.ok(deg < 0.2 && mm < 2, `${deg}° ${mm} mm`);
  assert.equal(he.parent_frame, "base_link");
  assert.deepEqual(JSON.parse(readFileSync(join(dir, "he.json"), "utf8")), he);
});

test("calibrate: bad input names the thing and the fix", () => {
  const empty = join(tmp, "empty");
  mkdirSync(empty, { recursive: true });
  assert.throws(() => intrinsicsCommand({ images: [empty], board, out: join(tmp, "x.json"), say: () => undefined }), /No images \(png, jpg, bmp, pgm, tiff\) in/);
  assert.throws(() => intrinsicsCommand({ images: [join(tmp, "nope")], board, out: join(tmp, "x.json") }), /No such image or directory/);
  assert.throws(() => boardOption("9-6", 0.025), /expected inner corners as COLSxROWS, e.g. 9x6/);
  assert.throws(() => boardOption("9x6", 25), /metres, e.g. 0.025/);
  const dir = join(tmp, "few");
  renderBoardCommand({ out: dir, views: 3, seed: 1, say: () => undefined });
  // A wrong board size: the board is not found in any image.
  assert.throws(() => intrinsicsCommand({ images: [dir], board: boardOption("7x5", 0.025), out: join(tmp, "x.json"), say: () => undefined }), /found in 0 of 3 images.*Check --board/);
  writeFileSync(join(tmp, "stations.json"), JSON.stringify({ format: "rlft-hand-eye-stations", version: 1, stations: [] }));
  assert.throws(() => handEyeCommand({ stations: join(tmp, "stations.json"), intrinsics: "x", board, mode: "eye_in_hand", method: "park", out: "y" }), /not a valid stations file \(stations: .*/);
});

test("rlft calibrate arm --source sim --yes writes a calibration file (the real command line)", () => {
  const out = join(tmp, "sim_arm.json");
  const r = spawnSync(process.execPath, ["bin/rlft.js", "calibrate", "arm", "--robot", "sim_arm", "--source", "sim", "--yes", "--out", out], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /Move sim_arm to the MIDDLE/);
  assert.match(r.stdout, /wrist_roll\s+homing_offset\s+1\s+range 0\.\.4095/);
  const cal = loadArmCalibration(out);
  assert.equal(cal.robot, "sim_arm");
  assert.equal(Object.keys(cal.joints).length, 6);
});
