/** Small builders for the ROS 2 messages the nodes publish (plain objects shaped like the .msg files). */
import type { Time } from "../runtime/Runtime.ts";

/** std_msgs/Header. */
export function header(stamp: Time, frameId = ""): { stamp: Time; frame_id: string } {
  return { stamp, frame_id: frameId };
}

/** A sensor_msgs/JointState with positions only (commands) or full state. */
export function jointState(stamp: Time, names: readonly string[], position: readonly number[], velocity: readonly number[] = [], effort: readonly number[] = []) {
  return { header: header(stamp), name: [...names], position: [...position], velocity: [...velocity], effort: [...effort] };
}

/** Seconds → builtin_interfaces/Time. */
export function toTime(sec: number): Time {
  const s = Math.floor(sec);
  return { sec: s, nanosec: Math.round((sec - s) * 1e9) };
}

/** builtin_interfaces/Time → seconds. */
export function fromTime(t: Time): number {
  return t.sec + t.nanosec * 1e-9;
}

/** builtin_interfaces/Time → nanoseconds (bigint), for MCAP log times. */
export function timeNs(t: Time): bigint {
  return BigInt(t.sec) * 1_000_000_000n + BigInt(t.nanosec);
}

/** Exact equality of two stamps (sim ticks stamp observation and command with the same time). */
export function sameTime(a: Time, b: Time): boolean {
  return a.sec === b.sec && a.nanosec === b.nanosec;
}

/** rlft_interfaces/EpisodeEvent kinds. */
export type EpisodeEventKind = "reset" | "start" | "success" | "failure" | "timeout" | "abort" | "pause" | "resume";

/** The EpisodeEvent message shape. */
export interface EpisodeEventMsg {
  header: { stamp: Time; frame_id: string };
  episode: number;
  event: EpisodeEventKind;
  seed: bigint | number;
  task: string;
  detail: string;
}

/** The Observation message shape. */
export interface ObservationMsg {
  header: { stamp: Time; frame_id: string };
  names: string[];
  values: ArrayLike<number>;
}

/** The JointState message shape. */
export interface JointStateMsg {
  header: { stamp: Time; frame_id: string };
  name: string[];
  position: ArrayLike<number>;
  velocity: ArrayLike<number>;
  effort: ArrayLike<number>;
}
