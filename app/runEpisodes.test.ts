/** mergeSummaries: a resumed evaluation reads as one run of all its episodes. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mergeSummaries, type EpisodeSummary } from "./runEpisodes.ts";
import { wilson } from "../data/stats.ts";

const part = (episodes: number, successes: number, meanSteps: number, outcomes: Record<string, number>): EpisodeSummary => ({
  episodes, successes, rate: successes / episodes, ci95: [0, 1], outcomes, meanSteps, meanSuccessSteps: 10, simSeconds: episodes, wallSeconds: 1,
  safetyEvents: { velocity_clamp: 1 }, actorErrors: 0,
});

test("mergeSummaries adds counts, weights means and recomputes the Wilson interval", () => {
  const m = mergeSummaries([part(114, 107, 20, { success: 107, timeout: 6, abort: 1 }), part(86, 80, 30, { success: 80, timeout: 6 })]);
  assert.equal(m.episodes, 200);
  assert.equal(m.successes, 187);
  assert.equal(m.rate, 187 / 200);
  const w = wilson(187, 200);
  assert.deepEqual(m.ci95, [w.lo, w.hi]);
  assert.deepEqual(m.outcomes, { success: 187, timeout: 12, abort: 1 });
  assert.equal(m.meanSteps, (114 * 20 + 86 * 30) / 200);
  assert.deepEqual(m.safetyEvents, { velocity_clamp: 2 });
  assert.equal(m.simSeconds, 200);
});
