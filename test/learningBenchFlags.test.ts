// bench:learning's flags (bench/learningArgs.ts): --robot so101 --obs pixels resolves to the pixel bench (SO-101 launch,
// pixel presets without state-only keys, its own result files, seeds disjoint from the demos'), the state bench is
// unchanged, and bad combinations are refused with one line naming the fix. What `--plan` prints; no episode runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { learningSettings } from "../bench/learningArgs.ts";
import { SO101_LAUNCH } from "../app/pixelBc.ts";

interface Plan {
  robot: string; obs: string; launch: string; tasks: string[]; episodes: number; demos: number; quality: number; bcSteps: number; bestOf: number;
  seeds: Record<"demos" | "heldOut" | "session", [number, number]>; aux: Record<string, string[]>; work: Record<string, string>; results: string;
  learner: Record<string, Record<string, Record<string, unknown>>>;
}

const plan = (...argv: string[]) => learningSettings(argv).plan() as unknown as Plan;

test("--robot so101 --obs pixels: the SO-101 launch, pixel presets, its own result files, seeds disjoint from the demos'", () => {
  const p = plan("--robot", "so101", "--obs", "pixels");
  assert.deepEqual([p.robot, p.obs, p.launch, p.tasks], ["so101", "pixels", SO101_LAUNCH, ["push_cube"]]);
  assert.deepEqual([p.demos, p.quality, p.bestOf], [100, 1, 1], "bench:pixels' demos; no best-of from pixels");
  assert.match(p.results, /^bench\/results\/learning-so101-pixels-<date>.*learning-so101-pixels-latest/);
  assert.match(p.work.push_cube, /bench\/work\/so101-push_cube-pixels$/);
  assert.ok(p.aux.push_cube.includes("cube.x") && p.aux.push_cube.includes("target.y") && !p.aux.push_cube.some((n) => n.startsWith("q.")));
  const [d, h, s] = [p.seeds.demos, p.seeds.heldOut, p.seeds.session];
  assert.ok(d[1] < h[0] && h[1] < s[0], `demo ${d}, held-out ${h}, session ${s} seeds overlap`);
  const { residual, sac } = p.learner.push_cube;
  assert.equal(residual.image_encoder, "base");
  assert.equal(sac.algorithm, "rlpd_sac");
  for (const cfg of [residual, sac]) for (const k of ["mirror_obs", "mirror_action", "her_goal", "obs_features", "chunk_critic"]) assert.equal(cfg[k], undefined, k);

  const q = plan("--robot", "so101", "--obs", "pixels", "--task", "pick_place", "--quick", "--aux", "none");
  assert.deepEqual(q.tasks, ["pick_place"]);
  assert.deepEqual(q.aux.pick_place, []);
  assert.ok(q.episodes < p.episodes && q.demos < p.demos && q.bcSteps < p.bcSteps);
  assert.match(q.work.pick_place, /so101-pick_place-pixels-quick$/);

  const st = plan();
  assert.deepEqual([st.robot, st.obs, st.launch, st.tasks], ["rlft_arm5", "state", "launch/sim_push.yaml", ["push_cube", "peg_insert"]]);
  assert.match(st.results, /^bench\/results\/learning-<date>/);
  assert.equal(st.learner.push_cube.residual.mirror_obs, "q.shoulder_pan,ee.y,cube.y,target.y", "the state bench keeps its preset");

  // BC + residual's targets: from pixels push_cube 90% and pick_place 20 points over its pixel BC (issue 27).
  const px = learningSettings(["--robot", "so101", "--obs", "pixels"]).TARGET;
  assert.deepEqual([px("push_cube", 0.4), px("pick_place", 0.055), px("pick_place", 0.9)], [0.9, 0.255, 1]);
  assert.deepEqual([learningSettings([]).TARGET("push_cube", 0.8), learningSettings([]).TARGET("peg_insert", 0.96)], [0.95, 0.9]);
});

test("bad combinations are refused with one line naming the fix", () => {
  const cases: [string[], RegExp][] = [
    [["--obs", "pixels"], /--obs pixels: .*add --robot so101/],
    [["--robot", "so101", "--obs", "state"], /use --obs pixels/],
    [["--robot", "so100"], /--robot: rlft_arm5 .* or so101/],
    [["--robot", "so101", "--task", "peg_insert"], /--task: one of push_cube, pick_place for --robot so101; got peg_insert/],
    [["--robot", "so101", "--best-of", "8"], /--best-of 8: not with --obs pixels.*give 1/],
    [["--robot", "so101", "--chunk-best-of", "4"], /--chunk-best-of: not with --obs pixels/],
    [["--aux", "task"], /--aux: .*needs --robot so101 --obs pixels/],
    [["--robot", "so101", "--session-seed", "50"], /the demo seeds 0\.\.99 overlap the session \(--session-seed\) seeds 50\.\.249: move --eval-seed or --session-seed/],
  ];
  for (const [argv, want] of cases) {
    assert.throws(() => learningSettings(argv), (e: Error) => {
      assert.match(e.message, want, argv.join(" "));
      assert.ok(!e.message.includes("\n"), `one line: ${e.message}`);
      return true;
    }, argv.join(" "));
  }
});
