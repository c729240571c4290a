/**
 * Turning recorded episodes into training data: each control tick's /observation paired with the
 * /joint_command stamped with the same time (docs/contracts.md), plus the sparse reward.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { EpisodeReader } from "../recording/EpisodeReader.ts";
import { refuseSqliteBag } from "../recording/rosbag2Bag.ts";
import { TOPICS } from "../contracts/topics.ts";
import { timeNs, type ObservationMsg, type JointStateMsg } from "../contracts/msgs.ts";
import type { Image } from "../contracts/msgs.generated.ts";
import type { EpisodeFrames } from "../bridge/DatasetClient.ts";

/** One episode as arrays. */
export interface EpisodeArrays {
  file: string;
  episode: number;
  seed: number;
  task: string;
  success: boolean;
  outcome: string;
  obsNames: string[];
  actionNames: string[];
  obs: number[][];
  action: number[][];
  reward: number[];
  /** Per step 1 when the operator acted (/arbiter/intervention active at that tick's stamp), else 0. */
  intervention: number[];
  /** Episode metadata `source` (scripted_expert, recap_collect, ...), "" when absent. */
  source: string;
  /** Sim (or wall) seconds from the first to the last recorded tick, plus one tick. */
  durationSec: number;
  /** True when the file was cut short (crash) and recovered. */
  recovered: boolean;
  /**
   * With `cameras`: per camera, one frame per step — the latest frame stamped at or before the tick (never one from
   * the tick's future, as in LeRobot export and replay). Ticks before every camera has a frame are left out.
   */
  images?: Record<string, EpisodeFrames>;
  /** Ticks left out at the start because some camera had no frame at or before them yet. */
  ticksWithoutFrames?: number;
}

/** Options of {@link readEpisodeArrays}. */
export interface ReadEpisodeOptions {
  /** Camera names whose frames to pair with the ticks (/camera/<name>/image); an episode without one is refused. */
  cameras?: readonly string[];
}

/**
 * MCAP episode files in `dir` (sorted; a rosbag2 bag folder gives its .mcap files), or `dir` itself when it is a
 * file. A rosbag2 sqlite3 bag (.db3) is refused with the command that converts it to MCAP.
 */
export function episodeFiles(dir: string): string[] {
  const st = statSync(dir, { throwIfNoEntry: false });
  if (!st) throw new Error(`${dir} does not exist — record episodes first, e.g. rlft collect --out ${dir}`);
  refuseSqliteBag(dir);
  if (st.isFile()) return [dir];
  const files = readdirSync(dir).filter((f) => f.endsWith(".mcap")).sort().map((f) => join(dir, f));
  if (files.length === 0) throw new Error(`${dir} holds no .mcap episodes — record some with: rlft collect --out ${dir}`);
  return files;
}

const key = (s: { sec: number; nanosec: number }) => `${s.sec}.${s.nanosec}`;

/** Reads one episode file into arrays. Ticks without a matching command (the last one) are dropped. */
export async function readEpisodeArrays(file: string, options: ReadEpisodeOptions = {}): Promise<EpisodeArrays> {
  const r = await EpisodeReader.open(file);
  try {
    const obsMsgs: ObservationMsg[] = [];
    const cmds = new Map<string, JointStateMsg>();
    const active = new Set<string>();
    const cams = options.cameras ?? [];
    const camTopic = new Map(cams.map((c) => [`/camera/${c}/image`, c]));
    const frames = new Map<string, { stamp: bigint; msg: Image }[]>(cams.map((c) => [c, []]));
    for await (const m of r.messages({ topics: [TOPICS.observation.topic, TOPICS.jointCommand.topic, TOPICS.arbiterIntervention.topic, ...camTopic.keys()] })) {
      const cam = camTopic.get(m.topic);
      if (cam !== undefined) {
        const img = m.message as unknown as Image;
        frames.get(cam)!.push({ stamp: timeNs(img.header.stamp), msg: img });
      } else if (m.topic === TOPICS.observation.topic) obsMsgs.push(m.message as unknown as ObservationMsg);
      else if (m.topic === TOPICS.arbiterIntervention.topic) {
        const i = m.message as unknown as { header: { stamp: { sec: number; nanosec: number } }; active: boolean };
        if (i.active) active.add(key(i.header.stamp));
      } else {
        const c = m.message as unknown as JointStateMsg;
        cmds.set(key(c.header.stamp), c);
      }
    }
    for (const cam of cams) {
      const list = frames.get(cam)!;
      if (list.length === 0) throw new Error(`${file}: no frames from camera "${cam}" (/camera/${cam}/image) — record episodes with that camera, or train without it`);
      list.sort((a, b) => (a.stamp < b.stamp ? -1 : a.stamp > b.stamp ? 1 : 0));
    }
    const obs: number[][] = [];
    const action: number[][] = [];
    const intervention: number[] = [];
    const stamps: number[] = [];
    const picked: Record<string, Image[]> = Object.fromEntries(cams.map((c) => [c, []]));
    const cursor = new Map<string, number>(cams.map((c) => [c, -1]));
    let ticksWithoutFrames = 0;
    let actionNames: string[] = [];
    for (const o of obsMsgs) {
      const c = cmds.get(key(o.header.stamp));
      if (!c) continue;
      if (cams.length > 0) {
        // The latest frame of each camera at or before this tick; a tick some camera has none for is left out.
        const t = timeNs(o.header.stamp);
        const now: Image[] = [];
        for (const cam of cams) {
          const list = frames.get(cam)!;
          let i = cursor.get(cam)!;
          while (i + 1 < list.length && list[i + 1].stamp <= t) i++;
          cursor.set(cam, i);
          if (i >= 0) now.push(list[i].msg);
        }
        if (now.length < cams.length) {
          if (obs.length === 0) ticksWithoutFrames++;
          continue;
        }
        cams.forEach((cam, k) => picked[cam].push(now[k]));
      }
      obs.push(Array.from(o.values));
      action.push(Array.from(c.position));
      intervention.push(active.has(key(o.header.stamp)) ? 1 : 0);
      stamps.push(o.header.stamp.sec + o.header.stamp.nanosec * 1e-9);
      actionNames = c.name;
    }
    const images = cams.length > 0 ? Object.fromEntries(cams.map((cam) => [cam, packFrames(file, cam, picked[cam])])) : undefined;
    const tick = stamps.length > 1 ? (stamps[stamps.length - 1] - stamps[0]) / (stamps.length - 1) : 0;
    const info = r.episode ?? {};
    const result = r.result ?? {};
    const success = result.success === "true";
    const reward = obs.map((_, i) => (success && i === obs.length - 1 ? 1 : 0));
    return {
      file,
      episode: Number(info.episode ?? -1),
      seed: Number(info.seed ?? -1),
      task: info.task ?? "unknown",
      success,
      outcome: result.outcome ?? (r.recovered ? "crashed" : "unknown"),
      obsNames: obsMsgs[0]?.names ?? [],
      actionNames,
      obs,
      action,
      reward,
      intervention,
      source: info.source ?? "",
      durationSec: stamps.length ? stamps[stamps.length - 1] - stamps[0] + tick : 0,
      recovered: r.recovered,
      ...(images ? { images, ticksWithoutFrames } : {}),
    };
  } finally {
    await r.close();
  }
}

/** One camera's picked frames as T packed rgb8 frames back to back; every frame must be rgb8 of one size. */
function packFrames(file: string, cam: string, list: readonly Image[]): EpisodeFrames {
  if (list.length === 0) return { width: 0, height: 0, data: new Uint8Array(0) };
  const { width, height } = list[0];
  const size = width * height * 3;
  const data = new Uint8Array(list.length * size);
  list.forEach((img, t) => {
    if (img.encoding !== "rgb8" || img.width !== width || img.height !== height) {
      throw new Error(`${file}: camera "${cam}" frame ${t} is ${img.width}×${img.height} ${img.encoding}; the episode's first is ${width}×${height} rgb8 — training needs one size and rgb8`);
    }
    const src = img.data instanceof Uint8Array ? img.data : Uint8Array.from(img.data);
    if (img.step === width * 3) data.set(src.subarray(0, size), t * size);
    else for (let y = 0; y < height; y++) data.set(src.subarray(y * img.step, y * img.step + width * 3), t * size + y * width * 3);
  });
  return { width, height, data };
}
