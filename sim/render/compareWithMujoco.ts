/**
 * Side-by-side image and numbers for docs/sim.md: the SO-101's front and wrist cameras (launch/cameras/) at a few arm
 * poses, through rlft's raster renderer (with shadows), its ray renderer, and MuJoCo's own OpenGL renderer.
 *   node --import tsx sim/render/compareWithMujoco.ts [--out docs/img/sim_cameras_vs_mujoco.png] [--scale 1.524]
 * --scale: frames at that multiple of each camera's calibrated size (default 128/84: 84 × 84 → 128 × 128).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { npy } from "../../data/npy.ts";
import { findPython, learnerEnv } from "../../app/python.ts";
import { loadSo101RenderScene, so101RenderSceneXml, SO101_ASSETS } from "./so101RenderScene.ts";
import { SimCameras, type RendererKind } from "./SimCameras.ts";
import { so101CameraFromFiles } from "./so101Cameras.ts";
import { compareFrames, referencePose, renderWithMujoco } from "./mujocoReference.ts";

const argv = process.argv.slice(2);
const arg = (name: string, dflt: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const out = arg("--out", "docs/img/sim_cameras_vs_mujoco.png");
const scale = Number(arg("--scale", String(128 / 84)));
if (!(scale > 0)) throw new Error(`--scale ${arg("--scale", "")}: a positive multiple of the cameras' calibrated sizes, e.g. 1.5`);
const POSES = [
  [0, -1.0, 1.0, 1.1, 0, 0.3],
  [0.4, -0.6, 0.8, 1.3, -0.5, 0.8],
  [-0.3, -0.3, 0.6, 1.4, 1.0, 1.2],
];

const s = await loadSo101RenderScene();
const { mj, model, data } = s;
const specs = ["front", "wrist"].map((name) => so101CameraFromFiles("launch/cameras", name, scale));
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

// The grid is drawn by matplotlib (the learner's Python): one labelled row per renderer, one tile per pose and camera.
const tmp = mkdtempSync(join(tmpdir(), "rlft-compare-"));
const cols = POSES.length * specs.length;
// Tiles of cameras of different sizes: each in the top-left of a white tile of the largest size.
const H = Math.max(...specs.map((c) => c.model.height));
const W = Math.max(...specs.map((c) => c.model.width));
const grid = new Uint8Array(rows.length * cols * H * W * 3).fill(255);
rows.forEach((row, r) => row.tiles.forEach((rgb, c) => {
  const { width, height } = specs[c % specs.length].model;
  for (let y = 0; y < height; y++) grid.set(rgb.subarray(y * width * 3, (y + 1) * width * 3), ((r * cols + c) * H + y) * W * 3);
}));
writeFileSync(join(tmp, "tiles.npy"), npy("|u1", [rows.length, cols, H, W, 3], grid));
writeFileSync(join(tmp, "labels.json"), JSON.stringify(rows.map((r) => r.label)));
const script = `
import json, sys
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
tiles = np.load(sys.argv[1]); labels = json.load(open(sys.argv[2]))
rows, cols = tiles.shape[:2]
h, w = tiles.shape[2:4]
fig, axes = plt.subplots(rows, cols, figsize=(1.6 * cols * w / h, 1.8 * rows), squeeze=False)
for r in range(rows):
    for c in range(cols):
        ax = axes[r][c]; ax.imshow(tiles[r, c]); ax.set_xticks([]); ax.set_yticks([])
    axes[r][0].set_title(labels[r], loc="left", fontsize=9)
fig.tight_layout(); fig.savefig(sys.argv[3], dpi=100)
`;
const r = spawnSync(findPython(), ["-c", script, join(tmp, "tiles.npy"), join(tmp, "labels.json"), out], { env: learnerEnv(), encoding: "utf8" });
rmSync(tmp, { recursive: true, force: true });
if (r.status !== 0) throw new Error(`drawing ${out} with matplotlib failed: ${r.stderr}`);
console.log(`wrote ${out} (columns: poses 0–${POSES.length - 1}, each front then wrist)`);
s.close();
