// inspect-episode's computation on a real RECAP package (make-fixture --indicator): value.onnx over an episode,
// returns and advantages with the package's normalisation, indicators forced positive on operator steps.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { episodeValues, sparkline } from "./episodeValues.ts";
import { PolicyPackage } from "../policies/PolicyPackage.ts";
import { makeLearnerFixture, type LearnerFixture } from "../policies/testing/learnerFixture.ts";
import type { EpisodeArrays } from "./dataset.ts";

let recap: LearnerFixture;
let plain: LearnerFixture;
before(async () => {
  [recap, plain] = await Promise.all([makeLearnerFixture({ indicator: true }), makeLearnerFixture()]);
});
after(async () => {
  await recap?.cleanup();
  await plain?.cleanup();
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
