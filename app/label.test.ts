/**
 * Labelling → learner → classifier on the robot, with real parts: MCAP episodes written by the recorder's
 * writer, `rlft label` rules, `python3 -m rlft_learner train-classifier` (a tiny budget), the exported ONNX
 * loaded by onnxruntime-node, and the success classifier node ending an episode on the embedded runtime.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McapEpisodeWriter } from "../recording/McapEpisodeWriter.ts";
import { labelEpisodes, parsePositiveRange, writeLabelSet } from "./label.ts";
import { findPython, learnerEnv } from "./python.ts";
import { SuccessClassifier, SuccessClassifierNode } from "../nodes/SuccessClassifierNode.ts";
import { createRuntime } from "../runtime/index.ts";
import { TOPICS } from "../contracts/topics.ts";
import { toTime } from "../contracts/msgs.ts";

const W = 24;

/** A frame of the "scene": noise, plus the green target block when `success`. */
function frame(seed: number, success: boolean): Uint8Array {
  const f = new Uint8Array(W * W * 3);
  let s = seed * 7919 + 1;
  for (let i = 0; i < f.length; i++) f[i] = 60 + ((s = (s * 1103515245 + 12345) >>> 0) % 60);
  if (success) for (let r = 14; r < 19; r++) for (let c = 6 + (seed % 8); c < 12 + (seed % 8); c++) f.set([20, 220, 40], 3 * (r * W + c));
  return f;
}

async function writeEpisode(file: string, n: number, outcome: string, successFrom: number): Promise<void> {
  const w = await McapEpisodeWriter.create(file, { episode: { robot: "test", policy_version: "x", git_revision: "x", task: "push_cube", seed: 0, episode: 0, started_at: "" } });
  const ns = (i: number) => BigInt(Math.round(i * 0.5 * 1e9)); // 2 frames per second
  const ev = (event: string, i: number) => w.write(TOPICS.episodeEvent.topic, { header: { stamp: toTime(i * 0.5), frame_id: "" }, episode: 0, event, seed: 0n, task: "push_cube", detail: "" }, ns(i), { type: TOPICS.episodeEvent.type });
  await ev("start", 0);
  for (let i = 0; i < n; i++) {
    await w.write(TOPICS.image.topic, { header: { stamp: toTime(i * 0.5), frame_id: "" }, height: W, width: W, encoding: "rgb8", is_bigendian: 0, step: W * 3, data: frame(i + n * 31, i >= successFrom) }, ns(i), { type: TOPICS.image.type });
  }
  await ev(outcome, n - 1);
  await w.close({ success: outcome === "success", length: n, reason: outcome });
}

test("rlft label rules, train-classifier, and the classifier node ending an episode", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlft-label-"));
  try {
    for (let e = 0; e < 6; e++) await writeEpisode(join(dir, `episode_00000${e}.mcap`), 12, e % 2 === 0 ? "success" : "timeout", e % 2 === 0 ? 9 : 99);
    await writeEpisode(join(dir, "episode_000006.mcap"), 12, "abort", 99);
    const files = [0, 1, 2, 3, 4, 5, 6].map((e) => join(dir, `episode_00000${e}.mcap`));
    const set = await labelEpisodes(files, { positiveSec: 1.0, marginSec: 0.5, positives: new Map() });
    // Success episodes: frames 9–11 (last 1.0 s) positive, frame 8 (margin) left out, 0–7 negative.
    const ep0 = set.index.filter((f) => f.file === "episode_000000.mcap");
    assert.deepEqual(ep0.map((f) => f.label), [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1]);
    assert.deepEqual(ep0.map((f) => f.frame).slice(7), [7, 9, 10, 11]);
    assert.ok(set.index.filter((f) => f.file === "episode_000001.mcap").every((f) => f.label === 0));
    assert.deepEqual(set.skippedEpisodes, ["episode_000006.mcap (abort)"]);
    const hand = await labelEpisodes([files[1]], { positiveSec: 1, marginSec: 0, positives: new Map([parsePositiveRange("episode_000001.mcap:3-4")].map(([f, r]) => [f, [r]])) });
    assert.deepEqual(hand.index.filter((f) => f.label === 1).map((f) => f.frame), [3, 4]);
    assert.throws(() => parsePositiveRange("episode_1.mcap:5-2"), /FILE:FROM-TO/);

    const labels = join(dir, "labels");
    writeLabelSet(labels, set);
    const clf = join(dir, "clf");
    const r = spawnSync(findPython(), ["-m", "rlft_learner", "train-classifier", "--data", labels, "--out", clf, "--steps", "150", "--batch-size", "32", "--channels", "16", "--shift", "2", "--val-fraction", "0.25"], { env: learnerEnv(), encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const c = await SuccessClassifier.load(clf);
    assert.equal(c.meta.trained_on.positives, 9);
    const pPos = await c.score({ width: W, height: W, data: frame(1234, true) });
    const pNeg = await c.score({ width: W, height: W, data: frame(1234, false) });
    assert.ok(pPos > 0.5 && pNeg < 0.5, `P(success) ${pPos} on a success frame, ${pNeg} on another`);
    await assert.rejects(c.score({ width: 8, height: 8, data: new Uint8Array(192) }), /expects 24×24 frames, the camera sends 8×8/);
    await c.close();

    // On the robot: consecutive success frames end the running episode through /reward (source classifier).
    const rt = await createRuntime("embedded", { clock: "wall", logLevel: "error" });
    const node = await SuccessClassifierNode.create(rt.createNode("success_classifier"), { modelDir: clf, threshold: 0.5, consecutive: 2 });
    await node.configure();
    await node.activate();
    const probe = rt.createNode("probe");
    const rewards: { reward: number; source: string; terminal: boolean }[] = [];
    probe.createSubscription<{ reward: number; source: string; terminal: boolean }>(TOPICS.reward.type, TOPICS.reward.topic, (m) => rewards.push(m));
    const ev = probe.createPublisher(TOPICS.episodeEvent.type, TOPICS.episodeEvent.topic, { durability: "transient_local", depth: 1 });
    const img = probe.createPublisher(TOPICS.image.type, TOPICS.image.topic);
    ev.publish({ header: { stamp: toTime(0), frame_id: "" }, episode: 0, event: "start", seed: 0n, task: "push_cube", detail: "" });
    const send = async (i: number, success: boolean) => {
      img.publish({ header: { stamp: toTime(i), frame_id: "" }, height: W, width: W, encoding: "rgb8", is_bigendian: 0, step: W * 3, data: frame(500 + i, success) });
      for (let k = 0; k < 50 && Number.isNaN(node.lastProbability); k++) await new Promise((res) => setTimeout(res, 10));
      await new Promise((res) => setTimeout(res, 50));
    };
    await send(1, false);
    await send(2, true);
    assert.equal(rewards.length, 0, "one success frame is not enough");
    await send(3, true);
    assert.deepEqual(rewards.map((m) => [m.reward, m.terminal, m.source]), [[1, true, "classifier"]]);
    await node.shutdown();
    await rt.shutdown();

    // A replaced ONNX file is refused.
    writeFileSync(join(clf, "classifier.onnx"), Buffer.concat([readFileSync(join(clf, "classifier.onnx")), Buffer.from([0])]));
    await assert.rejects(SuccessClassifier.load(clf), /classifier\.onnx has sha256 .* the file is corrupt or was replaced/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
