// rlft session --learner-config / --learner-set: the learner presets load, flags go on top, bad input names the fix.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { learnerOverrides } from "../app/learnerOverrides.ts";

const tmp = mkdtempSync(join(tmpdir(), "rlft-presets-"));

test("the shipped presets load: the settings bench:learning runs ours with, per task", () => {
  assert.deepEqual(learnerOverrides("learner/presets/peg_insert.yaml"), { actor_residual_penalty: 1, exploration_std: 0.02 });
  const push = learnerOverrides("learner/presets/push_cube.yaml");
  assert.equal(push.actor_residual_penalty, 0.1);
  assert.equal(push.mirror_obs, "q.shoulder_pan,ee.y,cube.y,target.y");
});

test("the SO-101 pixel presets set no state-only key (the learner refuses them over a pixel base)", () => {
  for (const task of ["push_cube", "pick_place"]) {
    const o: Record<string, unknown> = learnerOverrides(`learner/presets/so101_${task}_pixels.yaml`);
    for (const k of ["mirror_obs", "mirror_action", "her_goal", "obs_features", "chunk_critic"]) assert.equal(o[k], undefined, `${task}: ${k}`);
    assert.deepEqual(o, { actor_residual_penalty: 0.1, image_encoder: "base" }, task);
  }
});

test("--learner-set goes on top of the file; values are typed; '=' may appear in a value; empty turns a key off", () => {
  const o = learnerOverrides("learner/presets/peg_insert.yaml", ["exploration_std=0.05", "chunk_critic=true", "run_name=a=b", "mirror_obs="]);
  assert.deepEqual(o, { actor_residual_penalty: 1, exploration_std: 0.05, chunk_critic: true, run_name: "a=b", mirror_obs: "" });
  assert.deepEqual(learnerOverrides(undefined, ["utd=4"]), { utd: 4 });
});

test("a missing, non-YAML or non-mapping file and a malformed pair are refused with the flag and the fix", () => {
  assert.throws(() => learnerOverrides(join(tmp, "nope.yaml")), /--learner-config .*nope\.yaml: cannot read it .*learner\/presets/);
  const list = join(tmp, "list.yaml");
  writeFileSync(list, "- utd\n- 2\n");
  assert.throws(() => learnerOverrides(list), /expected a mapping of learner config keys .*found a list/);
  const bad = join(tmp, "bad.yaml");
  writeFileSync(bad, "utd: [2\n");
  assert.throws(() => learnerOverrides(bad), /bad\.yaml: not valid YAML/);
  assert.throws(() => learnerOverrides(undefined, ["utd"]), /--learner-set: expected key=value, got 'utd'/);
  assert.throws(() => learnerOverrides(undefined, ["=2"]), /--learner-set: expected key=value/);
});
