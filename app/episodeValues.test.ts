// inspect-episode's computation on a real RECAP package (make-fixture --indicator): value.onnx over an episode,
// returns and advantages with the package's normalisation, indicators forced positive on operator steps.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { episodeValues, sparkline, valueCameras } from "./episodeValues.ts";
import { PolicyPackage } from "../policies/PolicyPackage.ts";
import { DiffusionPolicy } from "../policies/DiffusionPolicy.ts";
import type { Indicator } from "../policies/AdvantageConditioning.ts";
import { makeLearnerFixture, type LearnerFixture } from "../policies/testing/learnerFixture.ts";
import type { EpisodeArrays } from "./dataset.ts";

let recap: LearnerFixture;
let plain: LearnerFixture;
let pixels: LearnerFixture;
before(async () => {
  [recap, plain, pixels] = await Promise.all([
    makeLearnerFixture({ indicator: true }),
    makeLearnerFixture(),
    makeLearnerFixture({ indicator: true, cameras: ["front"], imageSize: 32, steps: 20 }),
  ]);
});
after(async () => {
  await recap?.cleanup();
  await plain?.cleanup();
  await pixels?.cleanup();
});

function episode(names: string[], T: number, success: boolean): EpisodeArrays {
  return {
    file: "synthetic.mcap", episode: 0, seed: 0, task: "synthetic", success, outcome: success ? "success" : "failure", obsNames: names, actionNames: ["a"],
    obs: Array.from({ length: T }, (_, t) => names.map((_, i) => Math.sin(t + i))), action: [], reward: [],
    intervention: Array.from({ length: T }, (_, t) => (t >= 3 && t < 6 ? 1 : 0)), source: "test", durationSec: T / 10, recovered: false,
  };
}

test("V(t), returns, A(t) and indicators of an episode from the package's value head", async () => {
  const pkg = await PolicyPackage.load(recap.dir);
  const names = pkg.json.observation.names;
  const v = await episodeValues(episode(names, 12, false), recap.dir);
  assert.equal(v.steps, 12);
  assert.equal(v.maxEpisodeSteps, 60);
  assert.equal(v.cFail, 60);
  assert.equal(v.nStep, 10);
  assert.ok(v.value.every((x) => x >= -1 && x <= 0), "values are normalised");
  // Failure: G_t = (−(11 − t) − 60) / 60, clipped to −1.
  v.ret.forEach((g, t) => assert.ok(Math.abs(g - Math.max(-1, (-(11 - t) - 60) / 60)) < 1e-9));
  // A_0 = Σ_{k<10} r_k/60 + V_10 − V_0 with r = −1 for all of those steps.
  assert.ok(Math.abs(v.advantage[0] - (-10 / 60 + v.value[10] - v.value[0])) < 1e-9);
  for (let t = 3; t < 6; t++) assert.equal(v.indicator[t], 1, "operator steps are positive");
  v.indicator.forEach((ind, t) => v.intervention[t] || assert.equal(ind, v.advantage[t] > (v.threshold ?? Infinity) ? 1 : 0));
  const mc = await episodeValues(episode(names, 12, true), recap.dir, { nStep: 0 });
  mc.advantage.forEach((a, t) => assert.ok(Math.abs(a - (mc.ret[t] - mc.value[t])) < 1e-9));
});

test("operator steps are forced positive only as the learner forced them (intervention_positive)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlft-ev-"));
  try {
    cpSync(recap.dir, dir, { recursive: true });
    const pj = JSON.parse(readFileSync(join(dir, "policy.json"), "utf8"));
    pj.advantage.intervention_positive = "success";
    pj.advantage.thresholds = { synthetic: 10 }; // nothing clears it: every positive below is forced
    writeFileSync(join(dir, "policy.json"), JSON.stringify(pj));
    const names = pj.observation.names as string[];
    const failed = await episodeValues(episode(names, 12, false), dir);
    assert.deepEqual(failed.indicator, Array(12).fill(0), "a failed episode's corrections are judged by their advantage");
    const ok = await episodeValues(episode(names, 12, true), dir);
    assert.deepEqual(ok.indicator, ok.intervention, "a successful episode's corrections are forced positive");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a package without a value head, or another task's observations, is refused with the fix", async () => {
  const names = (await PolicyPackage.load(plain.dir)).json.observation.names;
  await assert.rejects(episodeValues(episode(names, 5, true), plain.dir), /has no value head.*rlft recap/);
  await assert.rejects(episodeValues(episode(["x", "y"], 5, true), recap.dir), /records observation \[x, y\] but the value head/);
});

test("sparkline spans its range", () => {
  assert.equal(sparkline([0, 1], 0, 1), "▁█");
  assert.equal(sparkline([], 0, 1), "");
  assert.equal(sparkline(Array.from({ length: 200 }, () => 0.5), 0, 1, 10).length, 10);
});

test("a value head over camera frames (RECAP from pixels) reads each step's frame and agrees with PyTorch", async () => {
  const pkg = await PolicyPackage.load(pixels.dir);
  assert.equal(pkg.json.advantage?.value?.input, "obs+images");
  assert.deepEqual(valueCameras(pkg.json), ["front"]);
  const { names, mean, std } = pkg.json.observation;
  const vec = JSON.parse(readFileSync(join(pixels.dir, "test_vectors.json"), "utf8")).value as { obs: number[][]; value: number[]; images: { front: number[][][][] } };
  const T = vec.obs.length;
  const ep = episode(names, T, true);
  ep.obs = vec.obs.map((row) => row.map((z, i) => z * std[i] + mean[i]));
  const frames = new Uint8Array(vec.images.front.flat(3));
  ep.images = { front: { width: 32, height: 32, data: frames } };
  const v = await episodeValues(ep, pixels.dir);
  v.value.forEach((x, t) => assert.ok(Math.abs(x - vec.value[t]) <= 1e-4, `step ${t}: ${x} vs PyTorch ${vec.value[t]}`));
  // Frames not read, or of another size: one sentence naming the camera and the fix.
  await assert.rejects(episodeValues({ ...ep, images: undefined }, pixels.dir), /reads camera front, but its frames were not read — read the episode with cameras \[front\]/);
  await assert.rejects(episodeValues({ ...ep, images: { front: { width: 16, height: 16, data: new Uint8Array(T * 16 * 16 * 3) } } }, pixels.dir), /camera front recorded 16x16 frames, the value head .* reads 32x32/);
});

test("the RECAP-from-pixels package's sampler (indicator and camera inputs) runs in onnxruntime-node like PyTorch", async () => {
  const policy = await DiffusionPolicy.create(pixels.dir, { mode: "graph", threads: 1, logger: { warn: () => undefined, info: () => undefined } });
  try {
    const vec = JSON.parse(readFileSync(join(pixels.dir, "test_vectors.json"), "utf8")) as { obs: number[][]; noise: number[][][]; action: number[][][]; indicator: number[]; images: { front: number[][][][] } };
    const byValue: Record<number, Indicator> = { 0: "negative", 1: "positive", 2: "unconditioned" };
    for (let b = 0; b < vec.obs.length; b++) {
      const feeds = policy.imageFeeds({ front: { width: 32, height: 32, data: Uint8Array.from(vec.images.front[b].flat(2)) } });
      const out = await policy.denoise(Float32Array.from(vec.obs[b]), Float32Array.from(vec.noise[b].flat()), byValue[vec.indicator[b]], feeds);
      let d = 0;
      vec.action[b].flat().forEach((v, i) => (d = Math.max(d, Math.abs(v - out[i]))));
      assert.ok(d <= 1e-4, `vector ${b} (${byValue[vec.indicator[b]]}): max |Δ| = ${d}`);
    }
  } finally {
    await policy.close();
  }
});
