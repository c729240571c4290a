/** What the exporter hands a LeRobot layout writer (writerV30.ts, writerV21.ts), one episode at a time. */
import type { VideoWriter } from "./ffmpeg.ts";
import type { Feature } from "./layout.ts";
import type { FrameColumn } from "./parquet.ts";
import type { FeatureStats } from "./stats.ts";

/** One exported episode: its frame columns (in `columns` order) and the stats of every feature. */
export interface EpisodeRecord {
  index: number;
  /** Global index of its first frame. */
  from: number;
  length: number;
  tasks: string[];
  columns: readonly FrameColumn[];
  data: Record<string, unknown[]>;
  /** Per feature, image features included (after their video was written). */
  stats: Record<string, FeatureStats>;
  /** Feature names that are images (stats shape (3, 1, 1)). */
  imageKeys: readonly string[];
}

/** Dataset-level fields both layouts put in meta/info.json. */
export interface DatasetSummary {
  robotType: string | null;
  fps: number;
  features: Record<string, Feature>;
  tasks: string[];
  episodes: number;
  frames: number;
}

/** Writes one LeRobot layout. */
export interface LeRobotWriter {
  /** Where camera `key`'s frames of episode `ep` go (v3.0 continues one MP4 across episodes). */
  video(key: string, ep: number, size: { width: number; height: number }): Promise<VideoWriter>;
  /** The episode's `frames` frames of camera `key` are written. */
  endVideo(key: string, frames: number): Promise<void>;
  /** Rows, stats and the episode's metadata (after its videos). */
  episode(e: EpisodeRecord): Promise<void>;
  /** Videos closed, meta/ completed. Returns how many video files were written. */
  finish(s: DatasetSummary): Promise<number>;
  /** Stops ffmpeg and leaves what was written (after an error). */
  abort(): Promise<void>;
}
