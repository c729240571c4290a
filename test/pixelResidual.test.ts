/**
 * Residual RL from pixels, offline end to end (issue 27): a tiny pixel BC trained on recorded SO-101 frames (front and
 * wrist cameras, joints only), a few residual TD3 updates on synthetic transitions carrying those frames (frozen base
 * encoder), the residual package exported with image inputs, loaded in TS over its base, and run by PolicyActor on the
 * recorded frames: residual.onnx agrees with PyTorch on them, the residual is fed the tick's frames every tick, a stale
 * frame mid-chunk holds the arm (ActorNode turns every hold into a SENSOR_STALE event), a residual whose cameras
 * differ from its base's is refused, and the RLPD-SAC baseline from pixels runs over a zero base on the same frames.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { readEpisodeArrays, type EpisodeArrays } from "../app/dataset.ts";
import { trainBc } from "../app/trainBc.ts";
import { PolicyPackage } from "../policies/PolicyPackage.ts";
import { ResidualPolicy } from "../policies/ResidualPolicy.ts";
import { PolicyActor } from "../policies/actors/PolicyActor.ts";
import type { CameraImage } from "../policies/actors/Actor.ts";
import { imageFeeds, type CameraFrames } from "../policies/imageFeeds.ts";
import { exportPixelResidualPackage } from "../policies/testing/residualFixture.ts";
import { toTime } from "../contracts/msgs.ts";
import { cameraFiles, pixelDemoLaunch } from "./support/pixelDemos.ts";

const CAMS = ["front", "wrist"] as const;
const quiet = { warn: () => {}, info: () => {} };
let tmp: string;
let ep: EpisodeArrays;
let baseDir: string;
let residualDir: string;
let sacDir: string;

/** Recorded frame t of every camera, as the policies take them. */
function frameAt(t: number): CameraFrames {
  return Object.fromEntries(CAMS.map((c) => {
    const f = ep.images![c];
    const n = f.width * f.height * 3;
    return [c, { width: f.width, height: f.height, data: f.data.subarray(t * n, (t + 1) * n) }];
  }));
}

/** Recorded frame t as the camera delivers it to an actor, stamped `stamp` seconds. */
function cameraImages(t: number, stamp: number): Record<string, CameraImage> {
  return Object.fromEntries(Object.entries(frameAt(t)).map(([c, f]) => [c, { ...f, encoding: "rgb8", step: f.width * 3, stamp: toTime(stamp) }]));
}

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), "rlft-pixres-"));
  const demos = join(tmp, "demos");
  await runEpisodes(parseLaunch(pixelDemoLaunch(cameraFiles(tmp)), "pix.yaml"), { count: 2, seed: 5, label: "test", recordTo: demos });
  const file = join(demos, (await readdir(demos)).filter((f) => f.endsWith(".mcap")).sort()[0]);
  ep = await readEpisodeArrays(file, { cameras: [...CAMS] });
  const bc = await trainBc({
    data: demos, out: join(tmp, "bc"), steps: 4, quiet: true, includeFailures: true, cameras: [...CAMS], state: "joints",
    learner: { batch_size: 8, hidden: 16, blocks: 1, encoder_channels: 8, keypoints: 4, encoder_features: 8, warmup_steps: 1, log_every: 2 },
  });
  baseDir = bc.packageDir;
  const framesDir = join(tmp, "frames");
  await mkdir(framesDir);
  for (const c of CAMS) await writeFile(join(framesDir, `${c}.rgb`), ep.images![c].data);
  residualDir = await exportPixelResidualPackage(baseDir, join(tmp, "residuals"), framesDir);
  sacDir = await exportPixelResidualPackage(baseDir, join(tmp, "residuals"), framesDir, { algorithm: "rlpd_sac", updates: 4 });
});
after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

test("residual.onnx over a pixel base agrees with PyTorch within 1e-4 on recorded SO-101 frames", async () => {
  const base = await PolicyPackage.load(baseDir);
  const policy = await ResidualPolicy.create(residualDir, { base, training: false, logger: quiet });
  try {
    assert.deepEqual(policy.images, base.images);
    const v = JSON.parse(await readFile(join(residualDir, "test_vectors.json"), "utf8")) as { obs: number[][]; base_action: number[][]; residual: number[][]; images: Record<string, number[][][][]> };
    let worst = 0;
    let largest = 0;
    for (let i = 0; i < v.obs.length; i++) {
      const frames = Object.fromEntries(CAMS.map((c) => [c, { width: v.images[c][i][0].length, height: v.images[c][i].length, data: Uint8Array.from(v.images[c][i].flat(2)) }]));
      assert.deepEqual(frames.front.data, frameAt(i).front.data, "the test vectors hold the recorded frames");
      const r = await policy.residual(Float32Array.from(v.obs[i]), Float32Array.from(v.base_action[i]), imageFeeds(policy.images, frames, "test"));
      r.forEach((x, j) => {
        worst = Math.max(worst, Math.abs(x - v.residual[i][j]));
        largest = Math.max(largest, Math.abs(x));
      });
    }
    assert.ok(worst <= 1e-4, `max |ONNX − PyTorch| = ${worst}`);
    assert.ok(largest > 1e-6, "the residual moved in its updates");
    await assert.rejects(policy.step(ep.obs[0].slice(0, 5), base.json.action.min, { front: frameAt(0).front }), /no frame from camera "wrist": residual .* sees it \(32×32 rgb8\)/);
  } finally {
    await policy.close();
  }
});

test("PolicyActor feeds the residual the tick's frames every tick and holds on a stale one mid-chunk", async () => {
  const base = await PolicyPackage.load(baseDir);
  const actor = await PolicyActor.create(baseDir, {
    jointNames: base.json.action.names, observationNames: ep.obsNames, cameras: [...CAMS], residual: residualDir, maxImageAgeSec: 0.25, logger: quiet,
  });
  try {
    const k = base.json.action.execute_steps;
    assert.ok(k > 2, "a chunk of more than 2 ticks, so tick 2 is mid-chunk");
    const tick = (t: number, frameStamp: number) => actor.act({ names: ep.obsNames, values: ep.obs[t], stamp: toTime(t * 0.1), images: cameraImages(t, frameStamp) });
    const a0 = await tick(0, 0);
    assert.equal(actor.holdReason(), null);
    assert.ok(a0.every(Number.isFinite) && actor.lastAction()!.version === actor.version && actor.version.startsWith("res-"));
    await tick(1, 0.1);
    // Mid-chunk the base does not re-plan, but the residual reads this tick's frames: a 1 s old one holds the arm.
    const held = await tick(2, -0.8);
    assert.match(actor.holdReason() ?? "", /camera front's latest frame is 1\.00 s old \(limit 0\.25 s\)/);
    const qIdx = base.json.action.names.map((j) => ep.obsNames.indexOf(`q.${j}`));
    assert.deepEqual(held, qIdx.map((i) => ep.obs[2][i]));
    assert.equal(actor.holds, 1);
    await tick(2, 0.2); // fresh again: the chunk resumes where it was
    assert.equal(actor.holdReason(), null);
    assert.equal(actor.chunkMs.length, 1, "one base chunk so far: the hold did not re-plan");
  } finally {
    await actor.close();
  }
});

test("a residual whose cameras differ from its base's is refused at load, naming both", async () => {
  const base = await PolicyPackage.load(baseDir);
  const dir = join(tmp, "patched");
  await cp(residualDir, dir, { recursive: true });
  const pj = JSON.parse(await readFile(join(dir, "policy.json"), "utf8"));
  pj.observation.images = pj.observation.images.slice(0, 1);
  await writeFile(join(dir, "policy.json"), JSON.stringify(pj));
  await assert.rejects(ResidualPolicy.create(dir, { base, training: false, logger: quiet }),
    /observation.images \[front 40×40\] differ from the base .*'s \[front 40×40, wrist 32×32\] — a residual sees the cameras its base sees/);
});

test("RLPD-SAC from pixels runs over a zero base: the whole action from the frames, a hold without them", async () => {
  const base = await PolicyPackage.load(baseDir);
  const actor = await PolicyActor.create(baseDir, {
    jointNames: base.json.action.names, observationNames: ep.obsNames, cameras: [...CAMS], residual: sacDir, zeroBase: true, logger: quiet,
  });
  try {
    assert.ok(actor.version.startsWith("sac-"));
    const act = (t: number, images?: Record<string, CameraImage>) => actor.act({ names: ep.obsNames, values: ep.obs[t], stamp: toTime(t * 0.1), images });
    const a = await act(0, cameraImages(0, 0));
    assert.equal(actor.holdReason(), null);
    assert.ok(a.every(Number.isFinite));
    const info = actor.lastAction()!;
    assert.ok(info.base.every((b) => b === 0) && info.residual.some((r) => r !== 0), "zero base; the SAC actor's output is the action");
    assert.equal(actor.chunkMs.length, 0, "the base policy never runs");
    await act(1);
    assert.match(actor.holdReason() ?? "", /no frame from camera front yet/);
  } finally {
    await actor.close();
  }
});
