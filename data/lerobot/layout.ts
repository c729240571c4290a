/**
 * The LeRobotDataset v2.1 layout (huggingface/lerobot PR #711, `codebase_version: "v2.1"`): one parquet file per
 * episode, one MP4 per camera per episode, and meta/ with info.json, episodes.jsonl, tasks.jsonl and
 * episodes_stats.jsonl. LeRobot converts v2.1 to its v3.0 file layout with its own converter.
 */

/** codebase_version we write. */
export const LEROBOT_VERSION = "v2.1";
/** Episodes per chunk directory. */
export const CHUNKS_SIZE = 1000;
export const DATA_PATH = "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet";
export const VIDEO_PATH = "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4";

/** One entry of info.json `features`. */
export interface Feature {
  dtype: string;
  shape: number[];
  names: string[] | null;
  info?: Record<string, unknown>;
}

/** meta/info.json. */
export interface LeRobotInfo {
  codebase_version: string;
  robot_type: string | null;
  total_episodes: number;
  total_frames: number;
  total_tasks: number;
  total_videos: number;
  total_chunks: number;
  chunks_size: number;
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
