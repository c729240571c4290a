/**
 * LeRobotDataset v3.0 (layout.ts): episodes appended to data/chunk-XXX/file-XXX.parquet (one row group each) and, per
 * camera, to one continuous MP4 (one ffmpeg process per camera and file), each file taking episodes until it reaches
 * its size (100 MB data, 200 MB video, LeRobot's defaults). meta/episodes/chunk-000/file-000.parquet says where each
 * episode is (rows dataset_from_index..to_index, the MP4 and from_timestamp..to_timestamp in it) and holds its stats;
 * meta/stats.json aggregates them; meta/tasks.parquet is the task table as pandas writes it (task strings as index).
 */
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { openVideoWriter, type VideoWriter, type VIDEO_ENCODERS } from "./ffmpeg.ts";
import { CHUNKS_SIZE, V30, chunkFile, formatPath, type LeRobotInfo } from "./layout.ts";
import { ParquetTable, type MetaColumn } from "./parquet.ts";
import { QUANTILES, aggregateStats, floatJson, statsJson, type FeatureStats } from "./stats.ts";
import type { DatasetSummary, EpisodeRecord, LeRobotWriter } from "./writer.ts";

const STAT_KEYS = ["min", "max", "mean", "std", "count", ...QUANTILES.map(([, k]) => k)] as const;
const MB = 1024 * 1024;

interface OpenVideo {
  writer: VideoWriter;
  fileN: number;
  path: string;
  frames: number;
  /** Frames in the file before the current episode. */
  from: number;
}

/** pandas' metadata for a frame whose index holds the task strings (pyarrow's `pandas` key), as LeRobot's file has. */
function pandasTaskMetadata(): string {
  return JSON.stringify({
    index_columns: ["__index_level_0__"],
    column_indexes: [{ name: null, field_name: null, pandas_type: "unicode", numpy_type: "object", metadata: { encoding: "UTF-8" } }],
    columns: [
      { name: "task_index", field_name: "task_index", pandas_type: "int64", numpy_type: "int64", metadata: null },
      { name: null, field_name: "__index_level_0__", pandas_type: "unicode", numpy_type: "object", metadata: null },
    ],
    attributes: {},
    creator: { library: "rlft", version: "1" },
    pandas_version: "2.2.0",
  });
}

/** Writes LeRobotDataset v3.0 into `out`. */
export class WriterV30 implements LeRobotWriter {
  readonly #videos = new Map<string, OpenVideo>();
  #episodeVideo: Record<string, unknown> = {};
  readonly #episodes: Record<string, unknown>[] = [];
  readonly #stats: Record<string, FeatureStats[]> = {};
  readonly #imageKeys = new Set<string>();
  #data: { table: ParquetTable; fileN: number } | undefined;
  #videoFiles = 0;

  constructor(
    readonly out: string,
    readonly opts: { fps: number; codec: keyof typeof VIDEO_ENCODERS; dataFileMb?: number; videoFileMb?: number },
  ) {}

  async video(key: string, _ep: number, size: { width: number; height: number }): Promise<VideoWriter> {
    let v = this.#videos.get(key);
    if (v && (statSync(v.path, { throwIfNoEntry: false })?.size ?? 0) >= (this.opts.videoFileMb ?? V30.videoFileMb) * MB) {
      await v.writer.close();
      v = this.#openVideo(key, v.fileN + 1, size);
    }
    v ??= this.#openVideo(key, 0, size);
    v.from = v.frames;
    return v.writer;
  }

  #openVideo(key: string, fileN: number, size: { width: number; height: number }): OpenVideo {
    const path = join(this.out, formatPath(V30.video, { video_key: key, ...chunkFile(fileN) }));
    mkdirSync(dirname(path), { recursive: true });
    const v: OpenVideo = { writer: openVideoWriter(path, { ...size, fps: this.opts.fps, codec: this.opts.codec }), fileN, path, frames: 0, from: 0 };
    this.#videos.set(key, v);
    this.#videoFiles++;
    return v;
  }

  async endVideo(key: string, frames: number): Promise<void> {
    const v = this.#videos.get(key)!;
    v.frames += frames;
    const { chunk_index, file_index } = chunkFile(v.fileN);
    Object.assign(this.#episodeVideo, {
      [`videos/${key}/chunk_index`]: BigInt(chunk_index),
      [`videos/${key}/file_index`]: BigInt(file_index),
      [`videos/${key}/from_timestamp`]: v.from / this.opts.fps,
      [`videos/${key}/to_timestamp`]: v.frames / this.opts.fps,
    });
  }

  async episode(e: EpisodeRecord): Promise<void> {
    if (this.#data && this.#data.table.bytes >= (this.opts.dataFileMb ?? V30.dataFileMb) * MB) {
      this.#data.table.finish();
      this.#data = { table: this.#dataFile(e, this.#data.fileN + 1), fileN: this.#data.fileN + 1 };
    }
    this.#data ??= { table: this.#dataFile(e, 0), fileN: 0 };
    this.#data.table.write(e.data);
    const { chunk_index, file_index } = chunkFile(this.#data.fileN);
    const row: Record<string, unknown> = {
      episode_index: BigInt(e.index),
      tasks: e.tasks,
      length: BigInt(e.length),
      "data/chunk_index": BigInt(chunk_index),
      "data/file_index": BigInt(file_index),
      dataset_from_index: BigInt(e.from),
      dataset_to_index: BigInt(e.from + e.length),
      ...this.#episodeVideo,
    };
    this.#episodeVideo = {};
    for (const [key, s] of Object.entries(e.stats)) {
      const image = e.imageKeys.includes(key);
      if (image) this.#imageKeys.add(key);
      const json = statsJson(s, image);
      for (const stat of STAT_KEYS) row[`stats/${key}/${stat}`] = stat === "count" ? [BigInt(s.count)] : json[stat];
      (this.#stats[key] ??= []).push(s);
    }
    row["meta/episodes/chunk_index"] = 0n;
    row["meta/episodes/file_index"] = 0n;
    this.#episodes.push(row);
  }

  #dataFile(e: EpisodeRecord, fileN: number): ParquetTable {
    const path = join(this.out, formatPath(V30.data, chunkFile(fileN)));
    mkdirSync(dirname(path), { recursive: true });
    return ParquetTable.frames(path, e.columns, "List");
  }

  async finish(s: DatasetSummary): Promise<number> {
    this.#data?.table.finish();
    for (const v of this.#videos.values()) await v.writer.close();
    this.#writeEpisodes();
    const tasks = ParquetTable.meta(join(this.out, V30.tasks), [
      { name: "task_index", leaf: "INT64", depth: 0 },
      { name: "__index_level_0__", leaf: "STRING", depth: 0 },
    ], [{ key: "pandas", value: pandasTaskMetadata() }]);
    tasks.write({ task_index: s.tasks.map((_, i) => BigInt(i)), __index_level_0__: s.tasks });
    tasks.finish();
    const stats = Object.fromEntries(Object.entries(this.#stats).map(([k, list]) => [k, statsJson(aggregateStats(list), this.#imageKeys.has(k))]));
    writeFileSync(join(this.out, V30.stats), floatJson(stats) + "\n");
    const info: LeRobotInfo = {
      codebase_version: "v3.0",
      robot_type: s.robotType,
      total_episodes: s.episodes,
      total_frames: s.frames,
      total_tasks: s.tasks.length,
      chunks_size: CHUNKS_SIZE,
      data_files_size_in_mb: this.opts.dataFileMb ?? V30.dataFileMb,
      video_files_size_in_mb: this.opts.videoFileMb ?? V30.videoFileMb,
      fps: s.fps,
      splits: { train: `0:${s.episodes}` },
      data_path: V30.data,
      video_path: this.#videos.size ? V30.video : null,
      features: s.features,
    };
    writeFileSync(join(this.out, "meta", "info.json"), JSON.stringify(info, null, 4));
    return this.#videoFiles;
  }

  /** meta/episodes/chunk-000/file-000.parquet: one row per episode, columns in LeRobot's order. */
  #writeEpisodes(): void {
    if (!this.#episodes.length) return;
    const first = this.#episodes[0];
    const columns: MetaColumn[] = Object.entries(first).map(([name, v]) => {
      if (name === "tasks") return { name, leaf: "STRING", depth: 1 };
      if (typeof v === "bigint") return { name, leaf: "INT64", depth: 0 };
      if (typeof v === "number") return { name, leaf: "DOUBLE", depth: 0 };
      const image = this.#imageKeys.has(name.split("/")[1]);
      return { name, leaf: name.endsWith("/count") ? "INT64" : "DOUBLE", depth: image && !name.endsWith("/count") ? 3 : 1 };
    });
    const path = join(this.out, formatPath(V30.episodes, chunkFile(0)));
    mkdirSync(dirname(path), { recursive: true });
    const t = ParquetTable.meta(path, columns);
    t.write(Object.fromEntries(columns.map((c) => [c.name, this.#episodes.map((r) => r[c.name])])));
    t.finish();
  }

  async abort(): Promise<void> {
    for (const v of this.#videos.values()) await v.writer.close().catch(() => undefined);
  }
}
