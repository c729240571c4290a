/**
 * Side-by-side image and numbers for docs/sim.md: the SO-101's front and wrist cameras (launch/cameras/) at a few arm
 * poses, through rlft's raster renderer (with shadows), its ray renderer, and MuJoCo's own OpenGL renderer.
 *   node --import tsx sim/render/compareWithMujoco.ts [--out docs/img/sim_cameras_vs_mujoco.png] [--size 128]
 */
import { writeFileSync } from "node:fs";
import { Canvas } from "../../data/plot/Canvas.ts";
import { loadSo101RenderScene, so101RenderSceneXml, SO101_ASSETS } from "./so101RenderScene.ts";
import { SimCameras, type RendererKind } from "./SimCameras.ts";
import { simCameraFromFiles } from "./cameraCalibration.ts";
import { so101CalibrationPaths } from "./so101Cameras.ts";
import { compareFrames, referencePose, renderWithMujoco } from "./mujocoReference.ts";

const argv = process.argv.slice(2);
const arg = (name: string, dflt: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const out = arg("--out", "docs/img/sim_cameras_vs_mujoco.png");
const size = Number(arg("--size", "128"));
const POSES = [
  [0, -1.0, 1.0, 1.1, 0, 0.3],
  [0.4, -0.6, 0.8, 1.3, -0.5, 0.8],
  [-0.3, -0.3, 0.6, 1.4, 1.0, 1.2],
];

const s = await loadSo101RenderScene();
const { mj, model, data } = s;
const specs = ["front", "wrist"].map((name) => simCameraFromFiles({ name, ...so101CalibrationPaths("launch/cameras", name), width: size, height: size }));
const poses = POSES.map((q) => {
  (data.qpos as Float64Array).set(q, 0);
  mj.mj_forward(model, data);
  return referencePose(data);
});
const ref = renderWithMujoco(so101RenderSceneXml(), SO101_ASSETS, poses, specs);
const rows: { label: string; tiles: Uint8Array[] }[] = [];
for (const [renderer, shadows, label] of [["raster", true, "rlft raster + shadows"], ["ray", false, "rlft ray (mj_multiRay)"]] as [RendererKind, boolean, string][]) {
  const cams = SimCameras.create(mj, model, data, specs, { renderer, shadows });
  const tiles: Uint8Array[] = [];
  poses.forEach((p, i) => {
    (data.qpos as Float64Array).set(p.qpos);
    mj.mj_forward(model, data);
    specs.forEach((spec, j) => {
      const f = cams.render(spec.name);
      const c = compareFrames(f, ref.frames[i][j]);
      let diff = 0;
      for (let k = 0; k < f.rgb.length; k++) diff += Math.abs(f.rgb[k] - ref.frames[i][j].rgb[k]);
      console.log(`${renderer.padEnd(6)} pose ${i} ${spec.name.padEnd(5)} segmentation ${(100 * c.segmentationAgreement).toFixed(2)}%  depth median ${(1000 * c.depthMedianM).toFixed(3)} mm, p95 ${(1000 * c.depthP95M).toFixed(2)} mm  mean |ΔRGB| ${(diff / f.rgb.length).toFixed(1)}`);
      tiles.push(f.rgb);
    });
  });
  cams.close();
  rows.push({ label, tiles });
}
rows.push({ label: `MuJoCo ${ref.version} (OpenGL, OSMesa)`, tiles: ref.frames.flatMap((fs) => fs.map((f) => f.rgb)) });

const pad = 4;
const head = 14;
const cols = POSES.length * specs.length;
const canvas = new Canvas(cols * (size + pad) + pad, rows.length * (size + head + pad) + pad);
rows.forEach((row, r) => {
  const y0 = pad + r * (size + head + pad);
  canvas.text(row.label, pad, y0 + 2, [0, 0, 0]);
  row.tiles.forEach((rgb, c) => {
    const x0 = pad + c * (size + pad);
    for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) canvas.set(x0 + x, y0 + head + y, [rgb[3 * (y * size + x)], rgb[3 * (y * size + x) + 1], rgb[3 * (y * size + x) + 2]]);
  });
});
writeFileSync(out, canvas.png());
console.log(`wrote ${out} (columns: poses 0–${POSES.length - 1}, each front then wrist)`);
s.close();
