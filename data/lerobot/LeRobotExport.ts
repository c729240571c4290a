/**
 * `rlft dataset export <folder> --format lerobot`: episode logs → a LeRobotDataset (v2.1 layout, data/lerobot/layout.ts).
 * Per frame (control tick): observation.state = the /observation vector, action = the executed /joint_command,
 * timestamp = frame_index / fps, next.reward / next.done from the episode's end, and `intervention` (who acted).
 * Each camera's rgb8 /camera/<name>/image stream becomes observation.images.<name>, one MP4 per episode at the
 * control rate (the latest frame at or before each tick), encoded by ffmpeg. Episodes are read one at a time.
 */
import { mkdirSync, writeFileSync, appendFileSync, existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { parquetWriteFile } from "hyparquet-writer";
import { readEpisodeTrace, succeeded, type EpisodeTrace } from "../EpisodeTrace.ts";
import { EpisodeReader } from "../../recording/EpisodeReader.ts";
import { RunningStats } from "../DatasetStats.ts";
import { ROBOT_TASKS, TASKS, type SimRobotName } from "../../sim/tasks.ts";
import { openVideoWriter, type VideoWriter, type VIDEO_ENCODERS } from "./ffmpeg.ts";
import { CHUNKS_SIZE, DATA_PATH, LEROBOT_VERSION, VIDEO_PATH, formatPath, type Feature, type LeRobotInfo } from "./layout.ts";

/** Options of {@link exportLeRobot}. */
export interface LeRobotExportOptions {
  /** Video codec (default h264: fast, decoded everywhere; av1 is LeRobot's own default, slower to encode). */
  videoCodec?: keyof typeof VIDEO_ENCODERS;
  /** Skip the cameras. */
  noVideo?: boolean;
  onEpisode?: (i: number) => void;
  warn?: (m: string) => void;
}

/** What was written. */
export interface LeRobotExportResult {
  dir: string;
  episodes: number;
  frames: number;
  videos: number;
  cameras: string[];
  skipped: string[];
}

interface Camera {
  topic: string;
  key: string;
  width: number;
  height: number;
}

const f32 = (x: number) => Math.fround(x);

/** The cameras of an episode: rgb8/bgr8 sensor_msgs/Image topics, named after /camera/<name>/image. */
async function findCameras(file: string): Promise<Camera[]> {
  const r = await EpisodeReader.open(file);
  try {
    const cams: Camera[] = [];
    for (const t of r.topics()) {
      if (t.type !== "sensor_msgs/msg/Image") continue;
      for await (const m of r.messages({ topics: [t.topic] })) {
        const img = m.message as { width: number; height: number; encoding: string };
        if (img.encoding === "rgb8" || img.encoding === "bgr8") {
          const name = t.topic.match(/^\/camera\/([^/]+)\//)?.[1] ?? t.topic.replace(/^\//, "").replace(/\//g, "_");
          cams.push({ topic: t.topic, key: `observation.images.${name}`, width: img.width, height: img.height });
        }
        break;
      }
    }
    return cams;
  } finally {
    await r.close();
  }
}

/** Streams one camera into `video`, one frame per tick time (sample and hold). Returns per-channel stats in [0, 1]. */
async function writeCamera(file: string, cam: Camera, tickNs: readonly bigint[], video: VideoWriter): Promise<RunningStats> {
  const r = await EpisodeReader.open(file);
  const stats = new RunningStats();
  try {
    let last: Uint8Array | undefined;
    let i = 0;
    const emit = async (rgb: Uint8Array) => {
      await video.write(rgb);
      for (let p = 0; p < rgb.length; p += 3 * 17) stats.push([rgb[p] / 255, rgb[p + 1] / 255, rgb[p + 2] / 255]); // a pixel sample
    };
    for await (const m of r.messages({ topics: [cam.topic] })) {
      const img = m.message as { width: number; height: number; encoding: string; step: number; data: Uint8Array; header: { stamp: { sec: number; nanosec: number } } };
      const stamp = BigInt(img.header.stamp.sec) * 1_000_000_000n + BigInt(img.header.stamp.nanosec);
      if (img.width !== cam.width || img.height !== cam.height) throw new Error(`${file}: ${cam.topic} changes size to ${img.width}×${img.height} (first frame ${cam.width}×${cam.height})`);
      const rgb = new Uint8Array(cam.width * cam.height * 3);
      for (let y = 0; y < cam.height; y++) rgb.set(img.data.subarray(y * img.step, y * img.step + cam.width * 3), y * cam.width * 3);
      if (img.encoding === "bgr8") for (let p = 0; p < rgb.length; p += 3) [rgb[p], rgb[p + 2]] = [rgb[p + 2], rgb[p]];
      last ??= rgb; // ticks before the first frame show the first frame
      for (; i < tickNs.length && tickNs[i] < stamp; i++) await emit(last!);
      last = rgb;
    }
    if (!last) last = new Uint8Array(cam.width * cam.height * 3);
    for (; i < tickNs.length; i++) await emit(last);
  } finally {
    await r.close();
  }
  return stats;
}

function statsJson(rs: RunningStats, image = false): Record<string, unknown> {
  const wrap = (v: number[]) => (image ? v.map((x) => [[x]]) : v);
  return { min: wrap(rs.min), max: wrap(rs.max), mean: wrap(rs.mean), std: wrap(rs.std), count: [rs.n] };
}

/** Writes the episodes in `files` as a LeRobotDataset in `out` (which must not hold one already). */
export async function exportLeRobot(files: readonly string[], out: string, opts: LeRobotExportOptions = {}): Promise<LeRobotExportResult> {
  if (existsSync(out) && readdirSync(out).length) throw new Error(`${out} is not empty — export into a new directory`);
  mkdirSync(join(out, "meta"), { recursive: true });
  const codec = opts.videoCodec ?? "h264";
  const tasks = new Map<string, number>();
  const features: Record<string, Feature> = {};
  let fps = 0;
  let robot: string | null = null;
  let index = 0;
  let episodes = 0;
  let videos = 0;
  const cameras = new Map<string, Camera>();
  const cameraEpisodes = new Map<string, number>();
  const skipped: string[] = [];
  for (const file of files) {
    const tr = await readEpisodeTrace(file);
    const frames = tr.ticks.filter((k) => k.obs.length && k.executed.length);
    if (!frames.length) {
      skipped.push(`${file}: no ticks with both /observation and /joint_command`);
      continue;
    }
    if (tr.damageNote) opts.warn?.(tr.damageNote);
    const hz = Number(tr.info.control_hz ?? 0) || Math.round(1 / Number((frames[1]?.timeNs ?? frames[0].timeNs + 100_000_000n) - frames[0].timeNs) * 1e9);
    if (!fps) fps = hz;
    else if (hz !== fps) {
      skipped.push(`${file}: recorded at ${hz} Hz, the dataset is ${fps} Hz`);
      continue;
    }
    const period = 1e9 / fps;
    const jitter = frames.some((k, i) => Math.abs(Number(k.timeNs - frames[0].timeNs) - i * period) > period / 2);
    if (jitter) opts.warn?.(`${file}: ticks are not evenly spaced at ${fps} Hz (dropped ticks?); timestamps are written as frame_index / fps`);
    robot ??= tr.info.robot ?? null;
    const ep = episodes;
    const chunk = Math.floor(ep / CHUNKS_SIZE);
    const robotTasks: Record<string, { description: string } | undefined> = ROBOT_TASKS[(tr.info.robot ?? "rlft_arm5") as SimRobotName] ?? TASKS;
    const taskText = robotTasks[tr.info.task]?.description ?? tr.info.task ?? "unknown";
    if (!tasks.has(taskText)) tasks.set(taskText, tasks.size);
    const taskIndex = tasks.get(taskText)!;
    const n = frames.length;
    const success = succeeded(tr);
    const obsD = frames[0].obs.length;
    const actD = frames[0].executed.length;
    features["observation.state"] ??= { dtype: "float32", shape: [obsD], names: tr.obsNames };
    features.action ??= { dtype: "float32", shape: [actD], names: tr.jointNames };
    if (features["observation.state"].shape[0] !== obsD || features.action.shape[0] !== actD) {
      skipped.push(`${file}: observation/action sizes ${obsD}/${actD} differ from the dataset's ${features["observation.state"].shape[0]}/${features.action.shape[0]}`);
      continue;
    }
    const state = frames.map((k) => k.obs.map(f32));
    const action = frames.map((k) => k.executed.map(f32));
    const columns = {
      "observation.state": state,
      action,
      timestamp: frames.map((_, i) => f32(i / fps)),
      frame_index: frames.map((_, i) => BigInt(i)),
      episode_index: frames.map(() => BigInt(ep)),
      index: frames.map((_, i) => BigInt(index + i)),
      task_index: frames.map(() => BigInt(taskIndex)),
      "next.reward": frames.map((_, i) => (success && i === n - 1 ? 1 : 0)),
      "next.done": frames.map((_, i) => i === n - 1),
      intervention: frames.map((k) => k.intervention),
    };
    const scalar: Record<string, string> = { timestamp: "FLOAT", frame_index: "INT64", episode_index: "INT64", index: "INT64", task_index: "INT64", "next.reward": "FLOAT", "next.done": "BOOLEAN", intervention: "BOOLEAN" };
    const schema: Record<string, unknown>[] = [{ name: "root", num_children: Object.keys(columns).length }];
    for (const name of Object.keys(columns)) {
      if (name in scalar) schema.push({ name, type: scalar[name], repetition_type: "OPTIONAL" });
      else schema.push({ name, repetition_type: "OPTIONAL", num_children: 1, converted_type: "LIST" }, { name: "list", repetition_type: "REPEATED", num_children: 1 }, { name: "element", type: "FLOAT", repetition_type: "OPTIONAL" });
    }
    const path = join(out, formatPath(DATA_PATH, { episode_chunk: chunk, episode_index: ep }));
    mkdirSync(dirname(path), { recursive: true });
    await parquetWriteFile({
      filename: path,
      columnData: Object.entries(columns).map(([name, data]) => ({ name, data: data as unknown[] })),
      schema: schema as never,
      kvMetadata: [{ key: "rlft.source", value: file }],
    });
    // Per-episode statistics (episodes_stats.jsonl, v2.1).
    const stats: Record<string, unknown> = {};
    for (const [name, rows] of [["observation.state", state], ["action", action]] as const) {
      const rs = new RunningStats();
      rows.forEach((r) => rs.push(r));
      stats[name] = statsJson(rs);
    }
    for (const name of ["timestamp", "frame_index", "episode_index", "index", "task_index", "next.reward"] as const) {
      const rs = new RunningStats();
      (columns[name] as (number | bigint)[]).forEach((v) => rs.push([Number(v)]));
      stats[name] = statsJson(rs);
    }
    if (!opts.noVideo) {
      for (const cam of await findCameras(file)) {
        const known = cameras.get(cam.key);
        if (known && (known.width !== cam.width || known.height !== cam.height)) throw new Error(`${file}: camera ${cam.key} is ${cam.width}×${cam.height}, earlier episodes ${known.width}×${known.height}`);
        cameras.set(cam.key, cam);
        const vpath = join(out, formatPath(VIDEO_PATH, { episode_chunk: chunk, episode_index: ep, video_key: cam.key }));
        mkdirSync(dirname(vpath), { recursive: true });
        const video = openVideoWriter(vpath, { width: cam.width, height: cam.height, fps, codec });
        let rs: RunningStats;
        try {
          rs = await writeCamera(file, cam, frames.map((k) => k.timeNs), video);
        } finally {
          await video.close();
        }
        stats[cam.key] = statsJson(rs, true);
        cameraEpisodes.set(cam.key, (cameraEpisodes.get(cam.key) ?? 0) + 1);
        videos++;
      }
    }
    appendFileSync(join(out, "meta", "episodes.jsonl"), JSON.stringify({ episode_index: ep, tasks: [taskText], length: n }) + "\n");
    appendFileSync(join(out, "meta", "episodes_stats.jsonl"), JSON.stringify({ episode_index: ep, stats }) + "\n");
    appendFileSync(join(out, "meta", "rlft_episodes.jsonl"), JSON.stringify(sourceRecord(tr, ep, success)) + "\n");
    index += n;
    episodes++;
    opts.onEpisode?.(episodes);
  }
  if (!episodes) throw new Error(`none of the ${files.length} episodes could be exported:\n  ${skipped.join("\n  ")}`);
  for (const cam of cameras.values()) {
    const have = cameraEpisodes.get(cam.key) ?? 0;
    if (have < episodes) opts.warn?.(`${cam.key} is in ${have} of ${episodes} episodes; LeRobot expects every episode to have every camera (export episodes recorded with the camera on, or pass --no-video)`);
    features[cam.key] = {
      dtype: "video",
      shape: [cam.height, cam.width, 3],
      names: ["height", "width", "channels"],
      info: { "video.height": cam.height, "video.width": cam.width, "video.codec": codec, "video.pix_fmt": "yuv420p", "video.is_depth_map": false, "video.fps": fps, "video.channels": 3, has_audio: false },
    };
  }
  const scalarFeature = (dtype: string): Feature => ({ dtype, shape: [1], names: null });
  Object.assign(features, {
    timestamp: scalarFeature("float32"),
    frame_index: scalarFeature("int64"),
    episode_index: scalarFeature("int64"),
    index: scalarFeature("int64"),
    task_index: scalarFeature("int64"),
    "next.reward": scalarFeature("float32"),
    "next.done": scalarFeature("bool"),
    intervention: scalarFeature("bool"),
  });
  const info: LeRobotInfo = {
    codebase_version: LEROBOT_VERSION,
    robot_type: robot,
    total_episodes: episodes,
    total_frames: index,
    total_tasks: tasks.size,
    total_videos: videos,
    total_chunks: Math.ceil(episodes / CHUNKS_SIZE),
    chunks_size: CHUNKS_SIZE,
    fps,
    splits: { train: `0:${episodes}` },
    data_path: DATA_PATH,
    video_path: cameras.size ? VIDEO_PATH : null,
    features,
  };
  writeFileSync(join(out, "meta", "info.json"), JSON.stringify(info, null, 4));
  writeFileSync(join(out, "meta", "tasks.jsonl"), [...tasks].map(([task, task_index]) => JSON.stringify({ task_index, task })).join("\n") + "\n");
  return { dir: out, episodes, frames: index, videos, cameras: [...cameras.keys()], skipped };
}

/** What rlft knows about the episode beyond LeRobot's fields (meta/rlft_episodes.jsonl), for `dataset import`. */
function sourceRecord(tr: EpisodeTrace, ep: number, success: boolean) {
  return { episode_index: ep, source: tr.file, task: tr.info.task, robot: tr.info.robot, seed: tr.info.seed, outcome: tr.outcome, success, policy_version: tr.info.policy_version, control_hz: tr.info.control_hz, joint_names: tr.jointNames };
}
