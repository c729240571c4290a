/**
 * `rlft demo --robot so101 --obs pixels`: the flags reach the SO-101 pipeline (demos with both cameras → pixel BC on
 * joints + cameras → online residual RL from pixels with the scripted operator → BC and BC + residual evaluated on unseen
 * seeds), and flags that do not fit together are refused before anything runs.
 * `rlft eval` renders the cameras such a package sees, and refuses one whose frames are of another size at load.
 * Tiny counts: behaviour, not timing (the timed run is in docs/results.md).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { demoPlan, demoSeedProblem } from "../app/so101Demo.ts";

const rlft = (args: string[]) => spawnSync(process.execPath, ["bin/rlft.js", ...args], { encoding: "utf8", timeout: 600_000 });
const tmp = mkdtempSync(join(tmpdir(), "rlft-so101demo-"));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("demo flags: robot, observation and task are checked together, with the fix", () => {
  assert.deepEqual(demoPlan({ robot: "rlft_arm5", obs: "state" }), { robot: "rlft_arm5", obs: "state", task: "push_cube" });
  assert.deepEqual(demoPlan({ robot: "so101", obs: "pixels" }), { robot: "so101", obs: "pixels", task: "push_cube" });
  assert.deepEqual(demoPlan({ robot: "so101", obs: "state", task: "pick_place" }), { robot: "so101", obs: "state", task: "pick_place" });
  assert.throws(() => demoPlan({ robot: "rlft_arm5", obs: "pixels" }), /rlft_arm5 has no cameras.*--robot so101/);
  assert.throws(() => demoPlan({ robot: "ur5", obs: "state" }), /--robot: rlft_arm5 or so101; got ur5/);
  assert.throws(() => demoPlan({ robot: "so101", obs: "depth" }), /--obs: state or pixels; got depth/);
  assert.throws(() => demoPlan({ robot: "so101", obs: "pixels", task: "peg_insert" }), /on the SO-101 one of push_cube, pick_place, reach; got peg_insert/);
  assert.deepEqual(demoPlan({ robot: "so101", obs: "pixels", onlineEpisodes: 20 }), { robot: "so101", obs: "pixels", task: "push_cube" });
  assert.throws(() => demoPlan({ robot: "rlft_arm5", obs: "state", task: "pick_place" }), /--robot so101/);
});

test("demo seeds: demos, online episodes and evaluation are disjoint, each overlap named with its fix", () => {
  const ok = { demos: 100, evalSeed: 1000, evalEpisodes: 50, onlineEpisodes: 100 };
  assert.equal(demoSeedProblem(ok), null);
  assert.equal(demoSeedProblem({ ...ok, onlineEpisodes: 0, onlineSeed: 1010 }), null, "no online phase: its seeds do not matter");
  assert.match(demoSeedProblem({ ...ok, evalSeed: 50 })!, /--eval-seed 50 overlaps the demo seeds 0\.\.99: pick 100 or more/);
  assert.match(demoSeedProblem({ ...ok, onlineSeed: 10 })!, /--online-seed 10: the online seeds 10\.\.109 overlap the demo seeds 0\.\.99; pick 100 or more/);
  assert.match(demoSeedProblem({ ...ok, onlineSeed: 1020 })!, /--online-seed 1020: the online seeds 1020\.\.1119 overlap the evaluation seeds 1000\.\.1049; pick 1050 or more/);
  assert.match(demoSeedProblem({ ...ok, onlineSeed: 950 })!, /overlap the evaluation seeds/, "online range running into the evaluation range");
});

test("rlft demo refuses --online-set without an online phase, and overlapping seeds, before setting anything up", () => {
  const r = rlft(["demo", "--robot", "so101", "--online-set", "utd=2", "--out", join(tmp, "nope2")]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--online-set: the online learner runs only with --online-episodes N/);
  const s = rlft(["demo", "--robot", "so101", "--online-episodes", "5", "--online-seed", "1000", "--out", join(tmp, "nope3")]);
  assert.equal(s.status, 1);
  assert.match(s.stderr, /--online-seed 1000: the online seeds 1000\.\.1004 overlap the evaluation seeds 1000\.\.1049/);
});

test("rlft demo refuses --obs pixels on the arm without cameras before setting anything up", () => {
  const r = rlft(["demo", "--obs", "pixels", "--out", join(tmp, "nope")]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--obs pixels: rlft_arm5 has no cameras to learn from — add --robot so101/);
});

test("rlft demo --robot so101 --obs pixels: demos with both cameras → pixel BC on joints + cameras → residual RL from pixels → held-out eval", () => {
  const out = join(tmp, "pix");
  const tiny = ["batch_size=8", "hidden=16", "blocks=1", "encoder_channels=8", "keypoints=4", "encoder_features=8", "warmup_steps=1", "log_every=1"];
  const onlineTiny = ["learning_starts=8", "critic_warmup_updates=2", "batch_size=8", "critic_heads=2", "critic_hidden=16", "actor_hidden=16", "publish_every=4", "utd=1"];
  const r = rlft(["demo", "--robot", "so101", "--obs", "pixels", "--demos", "2", "--quality", "1", "--steps", "2", "--eval-episodes", "1", "--eval-seed", "500", "--out", out, "--learner-set", ...tiny,
    "--online-episodes", "2", "--online-set", ...onlineTiny]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /\[3\/4\] online fine-tuning: 2 episodes, residual RL over the BC policy with a scripted operator \(seeds 2000\.\.\); every transition carries both cameras' frames; learner preset .*so101_push_cube_pixels\.yaml/);
  assert.match(r.stdout, /\[2\/4\] training a diffusion policy on joint positions \+ front and wrist cameras \(position head trained on ee\.x, ee\.y, ee\.z, cube\.x, cube\.y, target\.x, target\.y; training only\), 2 steps/);
  const s = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
  assert.equal(s.robot, "so101");
  assert.equal(s.obs, "pixels");
  assert.equal(s.collect.episodes, 2);
  assert.equal(s.train.steps, 2);
  assert.equal(s.eval.episodes, 1);
  for (const k of ["collect", "train", "online", "eval", "total"]) assert.ok(s.seconds[k] > 0, `seconds.${k}`);
  // The online phase ran over the pixel base with both cameras' frames on the link, nothing lost, and BC + residual
  // was evaluated on the same seed as BC.
  assert.equal(s.session.episodes, 2);
  assert.ok(s.session.transitions.pushed > 0 && s.session.transitions.acked === s.session.transitions.pushed, JSON.stringify(s.session.transitions));
  assert.ok(s.session.learner_updates > 0 && s.session.final_policy, JSON.stringify(s.session));
  assert.equal(s.eval_residual.episodes, 1);
  const res = JSON.parse(readFileSync(join(s.session.final_policy, "policy.json"), "utf8"));
  assert.equal(res.provenance?.algorithm ?? "residual_td3", "residual_td3");
  const pj = JSON.parse(readFileSync(join(s.train.package, "policy.json"), "utf8"));
  assert.ok(pj.observation.names.every((n: string) => n.startsWith("q.")), "the policy reads joint positions only");
  assert.deepEqual(pj.observation.images.map((i: { camera: string }) => i.camera), ["front", "wrist"]);
  // rlft eval renders the cameras a pixel package sees (no --record-to needed) ...
  const ev = rlft(["eval", "--launch", "launch/sim_so101.yaml", "--policy", s.train.package, "--episodes", "1", "--seed", "500", "--json"]);
  assert.equal(ev.status, 0, ev.stderr);
  assert.equal(JSON.parse(ev.stdout.trim().split("\n").pop()!).episodes, 1);
  // ... and a camera whose frames are not the size the policy was trained on is refused at load, naming it and the fix.
  const small = join(tmp, "small_front.yaml");
  writeFileSync(small, readFileSync("launch/sim_so101.yaml", "utf8").replace("{name: front, ", "{name: front, width: 64, height: 64, "));
  const wrong = rlft(["eval", "--launch", small, "--policy", s.train.package, "--episodes", "1", "--seed", "500"]);
  assert.equal(wrong.status, 1);
  assert.match(wrong.stderr, /camera "front" sends 64×64 frames but the policy was trained on 84×84 — set the camera's size to 84×84 in the launch file/);
  // The evaluation seeds must not be the demos'.
  const bad = rlft(["demo", "--robot", "so101", "--obs", "pixels", "--demos", "2", "--eval-seed", "1", "--out", join(tmp, "bad")]);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /--eval-seed 1 overlaps the demo seeds 0\.\.1/);
});
