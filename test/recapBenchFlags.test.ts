// bench:recap's flags (bench/recapArgs.ts): --robot so101 --obs pixels resolves to the pixel bench (SO-101 launch, pixel
// BC with the task's training-only aux targets, its own work and result files, issue 27's targets, seeds disjoint), the
// state bench is unchanged, and bad combinations are refused with one line naming the fix. What `--plan` prints; no
// episode runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { recapSettings } from "../bench/recapArgs.ts";
import { SO101_LAUNCH } from "../app/pixelBc.ts";

interface Plan {
  robot: string; obs: string; launch: string; tasks: string[]; demos: number; quality: number; bcSteps: number; mixed: number; evalEpisodes: number;
  fineTuneSteps: number; betas: number[]; temperatures: number[];
  seeds: { demos: [number, number]; heldOut: [number, number]; validation: [number, number]; collection: [number, number][] };
  aux: Record<string, string[]>; work: Record<string, string>; learner: Record<string, unknown>; targets: { throughput: number; failure: number }; results: string;
}

const plan = (...argv: string[]) => recapSettings(argv).plan() as unknown as Plan;
const disjoint = (ranges: [number, number][]) => ranges.every(([a0, a1], i) => ranges.every(([b0, b1], j) => i === j || a1 < b0 || b1 < a0));

test("--robot so101 --obs pixels: the SO-101 launch, pixel BC with aux targets, its own files, issue 27's targets, disjoint seeds", () => {
  const p = plan("--robot", "so101", "--obs", "pixels");
  assert.deepEqual([p.robot, p.obs, p.launch, p.tasks], ["so101", "pixels", SO101_LAUNCH, ["push_cube"]]);
  assert.deepEqual([p.demos, p.quality, p.bcSteps], [100, 1, 3000], "bench:pixels' demos and BC budget");
  assert.deepEqual(p.targets, { throughput: 1.5, failure: 0.6 });
  assert.match(p.results, /^bench\/results\/recap-so101-pixels-<date>.*recap-so101-pixels-latest/);
  assert.match(p.work.push_cube, /bench\/work\/so101-push_cube-pixels-recap$/);
  assert.ok(p.aux.push_cube.includes("cube.x") && p.aux.push_cube.includes("target.y") && !p.aux.push_cube.some((n) => n.startsWith("q.")));
  assert.equal(p.learner.positive_sources, "scripted_expert");
  assert.ok(disjoint([p.seeds.demos, p.seeds.heldOut, p.seeds.validation, ...p.seeds.collection]), JSON.stringify(p.seeds));

  const q = plan("--robot", "so101", "--obs", "pixels", "--task", "pick_place", "--quick", "--aux", "none", "--iterations", "2");
  assert.deepEqual(q.tasks, ["pick_place"]);
  assert.deepEqual(q.aux.pick_place, []);
  assert.ok(q.demos < p.demos && q.bcSteps < p.bcSteps && q.mixed < p.mixed && q.evalEpisodes < p.evalEpisodes && q.fineTuneSteps < p.fineTuneSteps);
  assert.deepEqual([q.betas, q.temperatures], [[], [1]], "quick skips the sampler sweep");
  assert.equal(q.seeds.collection.length, 2);
  assert.ok(disjoint([q.seeds.demos, q.seeds.heldOut, q.seeds.validation, ...q.seeds.collection]));
  assert.match(q.work.pick_place, /so101-pick_place-pixels-recap-quick$/);
  assert.equal(plan("--robot", "so101", "--task", "all").tasks.join(), "push_cube,pick_place");

  const st = plan();
  assert.deepEqual([st.robot, st.obs, st.launch, st.tasks], ["rlft_arm5", "state", "launch/sim_push.yaml", ["peg_insert"]]);
  assert.deepEqual([st.demos, st.quality, st.evalEpisodes, st.fineTuneSteps], [40, 0.5, 300, 6000], "the state bench keeps its budgets");
  assert.deepEqual(st.targets, { throughput: 1.5, failure: 0.5 });
  assert.match(st.results, /^bench\/results\/recap-<date>.*recap-latest/);
  assert.match(st.work.peg_insert, /bench\/work\/recap-peg_insert$/);
  assert.equal(st.learner.batch_size, undefined);
});

test("bad combinations are refused with one line naming the fix", () => {
  const cases: [string[], RegExp][] = [
    [["--obs", "pixels"], /--obs pixels: .*add --robot so101/],
    [["--robot", "so101", "--obs", "state"], /use --obs pixels/],
    [["--robot", "so100"], /--robot: rlft_arm5 .* or so101/],
    [["--robot", "so101", "--task", "peg_insert"], /--task: push_cube, pick_place or all for --robot so101; got peg_insert/],
    [["--task", "pick_place"], /--task: peg_insert, push_cube or all for --robot rlft_arm5; got pick_place/],
    [["--aux", "task"], /--aux: .*needs --robot so101 --obs pixels/],
    [["--robot", "so101", "--aux", "all"], /--aux: task .* or none; got all/],
    [["--robot", "so101", "--eval-seed", "50"], /the demo seeds 0\.\.99 overlap the held-out \(--eval-seed\) seeds 50\.\.149: move --eval-seed, --sweep-seed or --mixed-seed/],
    [["--mixed-seed", "3950", "--iterations", "2"], /the validation \(--sweep-seed\) seeds 5000\.\.5099 overlap the iteration 2 collection \(--mixed-seed\) seeds 4950\.\.5099/],
    [["--iterations", "0"], /--iterations: an integer >= 1; got 0/],
    [["--beta-sweep", "1,x"], /--beta-sweep: comma-separated guidance weights/],
  ];
  for (const [argv, want] of cases) {
    assert.throws(() => recapSettings(argv), (e: Error) => {
      assert.match(e.message, want, argv.join(" "));
      assert.ok(!e.message.includes("\n"), `one line: ${e.message}`);
      return true;
    }, argv.join(" "));
  }
});
