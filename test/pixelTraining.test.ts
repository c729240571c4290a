/**
 * From recorded camera frames to a pixel policy: episodes recorded with two sim cameras of different sizes are read
 * with each tick paired to the latest frame at or before it (ticks before the first frames left out), streamed to the
 * learner as raw uint8 frames (rlft-exp/1 `image.<camera>` tensors), and train-bc writes a package whose sampler takes
 * those cameras and only the joint positions (`--state joints`: nothing a real arm lacks).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { readEpisodeArrays } from "../app/dataset.ts";
import { trainBc } from "../app/trainBc.ts";
import { EpisodeReader } from "../recording/EpisodeReader.ts";
import { timeNs } from "../contracts/msgs.ts";
import { cameraFiles, pixelDemoLaunch } from "./support/pixelDemos.ts";

const tmp = mkdtempSync(join(tmpdir(), "rlft-pixtrain-"));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

test("recorded camera frames are paired causally, travel as uint8 and train a pixel policy on joints + cameras", async () => {
  const cal = cameraFiles(tmp);
  const out = join(tmp, "demos");
  const yaml = pixelDemoLaunch(cal);
  await runEpisodes(parseLaunch(yaml, "pix.yaml"), { count: 2, seed: 3, label: "test", recordTo: out });
  const file = join(out, readdirSync(out).filter((f) => f.endsWith(".mcap")).sort()[0]);

  const plain = await readEpisodeArrays(file);
  const ep = await readEpisodeArrays(file, { cameras: ["front", "wrist"] });
  assert.ok(ep.images && ep.obs.length > 0);
  assert.equal(ep.obs.length + (ep.ticksWithoutFrames ?? 0), plain.obs.length);
  assert.equal(ep.images.front.width, 40);
  assert.equal(ep.images.wrist.width, 32);
  assert.equal(ep.images.front.data.length, ep.obs.length * 40 * 40 * 3);
  assert.equal(ep.images.wrist.data.length, ep.obs.length * 32 * 32 * 3);
  // Every picked frame is stamped at or before its tick: check the first tick's front frame against the log.
  const r = await EpisodeReader.open(file);
  const stamps: bigint[] = [];
  const ticks: bigint[] = [];
  for await (const m of r.messages({ topics: ["/camera/front/image", "/observation"] })) {
    const s = timeNs((m.message as { header: { stamp: { sec: number; nanosec: number } } }).header.stamp);
    (m.topic === "/observation" ? ticks : stamps).push(s);
  }
  await r.close();
  const firstTick = ticks[ep.ticksWithoutFrames ?? 0];
  assert.ok(stamps.some((s) => s <= firstTick), "the first kept tick has a frame at or before it");
  await assert.rejects(readEpisodeArrays(file, { cameras: ["side"] }), /no frames from camera "side" \(\/camera\/side\/image\)/);

  const run = join(tmp, "run");
  const res = await trainBc({
    data: out, out: run, steps: 4, quiet: true, includeFailures: true, cameras: ["front", "wrist"], state: "joints",
    learner: { batch_size: 8, hidden: 16, blocks: 1, encoder_channels: 8, keypoints: 4, encoder_features: 8, warmup_steps: 1, log_every: 2 },
  });
  const pj = JSON.parse(readFileSync(join(res.packageDir, "policy.json"), "utf8"));
  assert.deepEqual(pj.observation.names, ["q.shoulder_pan", "q.shoulder_lift", "q.elbow_flex", "q.wrist_flex", "q.gripper"]);
  assert.deepEqual(pj.observation.images.map((i: { camera: string; width: number }) => [i.camera, i.width]), [["front", 40], ["wrist", 32]]);
});

test("--aux sends sim-only columns as training targets the package never asks for, and refuses contradictions", async () => {
  const out = join(tmp, "demos");
  const run = join(tmp, "run-aux");
  const res = await trainBc({
    data: out, out: run, steps: 4, quiet: true, includeFailures: true, cameras: ["front", "wrist"], state: "joints", aux: ["cube.x", "cube.y"],
    learner: { batch_size: 8, hidden: 16, blocks: 1, encoder_channels: 8, keypoints: 4, encoder_features: 8, warmup_steps: 1, log_every: 2 },
  });
  const pj = JSON.parse(readFileSync(join(res.packageDir, "policy.json"), "utf8"));
  assert.deepEqual(pj.observation.names, ["q.shoulder_pan", "q.shoulder_lift", "q.elbow_flex", "q.wrist_flex", "q.gripper"]);
  assert.equal(JSON.parse(readFileSync(join(run, "config.json"), "utf8")).aux_targets, "cube.x,cube.y");
  await assert.rejects(trainBc({ data: out, out: run, quiet: true, state: "joints", aux: ["cube.x"] }), /--aux trains the camera encoders.*give --cameras too/);
  await assert.rejects(trainBc({ data: out, out: run, quiet: true, cameras: ["front"], state: ["q.gripper", "cube.x"], aux: ["cube.x"] }), /--aux cube\.x: this is also in --state/);
  await assert.rejects(trainBc({ data: out, out: run, quiet: true, includeFailures: true, cameras: ["front"], state: "joints", aux: ["cube.w"] }), /the observation has no "cube\.w"/);
  await assert.rejects(trainBc({ data: out, out: run, quiet: true, cameras: ["front"], state: "joints", auxData: [out] }), /--aux-data gives frames for the position head: name its targets with --aux/);
});
