// bench:learning's markdown report: the same-seed intervention table (BC base vs final package) appears when the
// report carries it, and reports written before it existed still render.
import test from "node:test";
import assert from "node:assert/strict";
import { markdown, rate, type LearningBench, type MethodResult, type Supervised } from "../bench/learningReport.ts";

const sup = (interventionSteps: number, steps: number, episodes: number, successes: number): Supervised =>
  ({ n: 100, steps, interventionSteps, interventionRate: interventionSteps / steps, episodesWithIntervention: episodes, successes });

function bench(withSupervised: boolean): LearningBench {
  const method: MethodResult = {
    label: "BC + residual RL (ours)",
    learnerConfig: {},
    curve: [{ episodes: 0, version: "bc", ...rate(38, 50) }, { episodes: 300, version: "res", ...rate(48, 50) }],
    final: { version: "res", meanSteps: 50, ...rate(95, 100) },
    ...(withSupervised ? { supervised: sup(180, 5200, 8, 100) } : {}),
    session: {
      dir: "x", episodes: [{ episode: 0, outcome: "success", steps: 50, interventionSteps: 5, policyVersion: "bc" }], wallSeconds: 1, learnerUpdates: 10,
      updatesPerSecMedian: 50, updatesPerSecOverall: 40, transitions: { pushed: 50, acked: 50 }, packages: 1, interventionRate: 0.1, onlineSuccess: rate(1, 1),
    },
    episodesToTarget: 300,
  };
  return {
    date: "2026-11-30T00:00:00Z", quick: false, episodes: 300, evalEvery: 50, evalSeeds: 50, finalEval: 100, evalSeed: 1000, sessionSeed: 2000,
    tasks: [{
      task: "push_cube", target: 0.95, demos: { episodes: 50, successes: 43, used: 43, quality: 0.7, dataset: "d.npz" },
      bc: { package: "bc", steps: 20000, finalLoss: 0.06, final: { meanSteps: 70, ...rate(79, 100) }, ...(withSupervised ? { supervised: sup(515, 7016, 22, 90) } : {}) },
      methods: { residual: method }, seconds: 60,
    }],
    throughput: null, notes: [], seconds: 60,
  };
}

test("the report has the same-seed intervention table: BC base and final package, steps, episodes with a takeover", () => {
  const md = markdown(bench(true));
  assert.match(md, /Interventions on the same 100 held-out seeds/);
  assert.match(md, /\| BC base alone \| 7\.3% \(515\/7016\) \| 22\/100 \| 90\/100 \|/);
  assert.match(md, /\| BC \+ residual RL \(ours\), final \| 3\.5% \(180\/5200\) \| 8\/100 \| 100\/100 \|/);
});

test("a report written before the same-seed measure (no supervised fields) renders without that table", () => {
  const md = markdown(bench(false));
  assert.doesNotMatch(md, /Interventions on the same/);
  assert.match(md, /\| BC \+ residual RL \(ours\) \| 95\.0% \(95\/100\)/);
});

test("the best-of-N table gains a column ranked by both critics only when a package was scored that way", () => {
  const withBoth = bench(true);
  const t = withBoth.tasks[0];
  t.bc.bestOfConsensus = { samples: 16, ...rate(80, 100) };
  t.methods.residual.bestOf = { n: 16, critic: rate(96, 100), consensus: rate(93, 100), rerankedFraction: 0.5, critics: rate(97, 100) };
  const md = markdown(withBoth);
  assert.match(md, /\| policy \| one sample \| best-of-N consensus \| best-of-N critic \| best-of-N critics \|/);
  assert.match(md, /\| BC \+ residual RL \(ours\) \| 95\.0% .* \| 93\.0% .* \| 96\.0% .* \| 97\.0% \(97\/100\)/);
  delete t.methods.residual.bestOf.critics;
  const md2 = markdown(withBoth);
  assert.match(md2, /\| policy \| one sample \| best-of-N consensus \| best-of-N critic \|\n/);
  assert.doesNotMatch(md2, /critics/);
});

test("a report from pixels says so in its title and names BC's training-only aux targets; a state report does not", () => {
  const pix = bench(true);
  Object.assign(pix, { robot: "so101", obs: "pixels", launch: "launch/sim_so101.yaml", command: "npm run bench:learning -- --robot so101 --obs pixels" });
  pix.tasks[0].bc.aux = ["cube.x", "cube.y"];
  const md = markdown(pix);
  assert.match(md, /^# Learning benchmark from pixels \(so101: joints \+ cameras\) /);
  assert.match(md, /`npm run bench:learning -- --robot so101 --obs pixels` on launch\/sim_so101\.yaml\./);
  assert.match(md, /pixel BC 20000 steps, final loss 0\.0600, camera encoders also trained to estimate cube\.x, cube\.y \(training only; the policy reads joints and cameras\)/);
  const state = markdown(bench(true));
  assert.match(state, /^# Learning benchmark 2026/);
  assert.doesNotMatch(state, /pixel|training only/);
});
