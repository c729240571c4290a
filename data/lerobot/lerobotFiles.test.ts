/**
 * LeRobotDataset v3.0 file packing, read back by hyparquet (an independent parquet reader) and by rlft's importer:
 * episodes share a data file and an MP4 per camera (offsets in meta/episodes), or, past the size limits, go to the
 * next chunk file. Either way every episode imports back with its own rows and its own video frames.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { exportLeRobot } from "./LeRobotExport.ts";
import { importLeRobot } from "./LeRobotImport.ts";
import { EpisodeReader } from "../../recording/EpisodeReader.ts";
import { TASKS } from "../../sim/tasks.ts";
import { frameFromRed, latestFrameAt, tickValues, writeSyntheticEpisode, type SyntheticCamera, type SyntheticEpisode } from "../../test/support/syntheticEpisode.ts";

const root = mkdtempSync(join(tmpdir(), "rlft-lerobot-files-"));
const CAM: SyntheticCamera = { name: "front", width: 16, height: 8, firstSec: 0.2, hz: 10 };
const EPISODES: SyntheticEpisode[] = [11, 9, 13].map((ticks, i) => ({ ticks, hz: 10, cameras: [CAM], seed: 20 + i, success: i !== 1 }));
const files = EPISODES.map((_, i) => join(root, "episodes", `episode_${String(i).padStart(6, "0")}.mcap`));

before(async () => {
  mkdirSync(join(root, "episodes"));
  for (const [i, e] of EPISODES.entries()) await writeSyntheticEpisode(files[i], e);
});
after(() => rmSync(root, { recursive: true, force: true }));

async function rows(file: string): Promise<Record<string, unknown>[]> {
  return (await parquetReadObjects({ file: await asyncBufferFromFile(file) })) as Record<string, unknown>[];
}

/** Every imported episode holds its own ticks and frames (the frame of tick i is the latest at or before it). */
async function checkImport(dir: string): Promise<void> {
  const back = await importLeRobot(dir, join(dir, "..", `${dir.split("/").at(-1)}-imported`));
  assert.equal(back.episodes, EPISODES.length);
  for (const [e, ep] of EPISODES.entries()) {
    const r = await EpisodeReader.open(back.files[e]);
    try {
      const t = await r.byTopic();
      const obs = t.get("/observation")!.map((m) => (m.message as { values: number[] }).values);
      const first = ep.ticks - obs.length;
      assert.equal(first, 2, "ticks before the camera's first frame (0.2 s) are not exported");
      obs.forEach((v, n) => v.forEach((x, k) => assert.ok(Math.abs(x - tickValues(first + n, ep.seed).obs[k]) < 1e-6)));
      const frames = t.get("/camera/front/image")!.map((m) => frameFromRed((m.message as { data: Uint8Array }).data[0] / 255));
      assert.deepEqual(frames, obs.map((_, n) => latestFrameAt(CAM, first + n, ep.hz)), `episode ${e}'s frames`);
    } finally {
      await r.close();
    }
  }
}

test("v3.0: episodes share data/…/file-000.parquet and one MP4 per camera, located by meta/episodes; import splits them back", async () => {
  const out = join(root, "packed");
  const r = await exportLeRobot(files, out);
  assert.equal(r.videos, 1);
  const eps = await rows(join(out, "meta/episodes/chunk-000/file-000.parquet"));
  const lengths = EPISODES.map((e) => e.ticks - 2);
  let from = 0;
  eps.forEach((row, e) => {
    assert.equal(row.episode_index, BigInt(e));
    assert.equal(row["data/file_index"], 0n);
    assert.equal(row.dataset_from_index, BigInt(from));
    assert.equal(row.dataset_to_index, BigInt(from + lengths[e]));
    assert.equal(row["videos/observation.images.front/file_index"], 0n);
    assert.ok(Math.abs((row["videos/observation.images.front/from_timestamp"] as number) - from / 10) < 1e-9);
    assert.ok(Math.abs((row["videos/observation.images.front/to_timestamp"] as number) - (from + lengths[e]) / 10) < 1e-9);
    assert.deepEqual(row["stats/observation.images.front/count"], [BigInt(lengths[e])], "image stats count frames");
    assert.deepEqual(row["stats/observation.images.front/mean"]?.constructor, Array);
    from += lengths[e];
  });
  assert.equal((await rows(join(out, "data/chunk-000/file-000.parquet"))).length, from);
  const tasks = await rows(join(out, "meta/tasks.parquet"));
  assert.deepEqual(tasks, [{ task_index: 0n, __index_level_0__: TASKS.push_cube.description }], "the task table as pandas writes it: strings in the index column");
  const stats = JSON.parse(readFileSync(join(out, "meta/stats.json"), "utf8"));
  assert.deepEqual(stats["observation.images.front"].count, [from]);
  assert.deepEqual(stats["next.done"].count, [from]);
  assert.deepEqual(stats.intervention.max, [0]);
  await checkImport(out);
});

test("v3.0: past the size limits each episode starts the next file (chunk-000/file-001 ...); import follows meta/episodes", async () => {
  const out = join(root, "rotated");
  const r = await exportLeRobot(files, out, { dataFileMb: 0, videoFileMb: 0 });
  assert.equal(r.videos, EPISODES.length);
  const eps = await rows(join(out, "meta/episodes/chunk-000/file-000.parquet"));
  eps.forEach((row, e) => {
    assert.equal(row["data/file_index"], BigInt(e));
    assert.equal(row["videos/observation.images.front/file_index"], BigInt(e));
    assert.equal(row["videos/observation.images.front/from_timestamp"], 0);
  });
  for (let e = 0; e < EPISODES.length; e++) assert.equal((await rows(join(out, `data/chunk-000/file-00${e}.parquet`))).length, EPISODES[e].ticks - 2);
  await checkImport(out);
});

test("import refuses a malformed or hostile dataset with one clear error naming the file and what was expected", async () => {
  const good = join(root, "hostile-base");
  await exportLeRobot(files.slice(0, 1), good);
  const variant = (name: string, edit: (info: Record<string, unknown> & { features: Record<string, Record<string, unknown>> }) => unknown, raw?: string) => {
    const dir = join(root, `hostile-${name}`);
    cpSync(good, dir, { recursive: true });
    const path = join(dir, "meta", "info.json");
    if (raw !== undefined) writeFileSync(path, raw);
    else {
      const info = JSON.parse(readFileSync(path, "utf8"));
      edit(info);
      writeFileSync(path, JSON.stringify(info));
    }
    return dir;
  };
  const cases: [string, RegExp][] = [
    [variant("json", () => undefined, "{ not json"), /info\.json is not valid JSON/],
    [variant("fps", (i) => (i.fps = 0)), /fps is 0; expected a rate in Hz/],
    [variant("escape", (i) => (i.video_path = "../../../{video_key}.mp4")), /outside the dataset — refusing to read it/],
    [variant("absolute", (i) => (i.video_path = "/etc/{video_key}")), /outside the dataset/],
    [variant("shape", (i) => (i.features["observation.state"].shape = [99])), /episode 0 frame 0: observation\.state is 5 values; info\.json says 99/],
    [variant("name", (i) => (i.features["observation.images.x/../../y"] = { ...i.features["observation.images.front"] })), /video feature name .* has characters/],
    [variant("nostate", (i) => delete i.features["observation.state"]), /features need observation\.state and action/],
  ];
  for (const [dir, pattern] of cases) await assert.rejects(importLeRobot(dir, join(dir, "..", `${dir.split("/").at(-1)}-out`)), pattern, dir);
});
