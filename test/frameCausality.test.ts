/**
 * No frame from the future, anywhere a control tick is paired with a camera frame: the LeRobot export (the video
 * frame of each row), the training arrays (readEpisodeArrays: what train-bc, RECAP and --to-learner send), the VLA
 * training dataset (image_<camera>.npy rows), and replay through the node graph (the frames an actor gets). The live
 * experience bridge's transitions: nodes/ExperienceNode.test.ts. Each tick must get the latest frame stamped at or before it, and ticks that no frame
 * precedes have none (dropped from datasets). The cameras here start after the episode and run off the control
 * ticks, every frame's colour says which frame it is, and in the replay log the frames are logged before their
 * stamps, so a player publishing by log time hands them out early: pairing by arrival would take future frames.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { exportLeRobot } from "../data/lerobot/LeRobotExport.ts";
import { readVideoFrames } from "../data/lerobot/ffmpeg.ts";
import { writeVlaDataset } from "../app/vlaDataset.ts";
import { readEpisodeArrays } from "../app/dataset.ts";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { ActorNode } from "../nodes/ActorNode.ts";
import type { Actor, ActorInput } from "../policies/actors/Actor.ts";
import { playLogs } from "../data/LogPlayer.ts";
import { timeNs } from "../contracts/msgs.ts";
import { JOINTS, frameColour, frameFromRed, latestFrameAt, tickNs, tickValues, writeSyntheticEpisode, type SyntheticCamera, type SyntheticEpisode } from "./support/syntheticEpisode.ts";

const root = mkdtempSync(join(tmpdir(), "rlft-causal-"));
const CAMS: SyntheticCamera[] = [
  { name: "front", width: 16, height: 12, firstSec: 0.35, hz: 7 },
  { name: "wrist", width: 8, height: 8, firstSec: 0.15, hz: 4 },
];
const EP: SyntheticEpisode = { ticks: 20, hz: 10, cameras: CAMS, seed: 3, success: true, instruction: "push the red cube to the left target", interventions: [2, 9, 10, 17] };
const file = join(root, "episodes", "episode_000000.mcap");
/** The first tick every camera has a frame for. */
const FIRST = Math.max(...CAMS.map((c) => Array.from({ length: EP.ticks }, (_, i) => i).find((i) => latestFrameAt(c, i, EP.hz) >= 0)!));

before(async () => {
  mkdirSync(join(root, "episodes"));
  await writeSyntheticEpisode(file, EP);
});
after(() => rmSync(root, { recursive: true, force: true }));

test("LeRobot export: each row's video frame is the latest at or before its tick; earlier ticks are left out", async () => {
  const out = join(root, "lerobot");
  const r = await exportLeRobot([file], out);
  assert.equal(r.droppedTicks, FIRST);
  const rows = (await parquetReadObjects({ file: await asyncBufferFromFile(join(out, "data/chunk-000/file-000.parquet")) })) as Record<string, unknown>[];
  assert.equal(rows.length, EP.ticks - FIRST);
  const rlft = JSON.parse(readFileSync(join(out, "meta/rlft_episodes.jsonl"), "utf8"));
  assert.equal(rlft.dropped_ticks, FIRST);
  for (const cam of CAMS) {
    const shown: number[] = [];
    await readVideoFrames(join(out, `videos/observation.images.${cam.name}/chunk-000/file-000.mp4`), cam, (rgb) => shown.push(frameFromRed(rgb[0] / 255)));
    assert.equal(shown.length, rows.length);
    shown.forEach((j, n) => assert.equal(j, latestFrameAt(cam, FIRST + n, EP.hz), `${cam.name} row ${n} (tick ${FIRST + n}) shows frame ${j}`));
  }
});

test("training arrays (readEpisodeArrays): each tick's frames are the latest at or before it; earlier ticks are left out", async () => {
  // Logged before their stamps too: the reader must pair by stamp, not by order in the file.
  const early = join(root, "arrays", "episode_000000.mcap");
  mkdirSync(join(root, "arrays"));
  await writeSyntheticEpisode(early, { ...EP, imageLogLeadNs: 150_000_000n });
  for (const f of [file, early]) {
    const ep = await readEpisodeArrays(f, { cameras: CAMS.map((c) => c.name) });
    assert.equal(ep.ticksWithoutFrames, FIRST, f);
    assert.equal(ep.obs.length, EP.ticks - FIRST, f);
    ep.obs.forEach((o, n) => assert.deepEqual(o.map((v) => Math.round(v * 1e6)), tickValues(FIRST + n, EP.seed).obs.map((v) => Math.round(v * 1e6)), `row ${n} is tick ${FIRST + n}`));
    CAMS.forEach((cam, c) => {
      const frames = ep.images![cam.name];
      const px = frames.width * frames.height * 3;
      assert.equal(frames.data.length, ep.obs.length * px);
      for (let n = 0; n < ep.obs.length; n++) {
        const j = latestFrameAt(cam, FIRST + n, EP.hz);
        assert.deepEqual([...frames.data.subarray(n * px, n * px + 3)], frameColour(c, j), `${f}: ${cam.name} row ${n} (tick ${FIRST + n}) should be frame ${j}`);
      }
    });
  }
});

test("VLA dataset: each tick's image is the latest frame at or before it; earlier ticks are dropped", async () => {
  const out = join(root, "vla");
  const s = await writeVlaDataset(join(root, "episodes"), out, { cameras: ["front"] });
  const front = CAMS[0];
  const first = Array.from({ length: EP.ticks }, (_, i) => i).find((i) => latestFrameAt(front, i, EP.hz) >= 0)!;
  assert.equal(s.ticks, EP.ticks - first);
  const npy = readFileSync(join(out, "image_front.npy"));
  const data = npy.subarray(10 + npy.readUInt16LE(8));
  const px = front.width * front.height * 3;
  assert.equal(data.length, s.ticks * px);
  for (let n = 0; n < s.ticks; n++) {
    const j = latestFrameAt(front, first + n, EP.hz);
    assert.deepEqual([...data.subarray(n * px, n * px + 3)], frameColour(0, j), `row ${n} (tick ${first + n}) is frame ${j}`);
  }
  // RECAP's labels: intervention.npy row n is 1 exactly where the operator commanded tick first + n.
  const iv = readFileSync(join(out, "intervention.npy"));
  const rows = [...iv.subarray(10 + iv.readUInt16LE(8))];
  assert.deepEqual(rows, Array.from({ length: s.ticks }, (_, n) => (EP.interventions!.includes(first + n) ? 1 : 0)));
  const meta = JSON.parse(readFileSync(join(out, "meta.json"), "utf8")) as { episodes: { interventions: number; success: boolean }[] };
  assert.equal(meta.episodes[0].interventions, EP.interventions!.filter((i) => i >= first).length);
  assert.equal(meta.episodes[0].success, true);
});

test("VLA dataset with several cameras: by default every recorded camera, each row pairs every camera's latest frame; a camera the episodes lack is refused by name", async () => {
  const out = join(root, "vla-both");
  const s = await writeVlaDataset(join(root, "episodes"), out);
  assert.deepEqual(s.cameras, ["front", "wrist"]);
  assert.equal(s.ticks, EP.ticks - FIRST, "ticks before every camera has a frame are dropped");
  const meta = JSON.parse(readFileSync(join(out, "meta.json"), "utf8")) as { cameras: { name: string; height: number; width: number }[] };
  assert.deepEqual(meta.cameras, CAMS.map((c) => ({ name: c.name, height: c.height, width: c.width })));
  for (const [c, cam] of CAMS.entries()) {
    const npy = readFileSync(join(out, `image_${cam.name}.npy`));
    const data = npy.subarray(10 + npy.readUInt16LE(8));
    const px = cam.width * cam.height * 3;
    assert.equal(data.length, s.ticks * px);
    for (let n = 0; n < s.ticks; n++) assert.deepEqual([...data.subarray(n * px, n * px + 3)], frameColour(c, latestFrameAt(cam, FIRST + n, EP.hz)), `${cam.name} row ${n}`);
  }
  const wristOnly = await writeVlaDataset(join(root, "episodes"), join(root, "vla-wrist"), { cameras: ["wrist"] });
  assert.deepEqual(wristOnly.cameras, ["wrist"]);
  await assert.rejects(writeVlaDataset(join(root, "episodes"), join(root, "vla-side"), { cameras: ["front", "side"] }), /no frames of camera side \(the dataset has front, side\)/);
});

test("replay through nodes: an actor gets each camera's latest frame at or before the observation, even when later frames arrived first", async () => {
  const early = join(root, "early", "episode_000000.mcap");
  mkdirSync(join(root, "early"));
  await writeSyntheticEpisode(early, { ...EP, imageLogLeadNs: 150_000_000n }); // frames published 0.15 s before their stamps
  const runtime = await EmbeddedRuntime.create({ clock: "sim", logLevel: "warn" });
  const seen: { tick: number; frames: Record<string, number> }[] = [];
  const actor: Actor = {
    jointNames: JOINTS,
    cameras: CAMS.map((c) => c.name),
    reset: () => undefined,
    act: (input: ActorInput) => {
      const tick = Number((timeNs(input.stamp!) - tickNs(0, EP.hz)) / 100_000_000n);
      seen.push({ tick, frames: Object.fromEntries(Object.entries(input.images ?? {}).map(([cam, img]) => [cam, frameFromRed(img.data[0] / 255)])) });
      return JOINTS.map(() => 0);
    },
  };
  const node = new ActorNode(runtime.createNode("policy"), actor, { controlHz: EP.hz });
  try {
    await node.configure();
    await node.activate();
    await playLogs(runtime, [early]);
  } finally {
    await node.shutdown();
    await runtime.shutdown();
  }
  assert.ok(seen.length >= EP.ticks - 1, `acted on ${seen.length} ticks`);
  for (const { tick, frames } of seen) {
    CAMS.forEach((cam, c) => {
      const want = latestFrameAt(cam, tick, EP.hz);
      if (want < 0) assert.equal(frames[cam.name], undefined, `tick ${tick}: ${cam.name} has no frame yet, got frame ${frames[cam.name]} (camera ${c})`);
      else assert.equal(frames[cam.name], want, `tick ${tick}: ${cam.name} gave frame ${frames[cam.name]}, the latest at or before the tick is ${want}`);
    });
  }
});
