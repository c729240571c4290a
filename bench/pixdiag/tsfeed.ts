/**
 * Diagnosis of bench:pixels: the package in onnxruntime-node (the robot's path: DiffusionPolicy, imageFeeds, graph and
 * TS-sampler modes) against PyTorch on recorded demo frames (vectors from bench/pixdiag/openloop.py ... vectors.json).
 *
 * Usage: node --import tsx bench/pixdiag/tsfeed.ts <package> <vectors.json>
 */
import { readFileSync } from "node:fs";
import { DiffusionPolicy, type CameraFrames } from "../../policies/DiffusionPolicy.ts";

const [pkg, file] = process.argv.slice(2);
const v = JSON.parse(readFileSync(file, "utf8")) as { obs: number[][]; noise: number[][][]; action: number[][][]; images: Record<string, number[][][][]> };
const quiet = { warn: () => {}, info: () => {} };
for (const mode of ["graph", "ts"] as const) {
  const policy = await DiffusionPolicy.create(pkg, { mode, threads: 1, logger: quiet });
  let worst = 0;
  for (let b = 0; b < v.obs.length; b++) {
    const frames: CameraFrames = Object.fromEntries(Object.entries(v.images).map(([cam, imgs]) => [cam, { width: imgs[b][0].length, height: imgs[b].length, data: Uint8Array.from(imgs[b].flat(2)) }]));
    const out = await policy.denoise(Float32Array.from(v.obs[b]), Float32Array.from(v.noise[b].flat()), policy.indicator, policy.imageFeeds(frames));
    v.action[b].flat().forEach((x, i) => (worst = Math.max(worst, Math.abs(x - out[i]))));
  }
  console.log(`${mode} mode: onnxruntime-node vs PyTorch on ${v.obs.length} recorded windows: max |diff| ${worst.toExponential(2)} (normalised actions)`);
  await policy.close();
}
