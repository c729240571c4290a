/**
 * `rlft dataset export <folder> --format lerobot`: episode logs → a LeRobotDataset, v3.0 (default) or v2.1
 * (layout.ts). Per frame (control tick): observation.state = the /observation vector, action = the executed
 * /joint_command, next.reward / next.done from the episode's end, `intervention` (who acted), timestamp =
 * frame_index / fps. Each camera's rgb8/bgr8 /camera/<name>/image stream becomes observation.images.<name>, a video at
 * the control rate holding, per tick, the latest frame stamped at or before the tick: never a frame from the future.
 * Ticks before every camera has delivered a frame have no such frame and are left out (counted per episode in
 * meta/rlft_episodes.jsonl as `dropped_ticks`). Stats cover every feature (stats.ts). Episodes are read one at a time.
 */
import { appendFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { readEpisodeTrace, succeeded, type EpisodeTrace, type Tick } from "../EpisodeTrace.ts";
import { EpisodeReader } from "../../recording/EpisodeReader.ts";
import { ROBOT_TASKS, TASKS, type SimRobotName } from "../../sim/tasks.ts";
import type { VideoWriter, VIDEO_ENCODERS } from "./ffmpeg.ts";
import type { Feature, LeRobotVersion } from "./layout.ts";
import type { FrameColumn } from "./parquet.ts";
import { ImageStats, vectorStats, type FeatureStats } from "./stats.ts";
import type { LeRobotWriter } from "./writer.ts";
import { WriterV21 } from "./writerV21.ts";
import { WriterV30 } from "./writerV30.ts";

/** Options of {@link exportLeRobot}. */
export interface LeRobotExportOptions {
  /** Layout version (default 3.0, what LeRobot 0.4+ reads). */
  version?: LeRobotVersion;
  /** Video codec (default h264: fast, decoded everywhere; av1 is LeRobot's own default, slower to encode). */
  videoCodec?: keyof typeof VIDEO_ENCODERS;
  /** Skip the cameras. */
  noVideo?: boolean;
  /** v3.0: start a new data / video file past this size (MB; LeRobot's defaults 100 / 200). */
  dataFileMb?: number;
  videoFileMb?: number;
  onEpisode?: (i: number) => void;
  warn?: (m: string) => void;
}

/** What was written. */
export interface LeRobotExportResult {
  dir: string;
  version: LeRobotVersion;
  episodes: number;
  frames: number;
  videos: number;
  cameras: string[];
  skipped: string[];
  /** Ticks left out because some camera had no frame at or before them (episode starts). */
  droppedTicks: number;
}

interface Camera {
  topic: string;
  key: string;
  width: number;
  height: number;
  /** Stamp of its first frame. */
  firstNs: bigint;
}

interface ImageMsg {
  width: number;
  height: number;
  encoding: string;
  step: number;
  data: Uint8Array;
  header: { stamp: { sec: number; nanosec: number } };
}

const f32 = (x: number) => Math.fround(x);
const stampNs = (s: { sec: number; nanosec: number }) => BigInt(s.sec) * 1_000_000_000n + BigInt(s.nanosec);

/** The cameras of an episode: rgb8/bgr8 sensor_msgs/Image topics, named after /camera/<name>/image. */
async function findCameras(file: string): Promise<Camera[]> {
  const r = await EpisodeReader.open(file);
  try {
    const cams: Camera[] = [];
    for (const t of r.topics()) {
      if (t.type !== "sensor_msgs/msg/Image") continue;
      for await (const m of r.messages({ topics: [t.topic] })) {
        const img = m.message as unknown as ImageMsg;
        if (img.encoding === "rgb8" || img.encoding === "bgr8") {
          const name = t.topic.match(/^\/camera\/([^/]+)\//)?.[1] ?? t.topic.replace(/^\//, "").replace(/\//g, "_");
          cams.push({ topic: t.topic, key: `observation.images.${name}`, width: img.width, height: img.height, firstNs: stampNs(img.header.stamp) });
        }
        break;
      }
    }
    return cams.sort((a, b) => a.key.localeCompare(b.key));
  } finally {
    await r.close();
  }
}

/**
 * Streams one camera into `video`: for each tick the latest frame stamped at or before it. Every tick must have one
 * (the caller starts at the first frame). Frames stamped earlier than one already seen (out of order) are ignored.
 */
async function writeCamera(file: string, cam: Camera, tickNs: readonly bigint[], video: VideoWriter): Promise<FeatureStats> {
  const r = await EpisodeReader.open(file);
  const stats = new ImageStats();
  try {
    let last: { rgb: Uint8Array; ns: bigint } | undefined;
    let i = 0;
    const emitUntil = async (limitNs: bigint | null) => {
      for (; i < tickNs.length && (limitNs === null || tickNs[i] < limitNs); i++) {
        if (!last) throw new Error(`${file}: ${cam.topic} has no frame at or before tick ${i} (t=${tickNs[i]} ns)`);
        await video.write(last.rgb);
        stats.push(last.rgb);
      }
    };
    for await (const m of r.messages({ topics: [cam.topic] })) {
      const img = m.message as unknown as ImageMsg;
      const ns = stampNs(img.header.stamp);
      if (last && ns < last.ns) continue;
      if (img.width !== cam.width || img.height !== cam.height) throw new Error(`${file}: ${cam.topic} changes size to ${img.width}×${img.height} (first frame ${cam.width}×${cam.height})`);
      if (img.encoding !== "rgb8" && img.encoding !== "bgr8") throw new Error(`${file}: ${cam.topic} changes encoding to ${img.encoding}`);
      await emitUntil(ns); // ticks strictly before this frame get the previous one
      const rgb = new Uint8Array(cam.width * cam.height * 3);
      for (let y = 0; y < cam.height; y++) rgb.set(img.data.subarray(y * img.step, y * img.step + cam.width * 3), y * cam.width * 3);
      if (img.encoding === "bgr8") for (let p = 0; p < rgb.length; p += 3) [rgb[p], rgb[p + 2]] = [rgb[p + 2], rgb[p]];
      last = { rgb, ns };
    }
    await emitUntil(null);
  } finally {
    await r.close();
  }
  return stats.result();
}

/** The episode's data columns, in LeRobot's order (features, then timestamp/frame_index/episode_index/index/task_index). */
function frameColumns(obsD: number, actD: number): FrameColumn[] {
  return [
    { name: "observation.state", dtype: "float32", length: obsD },
    { name: "action", dtype: "float32", length: actD },
    { name: "next.reward", dtype: "float32" },
    { name: "next.done", dtype: "bool" },
    { name: "intervention", dtype: "bool" },
    { name: "timestamp", dtype: "float32" },
    { name: "frame_index", dtype: "int64" },
    { name: "episode_index", dtype: "int64" },
    { name: "index", dtype: "int64" },
    { name: "task_index", dtype: "int64" },
  ];
}

/** The features of info.json for these columns and cameras, in LeRobot's order. */
function featuresOf(columns: readonly FrameColumn[], names: { obs: string[]; act: string[] }, cams: readonly Camera[], fps: number, codec: string): Record<string, Feature> {
  const f: Record<string, Feature> = {};
  for (const c of columns) {
    if (c.name === "observation.state") f[c.name] = { dtype: "float32", shape: [c.length!], names: names.obs };
    else if (c.name === "action") {
      f[c.name] = { dtype: "float32", shape: [c.length!], names: names.act };
      for (const cam of cams) {
        f[cam.key] = {
          dtype: "video",
          shape: [cam.height, cam.width, 3],
          names: ["height", "width", "channels"],
          info: { "video.height": cam.height, "video.width": cam.width, "video.codec": codec, "video.pix_fmt": "yuv420p", "video.is_depth_map": false, "video.fps": fps, "video.channels": 3, has_audio: false },
        };
      }
    } else f[c.name] = { dtype: c.dtype, shape: [1], names: null };
  }
  return f;
}

/** Writes the episodes in `files` as a LeRobotDataset in `out` (which must not hold one already). */
export async function exportLeRobot(files: readonly string[], out: string, opts: LeRobotExportOptions = {}): Promise<LeRobotExportResult> {
  if (existsSync(out) && readdirSync(out).length) throw new Error(`${out} is not empty — export into a new directory`);
  mkdirSync(join(out, "meta"), { recursive: true });
  const version = opts.version ?? "3.0";
  const codec = opts.videoCodec ?? "h264";
  const tasks = new Map<string, number>();
  let fps = 0;
  let robot: string | null = null;
  let index = 0;
  let episodes = 0;
  let dropped = 0;
  let writer: LeRobotWriter | null = null;
  let cameras: Camera[] | null = null;
  let columns: FrameColumn[] | null = null;
  let names = { obs: [] as string[], act: [] as string[] };
  const skipped: string[] = [];
  try {
    for (const file of files) {
      const tr = await readEpisodeTrace(file);
      const ticks = tr.ticks.filter((k) => k.obs.length && k.executed.length);
      if (!ticks.length) {
        skipped.push(`${file}: no ticks with both /observation and /joint_command`);
        continue;
      }
      if (tr.damageNote) opts.warn?.(tr.damageNote);
      const hz = Number(tr.info.control_hz ?? 0) || Math.round(1 / Number((ticks[1]?.timeNs ?? ticks[0].timeNs + 100_000_000n) - ticks[0].timeNs) * 1e9);
      if (fps && hz !== fps) {
        skipped.push(`${file}: recorded at ${hz} Hz, the dataset is ${fps} Hz`);
        continue;
      }
      const obsD = ticks[0].obs.length;
      const actD = ticks[0].executed.length;
      if (columns && (columns[0].length !== obsD || columns[1].length !== actD)) {
        skipped.push(`${file}: observation/action sizes ${obsD}/${actD} differ from the dataset's ${columns[0].length}/${columns[1].length}`);
        continue;
      }
      const found = opts.noVideo ? [] : await findCameras(file);
      const cams: Camera[] = cameras ?? found;
      const missing = cams.filter((c) => !found.some((f) => f.key === c.key && f.width === c.width && f.height === c.height));
      if (missing.length) {
        skipped.push(`${file}: no ${missing.map((c) => `${c.width}×${c.height} rgb8 ${c.topic}`).join(", ")} as the dataset's first episode has (LeRobot needs every camera in every episode; export with --no-video to leave cameras out)`);
        continue;
      }
      const extra = found.filter((f) => !cams.some((c) => c.key === f.key));
      if (extra.length) opts.warn?.(`${file}: ${extra.map((c) => c.topic).join(", ")} left out (not in the dataset's first episode)`);
      // No frame from the future: the episode starts at the first tick at or after every camera's first frame.
      const firstFrame = cams.reduce((a, c) => (c.firstNs > a ? c.firstNs : a), 0n);
      const start = ticks.findIndex((k) => k.timeNs >= firstFrame);
      if (start < 0) {
        skipped.push(`${file}: no tick at or after the first camera frame (${cams.map((c) => c.topic).join(", ")})`);
        continue;
      }
      const frames = ticks.slice(start);
      fps ||= hz;
      cameras ??= cams;
      columns ??= frameColumns(obsD, actD);
      if (!names.obs.length) names = { obs: tr.obsNames, act: tr.jointNames };
      writer ??= version === "3.0" ? new WriterV30(out, { fps, codec, dataFileMb: opts.dataFileMb, videoFileMb: opts.videoFileMb }) : new WriterV21(out, { fps, codec });
      const period = 1e9 / fps;
      if (frames.some((k, i) => Math.abs(Number(k.timeNs - frames[0].timeNs) - i * period) > period / 2)) {
        opts.warn?.(`${file}: ticks are not evenly spaced at ${fps} Hz (dropped ticks?); timestamps are written as frame_index / fps`);
      }
      robot ??= tr.info.robot ?? null;
      // A sim task's description; a Gymnasium env's task (driver gym) is its own name, whatever a sim task is called.
      const robotTasks: Record<string, { description: string } | undefined> = tr.info.driver === "gym" ? {} : (ROBOT_TASKS[(tr.info.robot ?? "rlft_arm5") as SimRobotName] ?? TASKS);
      const taskText = (tr.info.task !== undefined && Object.hasOwn(robotTasks, tr.info.task) ? robotTasks[tr.info.task]?.description : undefined) ?? tr.info.task ?? "unknown";
      if (!tasks.has(taskText)) tasks.set(taskText, tasks.size);
      const ep = episodes;
      const stats: Record<string, FeatureStats> = {};
      for (const cam of cams) {
        const video = await writer.video(cam.key, ep, cam);
        stats[cam.key] = await writeCamera(file, cam, frames.map((k) => k.timeNs), video);
        await writer.endVideo(cam.key, frames.length);
      }
      const data = episodeData(frames, { ep, from: index, fps, taskIndex: tasks.get(taskText)!, success: succeeded(tr) });
      for (const c of columns) stats[c.name] = vectorStats(c.length === undefined ? (data[c.name] as (number | bigint | boolean)[]).map((v) => [Number(v)]) : (data[c.name] as number[][]));
      await writer.episode({ index: ep, from: index, length: frames.length, tasks: [taskText], columns, data, stats: orderStats(stats, columns, cams), imageKeys: cams.map((c) => c.key) });
      appendFileSync(join(out, "meta", "rlft_episodes.jsonl"), JSON.stringify(sourceRecord(tr, ep, start, frames[0])) + "\n");
      index += frames.length;
      dropped += start;
      episodes++;
      opts.onEpisode?.(episodes);
    }
    if (!writer || !columns) throw new Error(`none of the ${files.length} episodes could be exported:\n  ${skipped.join("\n  ")}`);
    const videos = await writer.finish({ robotType: robot, fps, features: featuresOf(columns, names, cameras ?? [], fps, codec), tasks: [...tasks.keys()], episodes, frames: index });
    return { dir: out, version, episodes, frames: index, videos, cameras: (cameras ?? []).map((c) => c.key), skipped, droppedTicks: dropped };
  } catch (err) {
    await writer?.abort();
    throw err;
  }
}

/** Column data of one episode's frames. */
function episodeData(frames: readonly Tick[], o: { ep: number; from: number; fps: number; taskIndex: number; success: boolean }): Record<string, unknown[]> {
  const n = frames.length;
  return {
    "observation.state": frames.map((k) => k.obs.map(f32)),
    action: frames.map((k) => k.executed.map(f32)),
    "next.reward": frames.map((_, i) => (o.success && i === n - 1 ? 1 : 0)),
    "next.done": frames.map((_, i) => i === n - 1),
    intervention: frames.map((k) => k.intervention),
    timestamp: frames.map((_, i) => f32(i / o.fps)),
    frame_index: frames.map((_, i) => BigInt(i)),
    episode_index: frames.map(() => BigInt(o.ep)),
    index: frames.map((_, i) => BigInt(o.from + i)),
    task_index: frames.map(() => BigInt(o.taskIndex)),
  };
}

/** Stats in the features' order (state, action, cameras, the rest). */
function orderStats(stats: Record<string, FeatureStats>, columns: readonly FrameColumn[], cams: readonly Camera[]): Record<string, FeatureStats> {
  const keys = [columns[0].name, columns[1].name, ...cams.map((c) => c.key), ...columns.slice(2).map((c) => c.name)];
  return Object.fromEntries(keys.map((k) => [k, stats[k]]));
}

/**
 * What rlft knows about the episode beyond LeRobot's fields (meta/rlft_episodes.jsonl), for `dataset import`. The
 * source is the log's file name only: no path of the exporting machine goes into the dataset.
 */
function sourceRecord(tr: EpisodeTrace, ep: number, dropped: number, first: Tick) {
  return {
    episode_index: ep,
    source_file: basename(tr.file),
    task: tr.info.task,
    robot: tr.info.robot,
    seed: tr.info.seed,
    outcome: tr.outcome,
    success: succeeded(tr),
    policy_version: tr.info.policy_version,
    control_hz: tr.info.control_hz,
    joint_names: tr.jointNames,
    // Leading ticks without a frame from every camera, left out; the first exported tick's time in the episode.
    dropped_ticks: dropped,
    first_tick_sec: first.t,
  };
}
