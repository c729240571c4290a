/**
 * Versions of the episode log format (docs/data.md § Log format). A log names its version in the `rlft.log_format`
 * metadata record; logs written before that record existed are version 1. Message schemas are versioned by the
 * `ros2msg` text stored with each channel: a reader decodes with the recorded text, then fills fields added since
 * with their ROS 2 defaults (EpisodeReader), so older logs stay readable by every tool.
 */

/** Name of the metadata record holding the format version. */
export const LOG_FORMAT_RECORD = "rlft.log_format";

/** The log format this rlft writes. */
export const LOG_FORMAT_VERSION = 2;

/** The oldest log format this rlft reads. */
export const OLDEST_READABLE_FORMAT = 1;

/**
 * What changed in each version (shown by `rlft inspect` for old logs).
 * 1: MCAP ros2 profile, `rlft.episode` / `rlft.episode_result` metadata, the topics of contracts/topics.ts.
 * 2: adds `rlft.log_format`; `rlft.episode` also records randomize_physics, physics_dt, sampler and policy_seed.
 */
export const LOG_FORMAT_HISTORY: Readonly<Record<number, string>> = {
  1: "MCAP (ros2 profile, ros2msg schemas, CDR), rlft.episode + rlft.episode_result metadata",
  2: "adds rlft.log_format; rlft.episode records randomize_physics, physics_dt, sampler and policy_seed for exact replay",
};
