/**
 * LeRobot as the peer (huggingface/lerobot, pip-installed: learner/peers-aside.txt): its own `LeRobotDataset` loads
 * what `rlft dataset export` wrote, v3.0 directly and v2.1 through LeRobot's v2.1 → v3.0 converter (frames, decoded
 * video, stats recomputed with LeRobot's code), and v2.1 as it is with LeRobot 0.3, the last release that reads it, and `rlft dataset import` reads datasets LeRobot itself recorded with
 * its API, v3.0 (LeRobot 0.4) and v2.1 (LeRobot 0.3). The synthetic episodes' cameras start late and run off the
 * control ticks, and each frame's colour says which it is: a tick paired with a frame from its future fails here.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportLeRobot, type LeRobotExportResult } from "../../data/lerobot/LeRobotExport.ts";
import { importLeRobot } from "../../data/lerobot/LeRobotImport.ts";
import { EpisodeReader } from "../../recording/EpisodeReader.ts";
import { TASKS } from "../../sim/tasks.ts";
import { DATASETS_FOR_V21, LEROBOT, runPeer } from "./peers.ts";
import { frameFromRed, latestFrameAt, tickValues, writeSyntheticEpisode, type SyntheticCamera, type SyntheticEpisode } from "../support/syntheticEpisode.ts";

const root = mkdtempSync(join(tmpdir(), "rlft-lerobot-"));
const CAMS: SyntheticCamera[] = [
  { name: "front", width: 32, height: 24, firstSec: 0.45, hz: 7 },
  { name: "wrist", width: 16, height: 16, firstSec: 0.25, hz: 5 },
];
const EPISODES: SyntheticEpisode[] = [
  { ticks: 24, hz: 10, cameras: CAMS, seed: 11, success: true, interventions: [8, 9, 10] },
  { ticks: 18, hz: 10, cameras: CAMS, seed: 12, success: false },
];
const files = EPISODES.map((_, i) => join(root, "episodes", `episode_${String(i).padStart(6, "0")}.mcap`));

before(async () => {
  mkdirSync(join(root, "episodes"));
  for (const [i, e] of EPISODES.entries()) await writeSyntheticEpisode(files[i], e);
});

after(() => rmSync(root, { recursive: true, force: true }));

interface Loaded {
  codebase_version: string;
  len: number;
  num_episodes: number;
  fps: number;
  video_keys: string[];
  features: string[];
  tasks: string[];
  stats_keys: string[];
  image_counts: Record<string, number[]>;
  stat_diff: Record<string, Record<string, number | string>>;
  agg_diff: Record<string, Record<string, number | string>>;
  arrow_types: Record<string, string>;
  hf_metadata: string;
  items: Record<string, unknown>[];
}

/** Every file under `dir`, for the "no path of the exporting machine" check. */
function allFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? allFiles(join(dir, n)) : [join(dir, n)]));
}

/** What LeRobot loaded against what the synthetic episodes hold. */
function checkLoaded(got: Loaded, r: LeRobotExportResult, version = "v3.0"): void {
  assert.equal(got.codebase_version, version);
  assert.equal(got.len, r.frames);
  assert.equal(got.num_episodes, 2);
  assert.equal(got.fps, 10);
  assert.deepEqual(got.video_keys.sort(), ["observation.images.front", "observation.images.wrist"]);
  assert.deepEqual(got.tasks, [TASKS.push_cube.description]);
  // Stats for every non-string feature, as LeRobot writes them; image counts are frames.
  for (const f of ["observation.state", "action", "next.reward", "next.done", "intervention", "timestamp", "frame_index", "episode_index", "index", "task_index", ...got.video_keys]) {
    assert.ok(got.stats_keys.includes(f), `stats for ${f}`);
  }
  const lengths = [0, 1].map((e) => got.items.filter((it) => it.episode_index === e).length);
  for (const k of got.video_keys) assert.deepEqual(got.image_counts[k], lengths, `${k} count = frames per episode`);
  // Our stats against LeRobot's get_feature_stats on the frames it loaded. Quantiles: the same 5000-bin estimator,
  // compared in bins (a value on a bin edge may land in the neighbour). Images: ours come from the frames before
  // encoding, LeRobot's here from the decoded h264 (lossy).
  for (const [feature, stats] of Object.entries(got.stat_diff)) {
    const image = feature.startsWith("observation.images.");
    for (const [stat, d] of Object.entries(stats)) {
      assert.equal(typeof d, "number", `${feature}/${stat}: ${d}`);
      const tol = stat === "count" ? 0 : image ? 0.03 : stat.startsWith("q") ? 1.01 : 1e-5;
      assert.ok((d as number) <= tol, `${feature}/${stat} differs from LeRobot's by ${d} (allowed ${tol})`);
    }
  }
  for (const [feature, stats] of Object.entries(got.agg_diff)) for (const [stat, d] of Object.entries(stats)) assert.ok(typeof d === "number" && d < 1e-9, `meta/stats.json ${feature}/${stat} vs LeRobot's aggregate_stats: ${d}`);
  // Frames: values, flags and, through LeRobot's video decoding, which camera frame each tick got.
  let dropped = 0;
  for (const [e, ep] of EPISODES.entries()) {
    const rows = got.items.filter((it) => it.episode_index === e);
    const first = ep.ticks - rows.length; // ticks before every camera's first frame are left out
    dropped += first;
    assert.equal(first, Math.max(...CAMS.map((c) => Array.from({ length: ep.ticks }, (_, i) => i).find((i) => latestFrameAt(c, i, ep.hz) >= 0)!)));
    rows.forEach((it, n) => {
      const tick = first + n;
      const { obs, action } = tickValues(tick, ep.seed);
      (it["observation.state"] as number[]).forEach((v, k) => assert.ok(Math.abs(v - obs[k]) < 1e-6));
      (it.action as number[]).forEach((v, k) => assert.ok(Math.abs(v - action[k]) < 1e-6));
      assert.equal(it.frame_index, n);
      assert.ok(Math.abs((it.timestamp as number) - n / 10) < 1e-6);
      assert.equal(it.intervention, ep.interventions?.includes(tick) ?? false);
      assert.equal(it["next.done"], n === rows.length - 1);
      assert.equal(it["next.reward"], ep.success && n === rows.length - 1 ? 1 : 0);
      assert.equal(it.task, TASKS.push_cube.description);
      CAMS.forEach((cam) => {
        const shown = frameFromRed((it[`observation.images.${cam.name}#mean`] as number[])[0]);
        assert.equal(shown, latestFrameAt(cam, tick, ep.hz), `episode ${e} tick ${tick}: ${cam.name} shows frame ${shown}, the latest at or before the tick is ${latestFrameAt(cam, tick, ep.hz)}`);
      });
    });
  }
  assert.equal(dropped, r.droppedTicks);
  assert.match(got.arrow_types["observation.state"], /^fixed_size_list<.*: float>\[5\]$/);
  assert.match(got.arrow_types.action, /^fixed_size_list<.*: float>\[3\]$/);
}

test(`LeRobot ${LEROBOT.v30} loads rlft's v3.0 export, and its v2.1 export after LeRobot's own converter: frames, decoded videos (no frame from the future), stats`, async () => {
  const v30 = join(root, "v30");
  const v21 = join(root, "v21");
  const r30 = await exportLeRobot(files, v30);
  const r21 = await exportLeRobot(files, v21, { version: "2.1" });
  assert.equal(r30.version, "3.0");
  assert.equal(JSON.parse(readFileSync(join(v21, "meta", "info.json"), "utf8")).codebase_version, "v2.1");
  for (const f of [...allFiles(v30), ...allFiles(v21)]) assert.ok(!readFileSync(f).includes(root), `${f} holds a path of the exporting machine`);
  const [got30, got21] = runPeer<Loaded[]>("lerobot_load.py", [v30, v21], { tmp: root, lerobot: LEROBOT.v30 });
  checkLoaded(got30, r30);
  assert.deepEqual(JSON.parse(got30.hf_metadata).info.features["observation.state"], { feature: { dtype: "float32", _type: "Value" }, length: 5, _type: "List" });
  checkLoaded(got21, r21);
  assert.deepEqual(JSON.parse(got21.hf_metadata).info.features.action, { feature: { dtype: "float32", _type: "Value" }, length: 3, _type: "Sequence" });
});

test(`LeRobot ${LEROBOT.v21} (the v2.1 reader, with datasets ${DATASETS_FOR_V21}) loads rlft's v2.1 export as it is: frames, decoded videos (no frame from the future), stats`, async () => {
  const v21 = join(root, "v21-native");
  const r = await exportLeRobot(files, v21, { version: "2.1" });
  const [got] = runPeer<Loaded[]>("lerobot_load.py", [v21], { tmp: root, lerobot: LEROBOT.v21, aside: [["datasets", DATASETS_FOR_V21]] });
  checkLoaded(got, r, "v2.1");
  assert.deepEqual(JSON.parse(got.hf_metadata).info.features.action, { feature: { dtype: "float32", _type: "Value" }, length: 3, _type: "Sequence" });
});

interface Written {
  codebase_version: string;
  fps: number;
  episodes: { task: string; state: number[][]; action: number[][]; colour: number[][] }[];
}

for (const [version, release] of [["v3.0", LEROBOT.v30], ["v2.1", LEROBOT.v21]] as const) {
  test(`rlft dataset import reads a ${version} dataset that LeRobot ${release} recorded with its own API`, async () => {
    const dir = join(root, `lerobot-written-${version}`);
    const w = runPeer<Written>("lerobot_write.py", [dir], { tmp: root, lerobot: release });
    assert.equal(w.codebase_version, version);
    const out = join(root, `imported-${version}`);
    const back = await importLeRobot(dir, out);
    assert.equal(back.episodes, 2);
    for (const [e, ep] of w.episodes.entries()) {
      const r = await EpisodeReader.open(back.files[e]);
      try {
        assert.equal(r.episode?.task, ep.task);
        assert.equal(r.episode?.robot, "so100_follower");
        const topics = await r.byTopic();
        const obs = topics.get("/observation")!.map((m) => m.message as { names: string[]; values: number[] });
        assert.equal(obs.length, ep.state.length);
        assert.deepEqual(obs[0].names, ["q0", "q1", "q2", "gripper"]);
        obs.forEach((o, i) => o.values.forEach((v, k) => assert.ok(Math.abs(v - ep.state[i][k]) < 1e-6)));
        const cmd = topics.get("/joint_command")!.map((m) => m.message as { position: number[] });
        cmd.forEach((c, i) => c.position.forEach((v, k) => assert.ok(Math.abs(v - ep.action[i][k]) < 1e-6)));
        const frames = topics.get("/camera/top/image")!.map((m) => m.message as { data: Uint8Array; width: number });
        assert.equal(frames.length, ep.colour.length, "one decoded frame per LeRobot frame, from this episode's part of the video");
        frames.forEach((f, i) => {
          assert.equal(f.width, 64);
          const px = [0, 1, 2].map((c) => f.data[(32 * 64 + 32) * 3 + c]);
          px.forEach((v, c) => assert.ok(Math.abs(v - ep.colour[i][c]) <= 6, `episode ${e} frame ${i} channel ${c}: ${v} vs ${ep.colour[i][c]}`));
        });
      } finally {
        await r.close();
      }
    }
  });
}
