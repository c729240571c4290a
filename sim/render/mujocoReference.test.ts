/**
 * rlft's sim cameras against what we did not write: MuJoCo's own renderer (Python bindings, OSMesa) looking through
 * the same cameras at the same states. Segmentation (geom per pixel) and depth must agree; colour is compared in
 * docs/sim.md (side-by-side image), since shading models differ in detail (per pixel here, per vertex in OpenGL).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadSo101RenderScene, so101RenderSceneXml, SO101_ASSETS } from "./so101RenderScene.ts";
import { SimCameras } from "./SimCameras.ts";
import { lookAtPose, pinholeModel } from "./mujocoCamera.ts";
import { fixedCameraSpec, so101CameraSpecs, SO101_FRONT_WIDE_VIEW } from "./so101Cameras.ts";
import { compareFrames, mujocoGlUnavailable, referencePose, renderWithMujoco } from "./mujocoReference.ts";
import type { SimCameraSpec } from "./cameraPose.ts";
import { ArmSim } from "../ArmSim.ts";
import { sceneXml } from "../scene.ts";

const skip = mujocoGlUnavailable() ?? false;

function check(label: string, ours: { segmentation: Int32Array; depth: Float32Array }, theirs: { segmentation: Int32Array; depth: Float32Array }): void {
  const c = compareFrames(ours, theirs);
  // Pixels differ only along silhouettes (where one sample falls either side of an edge).
  assert.ok(c.segmentationAgreement >= 0.97, `${label}: segmentation agrees on ${(100 * c.segmentationAgreement).toFixed(2)}% of pixels`);
  assert.ok(c.depthMedianM < 5e-4, `${label}: median depth error ${(1000 * c.depthMedianM).toFixed(2)} mm`);
  assert.ok(c.depthP95M < 5e-3, `${label}: 95th percentile depth error ${(1000 * c.depthP95M).toFixed(2)} mm`);
}

test("SO-101: front and wrist cameras agree with MuJoCo's renderer, with either renderer (segmentation ≥ 97% of pixels, depth within mm)", { skip }, async () => {
  const s = await loadSo101RenderScene();
  try {
    const { mj, model, data } = s;
    // The shipped front cameras (launch/cameras/: 84 × 84, and the wide one at 144 × 96) and Menagerie's wrist_cam at 96 × 96.
    const [front, wrist] = so101CameraSpecs(mj, model, data, 96);
    const wide = fixedCameraSpec("front_wide", SO101_FRONT_WIDE_VIEW);
    const qs = [
      [0, 0, 0, 0, 0, 0],
      [0.3, -1.0, 1.0, 1.1, 0, 0.3],
      [-0.4, -0.3, 0.6, 1.4, 1.0, 1.2],
    ];
    const poses = qs.map((q) => {
      (data.qpos as Float64Array).set(q, 0);
      mj.mj_forward(model, data);
      return referencePose(data);
    });
    const ref = renderWithMujoco(so101RenderSceneXml(), SO101_ASSETS, poses, [front, wrist, wide]);
    for (const renderer of ["raster", "ray"] as const) {
      const cams = SimCameras.create(mj, model, data, [front, wrist, wide], { renderer });
      poses.forEach((pose, i) => {
        (data.qpos as Float64Array).set(pose.qpos);
        mj.mj_forward(model, data);
        check(`${renderer} pose ${i} front`, cams.render("front"), ref.frames[i][0]);
        check(`${renderer} pose ${i} wrist`, cams.render("wrist"), ref.frames[i][1]);
        check(`${renderer} pose ${i} front_wide`, cams.render("front_wide"), ref.frames[i][2]);
      });
      cams.close();
    }
  } finally {
    s.close();
  }
});

test("rlft_arm5: the front camera agrees with MuJoCo's renderer, with either renderer", { skip }, async () => {
  const sim = await ArmSim.create({ task: "push_cube" });
  try {
    const front: SimCameraSpec = { name: "front", model: pinholeModel(84, 84, 45), parentBody: "world", pose: lookAtPose([0.62, 0, 0.45], [0.14, 0, 0]) };
    const poses = [0, 1].map((seed) => {
      sim.reset(seed);
      return referencePose(sim.data);
    });
    const ref = renderWithMujoco(sceneXml({ task: "push_cube" }), null, poses, [front]);
    for (const renderer of ["raster", "ray"] as const) {
      const cams = SimCameras.create(sim.mujoco, sim.model, sim.data, [front], { renderer });
      poses.forEach((_, i) => {
        sim.reset(i);
        check(`${renderer} seed ${i}`, cams.render("front"), ref.frames[i][0]);
      });
      cams.close();
    }
  } finally {
    sim.close();
  }
});
