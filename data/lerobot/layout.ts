/**
 * LeRobotDataset layouts (huggingface/lerobot, lerobot/datasets/utils.py).
 *
 * v3.0 (`codebase_version: "v3.0"`, LeRobot 0.4+; the default): episodes packed into files, several per parquet/MP4,
 * up to a size; meta/info.json, meta/stats.json, meta/tasks.parquet and meta/episodes/chunk-XXX/file-XXX.parquet,
 * whose rows say where each episode lives (data/chunk_index + file_index, dataset_from_index/to_index, and per camera
 * videos/<key>/chunk_index + file_index + from_timestamp/to_timestamp within the MP4) and hold its stats.
 *
 * v2.1 (`codebase_version: "v2.1"`, LeRobot 0.1–0.3): one parquet file per episode, one MP4 per camera per episode,
 * meta/info.json, episodes.jsonl, tasks.jsonl and episodes_stats.jsonl. LeRobot 0.4 converts it to v3.0 with
 * lerobot/datasets/v30/convert_dataset_v21_to_v30.py.
 */

/** The versions `rlft dataset export` writes. */
export const LEROBOT_VERSIONS = ["3.0", "2.1"] as const;
export type LeRobotVersion = (typeof LEROBOT_VERSIONS)[number];

/** Episodes per chunk directory (v2.1), files per chunk directory (v3.0): DEFAULT_CHUNK_SIZE. */
export const CHUNKS_SIZE = 1000;

export const V21 = {
  data: "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
  video: "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4",
} as const;

export const V30 = {
  data: "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
  video: "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4",
  episodes: "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
  tasks: "meta/tasks.parquet",
  stats: "meta/stats.json",
  /** DEFAULT_DATA_FILE_SIZE_IN_MB, DEFAULT_VIDEO_FILE_SIZE_IN_MB: a file takes episodes until it reaches this size. */
  dataFileMb: 100,
  videoFileMb: 200,
} as const;

/** One entry of info.json `features`. */
export interface Feature {
  dtype: string;
  shape: number[];
  names: string[] | Record<string, string[]> | null;
  info?: Record<string, unknown>;
}

/** meta/info.json (fields of both versions; v3.0 drops total_chunks/total_videos, adds the file sizes). */
export interface LeRobotInfo {
  codebase_version: string;
  robot_type: string | null;
  total_episodes: number;
  total_frames: number;
  total_tasks: number;
  total_videos?: number;
  total_chunks?: number;
  chunks_size: number;
  data_files_size_in_mb?: number;
  video_files_size_in_mb?: number;
  fps: number;
  splits: Record<string, string>;
  data_path: string;
  video_path: string | null;
  features: Record<string, Feature>;
}

/** Fills `{episode_chunk:03d}`-style fields of a path template (v2.x and v3.0 names). */
export function formatPath(template: string, fields: Record<string, string | number>): string {
  return template.replace(/\{(\w+)(?::0(\d+)d)?\}/g, (_m, key: string, width?: string) => {
    const v = fields[key];
    if (v === undefined) throw new Error(`path template ${template} needs {${key}}`);
    return width ? String(v).padStart(Number(width), "0") : String(v);
  });
}

/** Chunk and file index of the n-th file (v3.0: `chunks_size` files per chunk directory). */
export function chunkFile(n: number, chunksSize = CHUNKS_SIZE): { chunk_index: number; file_index: number } {
  return { chunk_index: Math.floor(n / chunksSize), file_index: n % chunksSize };
}
