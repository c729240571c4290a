/**
 * LeRobotDataset v2.1 (layout.ts): data/chunk-XXX/episode_XXXXXX.parquet and
 * videos/chunk-XXX/<key>/episode_XXXXXX.mp4 per episode; meta/episodes.jsonl, episodes_stats.jsonl, tasks.jsonl and
 * info.json (with total_chunks and total_videos). `rlft dataset export --lerobot-version 2.1`, for LeRobot 0.1–0.3.
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { openVideoWriter, type VideoWriter, type VIDEO_ENCODERS } from "./ffmpeg.ts";
import { CHUNKS_SIZE, V21, formatPath, type LeRobotInfo } from "./layout.ts";
import { ParquetTable } from "./parquet.ts";
import { floatJson, statsJson } from "./stats.ts";
import type { DatasetSummary, EpisodeRecord, LeRobotWriter } from "./writer.ts";

/** Writes LeRobotDataset v2.1 into `out`. */
export class WriterV21 implements LeRobotWriter {
  readonly #open = new Map<string, VideoWriter>();
  #videos = 0;

  constructor(
    readonly out: string,
    readonly opts: { fps: number; codec: keyof typeof VIDEO_ENCODERS },
  ) {}

  async video(key: string, ep: number, size: { width: number; height: number }): Promise<VideoWriter> {
    const path = join(this.out, formatPath(V21.video, { episode_chunk: Math.floor(ep / CHUNKS_SIZE), episode_index: ep, video_key: key }));
    mkdirSync(dirname(path), { recursive: true });
    const w = openVideoWriter(path, { ...size, fps: this.opts.fps, codec: this.opts.codec });
    this.#open.set(key, w);
    this.#videos++;
    return w;
  }

  async endVideo(key: string): Promise<void> {
    await this.#open.get(key)?.close();
    this.#open.delete(key);
  }

  async episode(e: EpisodeRecord): Promise<void> {
    const path = join(this.out, formatPath(V21.data, { episode_chunk: Math.floor(e.index / CHUNKS_SIZE), episode_index: e.index }));
    mkdirSync(dirname(path), { recursive: true });
    const t = ParquetTable.frames(path, e.columns, "Sequence");
    t.write(e.data);
    t.finish();
    const stats = Object.fromEntries(Object.entries(e.stats).map(([k, s]) => [k, statsJson(s, e.imageKeys.includes(k))]));
    appendFileSync(join(this.out, "meta", "episodes.jsonl"), JSON.stringify({ episode_index: e.index, tasks: e.tasks, length: e.length }) + "\n");
    appendFileSync(join(this.out, "meta", "episodes_stats.jsonl"), `{"episode_index": ${e.index}, "stats": ${floatJson(stats)}}\n`);
  }

  async finish(s: DatasetSummary): Promise<number> {
    const hasVideo = Object.values(s.features).some((f) => f.dtype === "video");
    const info: LeRobotInfo = {
      codebase_version: "v2.1",
      robot_type: s.robotType,
      total_episodes: s.episodes,
      total_frames: s.frames,
      total_tasks: s.tasks.length,
      total_videos: this.#videos,
      total_chunks: Math.ceil(s.episodes / CHUNKS_SIZE),
      chunks_size: CHUNKS_SIZE,
      fps: s.fps,
      splits: { train: `0:${s.episodes}` },
      data_path: V21.data,
      video_path: hasVideo ? V21.video : null,
      features: s.features,
    };
    writeFileSync(join(this.out, "meta", "info.json"), JSON.stringify(info, null, 4));
    writeFileSync(join(this.out, "meta", "tasks.jsonl"), s.tasks.map((task, task_index) => JSON.stringify({ task_index, task })).join("\n") + "\n");
    return this.#videos;
  }

  async abort(): Promise<void> {
    for (const w of this.#open.values()) await w.close().catch(() => undefined);
  }
}
