/**
 * A tiny online session end to end: real MuJoCo, real ONNX policies, the real Python learner as a child
 * process, real ZeroMQ sockets, a scripted operator, residual packages published and swapped in live.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { runSession } from "../app/session.ts";
import { EpisodeReader } from "../recording/EpisodeReader.ts";
import { robotPolicyFixture } from "./robotFixture.ts";

test("a tiny session streams every transition, swaps in the learner's residual and records who acted", async (t) => {
  const fx = await robotPolicyFixture("push_cube");
  t.after(() => fx.cleanup());
  const out = mkdtempSync(join(tmpdir(), "rlft-session-"));
  const cfg = parseLaunch(
    `task: push_cube\nactor: {kind: policy, package: ${JSON.stringify(fx.dir)}}\ncamera: {enabled: false}\noperator: {enabled: true, patience_sec: 1}\nepisodes: {max_steps: 40}\n`,
    "session.yaml",
  );
  const res = await runSession({
    config: cfg,
    learner: true,
    episodes: 4,
    seed: 11,
    out,
    pace: true,
    // Tiny networks and schedules: the algorithm is the same, the budget is a test's.
    learnerConfig: { critic_heads: 2, critic_hidden: 32, actor_hidden: 32, learning_starts: 20, critic_warmup_updates: 10, publish_every: 20, batch_size: 32, utd: 1 },
  });
  assert.equal(res.episodes.length, 4);
  assert.ok(res.transitions.pushed > 50, `only ${res.transitions.pushed} transitions`);
  assert.equal(res.transitions.acked, res.transitions.pushed, "every transition reached the learner");
  assert.ok(res.learnerUpdates > 0);
  assert.match(res.finalVersion, /^res-/, "a residual package from the learner runs at the end");
  assert.equal(readFileSync(join(out, "session.jsonl"), "utf8").trim().split("\n").length, 4);
  // The frozen fixture policy makes little progress, so the operator takes over; the recording says who acted.
  const interventions = res.episodes.reduce((a, e) => a + e.interventionSteps, 0);
  assert.ok(interventions > 0, "the scripted operator intervened");
  const files = readdirSync(join(out, "episodes")).filter((f) => f.endsWith(".mcap")).sort();
  assert.equal(files.length, 4);
  let active = 0;
  const sources = new Set<string>();
  for (const f of files) {
    const r = await EpisodeReader.open(join(out, "episodes", f));
    for await (const m of r.messages({ topics: ["/arbiter/intervention"] })) {
      const msg = m.message as { active: boolean; source: string };
      if (msg.active) active++;
      sources.add(msg.source);
    }
    await r.close();
  }
  assert.equal(active, interventions);
  assert.ok(sources.has("scripted_operator") && sources.has("policy"));

  // Started again on the same run directory, the learner resumes its checkpoint and the pacing resumes with its UTD
  // clock: before every episode the learner has done 0.9 × utd updates per transition it counted, the first session's
  // included (counting only this session's transitions let a resumed run go unpaced).
  const again = await runSession({
    config: cfg, learner: true, episodes: 3, seed: 11, out, pace: true,
    learnerConfig: { critic_heads: 2, critic_hidden: 32, actor_hidden: 32, learning_starts: 20, critic_warmup_updates: 10, publish_every: 20, batch_size: 32, utd: 1 },
  });
  assert.equal(again.episodes.length, 3);
  for (const e of again.episodes) {
    assert.ok(e.pacedAt, `episode ${e.episode} logs the learner it waited for`);
    assert.ok(e.pacedAt.transitions >= res.transitions.pushed, `episode ${e.episode}: the resumed learner's transitions count (${e.pacedAt.transitions})`);
    assert.ok(e.pacedAt.updates >= 0.9 * (e.pacedAt.transitions - 20), `episode ${e.episode}: ${e.pacedAt.updates} updates for ${e.pacedAt.transitions} transitions`);
  }
  assert.deepEqual(again.episodes.map((e) => e.episode), [4, 5, 6]);
});
