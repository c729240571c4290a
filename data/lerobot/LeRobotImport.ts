/**
 * `rlft dataset import <lerobot-dir> --out <folder>`: a LeRobotDataset (v3.0: files holding several episodes, located
 * through meta/episodes; v2.0/v2.1: one parquet and one MP4 per episode) → one rlft MCAP episode per LeRobot episode.
 * Per frame: /observation from observation.state (names from info.json), /joint_command from action, /joint_states
 * from the state's `q.*` dimensions (or the whole state when it is as long as the action), /arbiter/intervention when
 * an `intervention` column exists, each video feature decoded by ffmpeg into /camera/<name>/image. Stamps are
 * timestamp (seconds). What rlft exported itself (meta/rlft_episodes.jsonl) restores robot, task, seed and outcome.
 */
import { readFileSync, existsSync, readdirSync, mkdirSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { McapEpisodeWriter } from "../../recording/McapEpisodeWriter.ts";
import { refuseBagAsLeRobot } from "../../recording/rosbag2Bag.ts";
import { TOPICS } from "../../contracts/topics.ts";
import { readVideoFrames } from "./ffmpeg.ts";
import { V30, formatPath, type Feature, type LeRobotInfo } from "./layout.ts";

/** Options of {@link importLeRobot}. */
export interface LeRobotImportOptions {
  /** Robot model to record when the dataset does not say (info.json robot_type). */
  robot?: string;
  /** Skip the videos. */
  noVideo?: boolean;
  onEpisode?: (i: number, total: number) => void;
}

type Row = Record<string, unknown>;

const toNs = (sec: number) => BigInt(Math.round(sec * 1e9));
const stamp = (ns: bigint) => ({ sec: Number(ns / 1_000_000_000n), nanosec: Number(ns % 1_000_000_000n) });
const names = (f: Feature | undefined, prefix: string): string[] => {
  const n = f?.names;
  const flat = Array.isArray(n) ? (Array.isArray(n[0]) ? (n[0] as string[]) : (n as string[])) : n && typeof n === "object" ? (Object.values(n)[0] as string[]) : undefined;
  return flat && flat.length === (f?.shape[0] ?? 0) ? flat.map(String) : Array.from({ length: f?.shape[0] ?? 0 }, (_, i) => `${prefix}_${i}`);
};

/** A row's vector column as numbers, `n` of them, or an error naming where. */
function vector(v: unknown, n: number, where: string): number[] {
  const a = Array.isArray(v) || ArrayBuffer.isView(v) ? Array.from(v as ArrayLike<number>, Number) : null;
  if (!a || a.length !== n || a.some((x) => !Number.isFinite(x))) throw new Error(`${where} is ${a ? `${a.length} values${a.some((x) => !Number.isFinite(x)) ? " with non-finite ones" : ""}` : typeof v}; info.json says ${n} finite numbers`);
  return a;
}

function readJsonl(path: string): Row[] {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as Row) : [];
}

/** Every .parquet under `dir`, sorted (chunk-XXX/file-XXX or chunk-XXX/episode_XXXXXX). */
function parquetFiles(dir: string): string[] {
  const files: string[] = [];
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith(".parquet")) files.push(join(d, e.name));
    }
  };
  walk(dir);
  return files;
}

async function readRows(file: string, columns?: string[]): Promise<Row[]> {
  return (await parquetReadObjects({ file: await asyncBufferFromFile(file), columns })) as Row[];
}

/** Rows of every data file, grouped by episode_index (v3.0 files hold several episodes). */
async function* episodesOf(dir: string, info: LeRobotInfo): AsyncGenerator<[number, Row[]]> {
  const files = parquetFiles(join(dir, "data"));
  if (!files.length) throw new Error(`${dir}/data holds no .parquet files — is ${dir} a LeRobot dataset (meta/info.json says ${info.codebase_version})?`);
  for (const f of files) {
    const by = new Map<number, Row[]>();
    for (const r of await readRows(f)) {
      const e = Number(r.episode_index);
      if (!Number.isInteger(e) || e < 0) throw new Error(`${f}: a row has episode_index ${String(r.episode_index)}; expected an integer ≥ 0`);
      let list = by.get(e);
      if (!list) by.set(e, (list = []));
      list.push(r);
    }
    for (const [e, list] of [...by].sort((a, b) => a[0] - b[0])) yield [e, list.sort((a, b) => Number(a.frame_index) - Number(b.frame_index))];
  }
}

/** Task strings by task_index: meta/tasks.parquet (v3.0: the strings are the pandas index column) or tasks.jsonl. */
async function readTasks(dir: string): Promise<Map<number, string>> {
  const tasks = new Map<number, string>();
  const pq = join(dir, V30.tasks);
  if (existsSync(pq)) {
    for (const r of await readRows(pq)) {
      const text = Object.entries(r).find(([k, v]) => k !== "task_index" && typeof v === "string")?.[1];
      tasks.set(Number(r.task_index), String(text ?? "unknown"));
    }
  } else for (const t of readJsonl(join(dir, "meta", "tasks.jsonl"))) tasks.set(Number(t.task_index), String(t.task));
  return tasks;
}

/** `rel` under `dir`, or an error: a dataset's paths (info.json templates, feature names) must not leave it. */
function inside(dir: string, rel: string, what: string): string {
  const path = resolve(dir, rel);
  const r = relative(resolve(dir), path);
  if (!r || r.startsWith("..") || isAbsolute(r)) throw new Error(`${join(dir, "meta", "info.json")}: ${what} resolves to ${path}, outside the dataset — refusing to read it`);
  return path;
}

/** Where episode `ep`'s video of `key` is and from which second (v3.0 from meta/episodes; v2.x one file each). */
function videoOf(dir: string, info: LeRobotInfo, key: string, ep: number, meta: Row | undefined): { path: string; startSec: number } | null {
  if (!info.video_path) return null;
  if (meta) {
    const chunk = meta[`videos/${key}/chunk_index`];
    if (chunk === undefined || chunk === null) return null;
    const rel = formatPath(info.video_path, { video_key: key, chunk_index: Number(chunk), file_index: Number(meta[`videos/${key}/file_index`]) });
    const startSec = Number(meta[`videos/${key}/from_timestamp`] ?? 0);
    if (!(startSec >= 0)) throw new Error(`${dir}/meta/episodes: episode ${ep} has videos/${key}/from_timestamp ${String(meta[`videos/${key}/from_timestamp`])}; expected seconds ≥ 0`);
    return { path: inside(dir, rel, `video ${key} of episode ${ep}`), startSec };
  }
  const rel = formatPath(info.video_path, { episode_chunk: Math.floor(ep / (info.chunks_size || 1000)), episode_index: ep, video_key: key });
  return { path: inside(dir, rel, `video ${key} of episode ${ep}`), startSec: 0 };
}

/** meta/info.json, checked for what import relies on; each problem named with the fix. */
function readInfo(dir: string): LeRobotInfo {
  const infoPath = join(dir, "meta", "info.json");
  if (!existsSync(infoPath)) throw new Error(`${infoPath} not found — expected a LeRobotDataset directory (meta/info.json, data/, videos/)`);
  let info: LeRobotInfo;
  try {
    info = JSON.parse(readFileSync(infoPath, "utf8")) as LeRobotInfo;
  } catch (e) {
    throw new Error(`${infoPath} is not valid JSON (${(e as Error).message})`);
  }
  if (!info || typeof info !== "object" || !info.features || typeof info.features !== "object") throw new Error(`${infoPath}: no "features" object — not a LeRobotDataset info.json`);
  if (!(Number(info.fps) > 0 && Number(info.fps) <= 10_000)) throw new Error(`${infoPath}: fps is ${JSON.stringify(info.fps)}; expected a rate in Hz (> 0)`);
  for (const key of ["observation.state", "action"]) {
    const f = info.features[key];
    if (!f) throw new Error(`${infoPath}: features need observation.state and action (found ${Object.keys(info.features).join(", ")})`);
    if (!Array.isArray(f.shape) || f.shape.length !== 1 || !(Number.isInteger(f.shape[0]) && f.shape[0] > 0)) throw new Error(`${infoPath}: ${key} has shape ${JSON.stringify(f.shape)}; expected [n], a vector`);
  }
  for (const [key, f] of Object.entries(info.features)) {
    if (f.dtype !== "video") continue;
    if (!/^[\w.-]+$/.test(key)) throw new Error(`${infoPath}: video feature name ${JSON.stringify(key)} has characters a topic or file name cannot hold`);
    if (!Array.isArray(f.shape) || f.shape.length !== 3 || !f.shape.every((x) => Number.isInteger(x) && x > 0 && x <= 16384)) throw new Error(`${infoPath}: ${key} has shape ${JSON.stringify(f.shape)}; expected [height, width, 3]`);
  }
  return info;
}

/** Imports the dataset in `dir` into MCAP episodes in `out`; returns how many episodes and frames. */
export async function importLeRobot(dir: string, out: string, opts: LeRobotImportOptions = {}): Promise<{ episodes: number; frames: number; files: string[] }> {
  refuseBagAsLeRobot(dir); // a rosbag2 bag (sqlite3: with the command that converts it)
  const info = readInfo(dir);
  const feats = info.features;
  const v3 = /^v?3\./.test(info.codebase_version ?? "");
  const obsNames = names(feats["observation.state"], "state");
  const actNames = names(feats.action, "action");
  const tasks = await readTasks(dir);
  const rlft = new Map<number, Row>(readJsonl(join(dir, "meta", "rlft_episodes.jsonl")).map((r) => [Number(r.episode_index), r]));
  const videoKeys = Object.entries(feats).filter(([, f]) => f.dtype === "video").map(([k]) => k);
  const epMeta = new Map<number, Row>();
  if (v3) {
    const files = parquetFiles(join(dir, "meta", "episodes"));
    if (!files.length) throw new Error(`${dir}/meta/episodes holds no .parquet files, which a v3.0 dataset needs to locate its episodes' videos`);
    const cols = ["episode_index", ...videoKeys.flatMap((k) => ["chunk_index", "file_index", "from_timestamp"].map((c) => `videos/${k}/${c}`))];
    for (const f of files) for (const r of await readRows(f, cols)) epMeta.set(Number(r.episode_index), r);
  }
  const jointIdx = obsNames.map((n, i) => (n.startsWith("q.") ? i : -1)).filter((i) => i >= 0);
  const jointFromState = jointIdx.length ? jointIdx : obsNames.length === actNames.length ? obsNames.map((_, i) => i) : [];
  const jointNames = jointIdx.length ? jointIdx.map((i) => obsNames[i].slice(2)) : actNames;
  const files: string[] = [];
  let frames = 0;
  mkdirSync(out, { recursive: true });
  for await (const [ep, rows] of episodesOf(dir, info)) {
    const src = rlft.get(ep) ?? {};
    const task = String(src.task ?? tasks.get(Number(rows[0].task_index)) ?? "unknown");
    const file = join(out, `episode_${String(ep).padStart(6, "0")}.mcap`);
    const success = src.success !== undefined ? Boolean(src.success) : rows.some((r) => Number(r["next.reward"] ?? 0) > 0);
    const w = await McapEpisodeWriter.create(file, {
      episode: { task, seed: src.seed !== undefined && src.seed !== "" ? Number(src.seed) : -1, robot: String(src.robot ?? opts.robot ?? info.robot_type ?? "unknown"), policy_version: String(src.policy_version ?? "unknown"), git_revision: "unknown", episode: ep, control_hz: String(info.fps), source: `lerobot:${dir}` },
    });
    const period = toNs(1 / info.fps);
    const t0 = period; // the start event goes one period before the first frame, at 0
    const times = rows.map((r) => t0 + toNs(Number(r.timestamp ?? Number(r.frame_index) / info.fps)));
    const evt = (ns: bigint, event: string, detail = "") => w.write(TOPICS.episodeEvent.topic, { header: { stamp: stamp(ns), frame_id: "" }, episode: ep, event, seed: BigInt(Number(src.seed ?? 0) || 0), task, detail }, ns, { type: TOPICS.episodeEvent.type });
    void evt(times[0] - period, "start");
    rows.forEach((r, i) => {
      const ns = times[i];
      const h = { stamp: stamp(ns), frame_id: "" };
      const state = vector(r["observation.state"], obsNames.length, `episode ${ep} frame ${i}: observation.state`);
      const action = vector(r.action, actNames.length, `episode ${ep} frame ${i}: action`);
      if (jointFromState.length) void w.write(TOPICS.jointStates.topic, { header: h, name: jointNames, position: jointFromState.map((j) => state[j]), velocity: [], effort: [] }, ns, { type: TOPICS.jointStates.type });
      void w.write(TOPICS.observation.topic, { header: h, names: obsNames, values: state }, ns, { type: TOPICS.observation.type });
      void w.write(TOPICS.jointCommand.topic, { header: h, name: actNames, position: action, velocity: [], effort: [] }, ns, { type: TOPICS.jointCommand.type });
      if ("intervention" in r) void w.write(TOPICS.arbiterIntervention.topic, { header: h, active: Boolean(r.intervention), source: r.intervention ? "lerobot_intervention" : "policy", action: r.intervention ? action : [] }, ns, { type: TOPICS.arbiterIntervention.type });
    });
    if (!opts.noVideo) {
      for (const key of videoKeys) {
        const f = feats[key];
        const channelsFirst = Array.isArray(f.names) && ["channels", "channel", "c"].includes(String(f.names[0]));
        const [height, width] = channelsFirst ? [f.shape[1], f.shape[2]] : [f.shape[0], f.shape[1]];
        const v = videoOf(dir, info, key, ep, v3 ? epMeta.get(ep) : undefined);
        if (!v || !existsSync(v.path)) continue;
        const topic = `/camera/${key.replace(/^observation\.images?\./, "")}/image`;
        // Seek half a frame early so a frame whose pts rounds just below the episode's start is not lost.
        const startSec = Math.max(0, v.startSec - 0.5 / info.fps);
        await readVideoFrames(v.path, { width, height, startSec, frames: rows.length }, (rgb, i) => {
          if (i >= times.length) return;
          void w.write(topic, { header: { stamp: stamp(times[i]), frame_id: key }, height, width, encoding: "rgb8", is_bigendian: 0, step: width * 3, data: rgb }, times[i], { type: "sensor_msgs/msg/Image" });
        });
      }
    }
    const outcome = String(src.outcome ?? (success ? "success" : "unknown"));
    void evt(times.at(-1)!, outcome === "success" || outcome === "failure" || outcome === "timeout" || outcome === "abort" ? outcome : success ? "success" : "timeout");
    await w.close({ success, length: rows.length, reason: `imported from LeRobot dataset ${dir}`, outcome });
    files.push(file);
    frames += rows.length;
    opts.onEpisode?.(files.length, info.total_episodes);
  }
  return { episodes: files.length, frames, files };
}
