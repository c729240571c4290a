/** The sim cameras: what they see, calibration files as their configuration, lens distortion, domain randomisation. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ArmSim } from "../ArmSim.ts";
import { loadMujoco } from "../loadMujoco.ts";
import { SimCameras } from "./SimCameras.ts";
import { SimCameraSources } from "./SimCameraSources.ts";
import { lookAtPose, pinholeModel } from "./mujocoCamera.ts";
import { loadSceneWithAssets } from "./loadScene.ts";
import { loadSo101RenderScene } from "./so101RenderScene.ts";
import { fixedCameraSpec, so101CalibrationPaths, so101CameraSpecs, SO101_FRONT_WIDE_VIEW } from "./so101Cameras.ts";
import { calibrationFilesFor, simCameraFromFiles } from "./cameraCalibration.ts";
import { project } from "../../calibration/CameraModel.ts";
import { defaultFrontCamera } from "../../launch/cameraNodes.ts";
import type { SimCameraSpec } from "./cameraPose.ts";

const CAMERAS_DIR = fileURLToPath(new URL("../../launch/cameras", import.meta.url));

function count(rgb: Uint8Array, pred: (r: number, g: number, b: number) => boolean): number {
  let n = 0;
  for (let i = 0; i < rgb.length; i += 3) if (pred(rgb[i], rgb[i + 1], rgb[i + 2])) n++;
  return n;
}
const isRed = (r: number, g: number, b: number): boolean => r > 100 && g < 60 && b < 60;
const isGreen = (r: number, g: number, b: number): boolean => g > 100 && r < 80 && b < 100;

test("rlft_arm5's default front camera sees the red cube and the green target, with shading and finite depth on the table", async () => {
  const sim = await ArmSim.create({ task: "push_cube" });
  const cams = SimCameras.create(sim.mujoco, sim.model, sim.data, [defaultFrontCamera(64, 64)]);
  for (const seed of [0, 1, 2]) {
    sim.reset(seed);
    const f = cams.render("front");
    assert.equal(f.rgb.length, 64 * 64 * 3);
    assert.equal(f.depth.length, 64 * 64);
    assert.ok(count(f.rgb, isRed) >= 15, `seed ${seed}: only ${count(f.rgb, isRed)} red pixels`);
    assert.ok(count(f.rgb, isGreen) >= 15, `seed ${seed}: only ${count(f.rgb, isGreen)} green pixels`);
    // The centre ray goes to the look-at point on the table top, ~0.62 m away along the axis.
    const d = f.depth[32 * 64 + 32];
    assert.ok(Number.isFinite(d) && d > 0.4 && d < 0.9, `centre depth ${d}`);
    // Lit, not flat: the table (one colour) shows more than one brightness.
    const table = f.segmentation[32 * 64 + 32];
    const shades = new Set<number>();
    for (let p = 0; p < 64 * 64; p++) if (f.segmentation[p] === table) shades.add(f.rgb[3 * p]);
    assert.ok(shades.size > 3, `table pixels have ${shades.size} shades`);
  }
  sim.close();
});

test("pixels that see nothing have infinite depth, segmentation −1 and the background colour", async () => {
  const sim = await ArmSim.create({ task: "push_cube" });
  const up: SimCameraSpec = { name: "up", model: pinholeModel(16, 8, 30), parentBody: "world", pose: lookAtPose([0.2, 0, 0.5], [0.21, 0, 2]) };
  const f = SimCameras.create(sim.mujoco, sim.model, sim.data, [up], { background: [0.1, 0.2, 0.3] }).render("up");
  assert.ok(f.depth.every((d) => d === Infinity));
  assert.ok(f.segmentation.every((g) => g === -1));
  assert.deepEqual([...f.rgb.subarray(0, 3)], [26, 51, 77]);
  sim.close();
});

test("moving the cube out of view removes the red pixels", async () => {
  const sim = await ArmSim.create({ task: "push_cube" });
  sim.reset(0);
  const mj = sim.mujoco;
  const adr = (sim.model.jnt_qposadr as Int32Array)[mj.mj_name2id(sim.model, mj.mjtObj.mjOBJ_JOINT.value, "cube")];
  (sim.data.qpos as Float64Array).set([-1.5, 1.5, -0.4], adr);
  mj.mj_forward(sim.model, sim.data);
  assert.equal(count(SimCameras.create(mj, sim.model, sim.data, [defaultFrontCamera(64, 64)]).render("front").rgb, isRed), 0);
  sim.close();
});

test("the shipped SO-101 calibration files are the front view and Menagerie's wrist_cam, and configure both cameras at any size of that aspect", async () => {
  const s = await loadSo101RenderScene();
  try {
    const expected = so101CameraSpecs(s.mj, s.model, s.data);
    for (const spec of expected) {
      const p = so101CalibrationPaths(CAMERAS_DIR, spec.name);
      const files = calibrationFilesFor(spec);
      assert.deepEqual(JSON.parse(readFileSync(p.intrinsics, "utf8")), JSON.parse(JSON.stringify(files.intrinsics)), `${p.intrinsics} is stale: node --import tsx sim/render/so101Cameras.ts launch/cameras`);
      assert.deepEqual(JSON.parse(readFileSync(p.handEye, "utf8")), JSON.parse(JSON.stringify(files.handEye)), `${p.handEye} is stale`);
    }
    // The wrist camera from its hand-eye file sits exactly where MuJoCo puts wrist_cam, in any arm pose.
    const wrist = simCameraFromFiles({ name: "wrist", ...so101CalibrationPaths(CAMERAS_DIR, "wrist") });
    const cams = SimCameras.create(s.mj, s.model, s.data, [wrist]);
    (s.data.qpos as Float64Array).set([0.4, -0.8, 0.9, 1.2, -0.7, 0.5], 0);
    s.mj.mj_forward(s.model, s.data);
    const w = cams.worldPose("wrist");
    const cam = s.mj.mj_name2id(s.model, s.mj.mjtObj.mjOBJ_CAMERA.value, "wrist_cam");
    const xpos = (s.data.cam_xpos as Float64Array).subarray(3 * cam, 3 * cam + 3);
    const xmat = (s.data.cam_xmat as Float64Array).subarray(9 * cam, 9 * cam + 9);
    for (let i = 0; i < 3; i++) assert.ok(Math.abs(w.t[i] - xpos[i]) < 1e-9);
    // Optical = MuJoCo camera frame with y and z flipped.
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) assert.ok(Math.abs(w.R[3 * i + j] - (j === 0 ? 1 : -1) * xmat[3 * i + j]) < 1e-9);
    // launch/sim_so101_wide.yaml's front camera: its own files, the same camera name.
    const wide = fixedCameraSpec("front", SO101_FRONT_WIDE_VIEW);
    const widePaths = so101CalibrationPaths(CAMERAS_DIR, "front", "front_wide");
    assert.deepEqual(JSON.parse(readFileSync(widePaths.intrinsics, "utf8")), JSON.parse(JSON.stringify(calibrationFilesFor(wide).intrinsics)), `${widePaths.intrinsics} is stale`);
    assert.deepEqual(JSON.parse(readFileSync(widePaths.handEye, "utf8")), JSON.parse(JSON.stringify(calibrationFilesFor(wide).handEye)), `${widePaths.handEye} is stale`);
    const sizes: [string, string, [number, number][]][] = [["front", "front", [[84, 84], [128, 128]]], ["wrist", "wrist", [[84, 84], [128, 128]]], ["front", "front_wide", [[144, 96], [72, 48]]]];
    for (const [name, stem, list] of sizes) {
      for (const [width, height] of list) {
        const rig = SimCameras.create(s.mj, s.model, s.data, [simCameraFromFiles({ name, ...so101CalibrationPaths(CAMERAS_DIR, name, stem), width, height })]);
        const f = rig.render(name);
        assert.equal(f.rgb.length, width * height * 3);
        assert.ok(f.segmentation.some((g) => g >= 0), `${stem} ${width}×${height}: sees nothing`);
        rig.close();
      }
    }
  } finally {
    s.close();
  }
});

test("a calibration file for another camera, size or frame is refused in one sentence naming the camera and the fix", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlft-cam-"));
  try {
    const front = so101CalibrationPaths(CAMERAS_DIR, "front");
    const wrist = so101CalibrationPaths(CAMERAS_DIR, "wrist");
    assert.throws(() => simCameraFromFiles({ name: "wrist", intrinsics: front.intrinsics, handEye: wrist.handEye }), /^Error: camera wrist: .*so101_front\.intrinsics\.json is the calibration of camera "front", not "wrist" — point camera wrist at its own intrinsics file/);
    assert.throws(() => simCameraFromFiles({ name: "wrist", intrinsics: wrist.intrinsics, handEye: front.handEye }), /camera wrist: .*places frame "front_optical_frame", which is not camera wrist's optical frame — point camera wrist at its own hand-eye file/);
    assert.throws(() => simCameraFromFiles({ ...wrist, name: "wrist", width: 160, height: 120 }), /camera wrist: .*calibrated for 84×84 frames, which cannot be resized to 160×120 \(another aspect ratio\) — set camera wrist's width\/height to 84×84/);
    // A hand-eye file where an intrinsics file belongs: the schema error names the camera and the command.
    assert.throws(() => simCameraFromFiles({ name: "wrist", intrinsics: wrist.handEye, handEye: wrist.handEye }), /^Error: camera wrist: .*not a valid camera intrinsics file .*run `rlft calibrate intrinsics`/);
    // A body the scene lacks (a real robot's hand-eye file names tool0).
    const he = JSON.parse(readFileSync(wrist.handEye, "utf8"));
    const bad = join(dir, "tool0.json");
    writeFileSync(bad, JSON.stringify({ ...he, parent_frame: "tool0" }));
    const spec = simCameraFromFiles({ name: "wrist", intrinsics: wrist.intrinsics, handEye: bad });
    const s = await loadSo101RenderScene();
    assert.throws(() => SimCameras.create(s.mj, s.model, s.data, [spec]), /camera wrist: its hand-eye file puts it on body "tool0", which this scene does not have — set parent_frame to one of the scene's bodies/);
    s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("lens distortion from the intrinsics is rendered: a ball appears where the plumb_bob model projects it", async () => {
  const mj = await loadMujoco();
  const ball = [0.45, 0.35, 1.0];
  const xml = `<mujoco><worldbody><light pos="0 0 0" dir="0 0 1"/><geom type="sphere" size="0.03" pos="${ball.join(" ")}"/></worldbody></mujoco>`;
  const model = loadSceneWithAssets(mj, xml, null, "distortion_test");
  const data = new mj.MjData(model);
  mj.mj_forward(model, data);
  const base = pinholeModel(96, 96, 60);
  const optical = { R: [[1, 0, 0], [0, 1, 0], [0, 0, 1]], t: [0, 0, 0] }; // camera at the origin looking along +z
  for (const renderer of ["raster", "ray"] as const) {
    for (const k1 of [0, -0.25]) {
      // A wide-angle webcam's barrel distortion.
      const model_ = { ...base, k1, k2: k1 ? 0.06 : 0, p1: k1 ? 0.001 : 0 };
      const f = SimCameras.create(mj, model, data, [{ name: "c", model: model_, parentBody: "world", pose: optical }], { renderer }).render("c");
      let n = 0, u = 0, v = 0;
      for (let p = 0; p < f.segmentation.length; p++) {
        if (f.segmentation[p] < 0) continue;
        n++;
        u += p % 96;
        v += Math.floor(p / 96);
      }
      const [eu, ev] = project(model_, ball);
      assert.ok(n > 3, `${renderer} k1=${k1}: ball not seen`);
      assert.ok(Math.hypot(u / n - eu, v / n - ev) < 0.8, `${renderer} k1=${k1}: ball centroid (${(u / n).toFixed(2)}, ${(v / n).toFixed(2)}), projected (${eu.toFixed(2)}, ${ev.toFixed(2)})`);
      if (k1) {
        const [pu, pv] = project(base, ball);
        assert.ok(Math.hypot(eu - pu, ev - pv) > 3, "the test ball must sit where distortion matters");
      }
    }
  }
  data.delete();
  model.delete();
});

test("domain randomisation: the same seed gives the same frames, another seed other colours, lights and poses; the robot and the physics are untouched", async () => {
  const s = await loadSo101RenderScene();
  try {
    const specs = ["front", "wrist"].map((name) => simCameraFromFiles({ name, ...so101CalibrationPaths(CAMERAS_DIR, name) }));
    const ranges = { colorHue: 0.05, colorSaturation: 0.25, colorValue: 0.25, lightDirectionDeg: 20, lightIntensity: [0.6, 1.4] as const, cameraPositionM: 0.01, cameraRotationDeg: 2 };
    const src = new SimCameraSources({ mujoco: s.mj, model: s.model, data: s.data }, specs, { randomize: ranges });
    const plain = new SimCameraSources({ mujoco: s.mj, model: s.model, data: s.data }, specs);
    const qpos = Array.from(s.data.qpos as Float64Array);
    const frame = (seed: number) => {
      src.reset(seed);
      return src.source("front").capture()!.rgb;
    };
    const a = frame(7);
    frame(8);
    const again = frame(7);
    assert.deepEqual(again, a, "same seed, same frame");
    const b = frame(8);
    assert.notDeepEqual(b, a);
    assert.notDeepEqual(a, plain.source("front").capture()!.rgb);
    assert.deepEqual(Array.from(s.data.qpos as Float64Array), qpos, "rendering never touches the state");
    // Only scene geoms change colour: table, floor, cube, target, bowl — no robot part.
    const names = src.randomizer!.randomizedGeoms.map((g) => s.mj.mj_id2name(s.model, s.mj.mjtObj.mjOBJ_GEOM.value, g));
    for (const n of ["floor", "table", "cube", "target", "bowl"]) assert.ok(names.includes(n), `${n} is randomised`);
    const robotBodies = new Set(["base", "shoulder", "upper_arm", "lower_arm", "wrist", "gripper", "camera_mount", "moving_jaw_so101_v1"].map((b) => s.mj.mj_name2id(s.model, s.mj.mjtObj.mjOBJ_BODY.value, b)));
    const body = s.model.geom_bodyid as Int32Array;
    assert.deepEqual(src.randomizer!.randomizedGeoms.filter((g) => robotBodies.has(body[g])), [], "no robot geom is recoloured, the fixed base included");
    src.close();
    plain.close();
  } finally {
    s.close();
  }
});
