/**
 * `rlft session` from pixels end to end: a tiny pixel BC base (front and wrist cameras, joints only) trained on
 * recorded SO-101 push_cube demos, then a paced online session on it with `learner.cameras` set: every transition goes
 * to the real Python learner with both cameras' frames of obs and next_obs, the learner's replay keeps them, its pixel
 * residual learns from sampled batches with frames, and the published residual (image inputs) runs at the end.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { runSession } from "../app/session.ts";
import { trainBc } from "../app/trainBc.ts";
import { findPython, learnerEnv } from "../app/python.ts";
import { cameraFiles, pixelDemoLaunch } from "./support/pixelDemos.ts";


test("a session over a pixel base streams both cameras to the learner, which learns from them and publishes a pixel residual", { timeout: 600_000 }, async (t) => {
  const tmp = await mkdtemp(join(tmpdir(), "rlft-pixsession-"));
  t.after(() => rm(tmp, { recursive: true, force: true }));
  const cal = cameraFiles(tmp);
  const demos = join(tmp, "demos");
  await runEpisodes(parseLaunch(pixelDemoLaunch(cal), "pix.yaml"), { count: 2, seed: 5, label: "test", recordTo: demos });
  const bc = await trainBc({
    data: demos, out: join(tmp, "bc"), steps: 4, quiet: true, includeFailures: true, cameras: ["front", "wrist"], state: "joints",
    learner: { batch_size: 8, hidden: 16, blocks: 1, encoder_channels: 8, keypoints: 4, encoder_features: 8, warmup_steps: 1, log_every: 2 },
  });
  const launch = pixelDemoLaunch(cal, 20).replace("actor: {kind: expert, expert_quality: 1}", `actor: {kind: policy, package: ${JSON.stringify(bc.packageDir)}}`);
  const out = join(tmp, "session");
  const res = await runSession({
    config: parseLaunch(`${launch}learner: {cameras: [front, wrist]}\n`, "session.yaml"),
    learner: true,
    episodes: 3,
    seed: 11,
    out,
    pace: true,
    // Tiny networks and schedules: the algorithm is the same, the budget is a test's.
    learnerConfig: { critic_heads: 2, critic_hidden: 32, actor_hidden: 32, learning_starts: 16, critic_warmup_updates: 4, publish_every: 8, batch_size: 16, utd: 1,
      // Every published package stays on disk: on a loaded machine the robot swaps in later than the learner publishes,
      // and the default keeps only the newest 5, which may no longer hold the one the robot ran last.
      keep_packages: 100_000 },
  });
  assert.equal(res.episodes.length, 3);
  assert.ok(res.transitions.pushed >= 40, `only ${res.transitions.pushed} transitions`);
  assert.equal(res.transitions.acked, res.transitions.pushed, "every transition (with its frames) reached the learner");
  assert.ok(res.learnerUpdates > 0);
  assert.match(res.finalVersion, /^res-/, "a residual package from the learner runs at the end");
  const policy = JSON.parse(await readFile(join(out, "learner", "packages", res.finalVersion, "policy.json"), "utf8")) as { observation: { images?: { camera: string }[] } };
  assert.deepEqual(policy.observation.images?.map((i) => i.camera), ["front", "wrist"], "the residual reads both cameras");
  // The learner's last checkpoint holds the online transitions' frames (stored once per step, buffers/frames.py).
  const pointer = JSON.parse(await readFile(join(out, "learner", "checkpoint.json"), "utf8")) as { dir: string };
  const online = join(out, "learner", pointer.dir, "online.npz");
  const script = "import sys, numpy as np\nz = np.load(sys.argv[1])\nprint(len(z['seq']), *(z[f'_frames.{c}.shape'].tolist() for c in ('front', 'wrist')))";
  const r = spawnSync(findPython(), ["-c", script, online], { env: learnerEnv(), encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), `${res.transitions.acked} [40, 40] [32, 32]`);
  assert.ok((await readdir(join(out, "episodes"))).filter((f) => f.endsWith(".mcap")).length === 3);
});
