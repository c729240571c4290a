// The numbers `rlft recap` and bench:recap report: failure rate, throughput per hour of robot time, the table.
import { test } from "node:test";
import assert from "node:assert/strict";
import { outcomeStats, reportMarkdown } from "./recap.ts";
import { parseOverrides } from "./learnerOverrides.ts";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageCameras, packageObservationNames } from "../policies/PolicyPackage.ts";
import type { EpisodeSummary } from "./runEpisodes.ts";

const summary = (successes: number, episodes: number, simSeconds: number, outcomes: Record<string, number>): EpisodeSummary => ({
  episodes, successes, rate: successes / episodes, ci95: [0, 1], outcomes, meanSteps: 50, meanSuccessSteps: 40, simSeconds, wallSeconds: 1, safetyEvents: {}, actorErrors: 0,
});

test("throughput is successes per hour of robot time; failure rate counts every episode that did not succeed", () => {
  const s = outcomeStats(summary(6, 10, 600, { success: 6, failure: 3, timeout: 1 }));
  assert.equal(s.throughputPerHour, 36); // 6 successes in 10 minutes
  assert.ok(Math.abs(s.failureRate - 0.4) < 1e-12);
  assert.equal(s.explicitFailures, 3);
  assert.equal(s.timeouts, 1);
  assert.ok(s.ci95[0] < 0.6 && s.ci95[1] > 0.6);
  assert.equal(outcomeStats(summary(0, 5, 0, { failure: 5 })).throughputPerHour, 0);
});

test("the report table has a row per iteration and names a missing plot", () => {
  const base = outcomeStats(summary(5, 10, 600, { success: 5, failure: 5 }));
  const it = { iteration: 1, collect: { ...base, interventionRate: 0.2, policy: "p" }, eval: outcomeStats(summary(8, 10, 500, { success: 8, timeout: 2 })), package: "pkg", positiveFraction: 0.35, positiveFractionAutonomous: 0.3, thresholds: { peg_insert: -0.05 }, valueEce: 0.04, valueCorr: 0.9, calibrationPlot: null, calibrationNote: "matplotlib is not installed", trainEpisodes: 20 };
  const md = reportMarkdown({ task: "peg_insert", pretrained: "bc", baseline: base, iterations: [it] });
  assert.match(md, /\| pre-trained BC \| 50% /);
  assert.match(md, /\| RECAP iteration 1 \| 80% .*\| 20% \(0 failed, 2 timed out\) \| 58 \|/);
  assert.match(md, /35% \/ 30%/);
  assert.match(md, /none \(matplotlib is not installed\)/);
});

test("learner overrides are typed and malformed ones are named", () => {
  assert.deepEqual(parseOverrides(["n_step=0", "cfg_beta=1.5", "plain=false", "max_episode_steps=a=1"], "--learner-set"), { n_step: 0, cfg_beta: 1.5, plain: false, max_episode_steps: "a=1" });
  assert.throws(() => parseOverrides(["n_step"], "--learner-set"), /--learner-set: expected key=value, got 'n_step'/);
});

test("a camera package's state columns and cameras are read from its policy.json (what trainRecap streams)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlft-pkg-"));
  try {
    writeFileSync(join(dir, "policy.json"), JSON.stringify({ observation: { names: ["q.shoulder_pan", "q.gripper"], images: [{ camera: "front" }, { camera: "wrist" }] } }));
    assert.deepEqual(await packageObservationNames(dir), ["q.shoulder_pan", "q.gripper"]);
    assert.deepEqual(await packageCameras(dir), ["front", "wrist"]);
    writeFileSync(join(dir, "policy.json"), JSON.stringify({}));
    assert.deepEqual(await packageObservationNames(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
