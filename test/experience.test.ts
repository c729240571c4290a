/** Transitions assembled from a real stack run (MuJoCo + ONNX policy from the learner) are complete and consistent. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { robotPolicyFixture } from "./robotFixture.ts";
import type { Transition } from "../contracts/Transition.ts";

test("every executed tick becomes one transition; the last one of an episode is truncated at timeout", async (t) => {
  const fx = await robotPolicyFixture("push_cube");
  t.after(() => fx.cleanup());
  const got: Transition[] = [];
  const cfg = parseLaunch(`task: push_cube\nactor: {kind: policy, package: ${JSON.stringify(fx.dir)}}\ncamera: {enabled: false}\nrecorder: {enabled: false}\nepisodes: {max_steps: 20}\n`, "t.yaml");
  const { results } = await runEpisodes(cfg, { count: 2, seed: 7, label: "t", experience: { push: (x) => got.push(x) } });
  for (const ep of [0, 1]) {
    const mine = got.filter((x) => x.episode === ep);
    const r = results[ep];
    assert.equal(r.outcome, "timeout");
    assert.equal(mine.length, r.steps - 1, "ticks minus the one whose action never ran");
    mine.forEach((x, i) => assert.equal(x.step, i));
    for (let i = 0; i + 1 < mine.length; i++) {
      assert.deepEqual(mine[i].nextObs, mine[i + 1].obs);
      assert.deepEqual(mine[i].nextBaseAction, mine[i + 1].baseAction);
    }
    assert.equal(mine.at(-1)!.truncated, true);
    assert.equal(mine.slice(0, -1).some((x) => x.truncated || x.terminated), false);
    for (const x of mine) {
      assert.equal(x.obs.length, 12);
      assert.equal(x.action.length, 5);
      assert.ok(x.baseAction.every((v) => v >= -1.0001 && v <= 1.0001));
      assert.equal(x.intervention, false);
    }
  }
});
