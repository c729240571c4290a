/** Small builders for the ROS 2 messages the nodes publish (plain objects shaped like the .msg files). */
import { EpisodeEventConstants, type EpisodeEvent, type JointState, type Observation, type Time } from "./msgs.generated.ts";

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

/** rlft_interfaces/EpisodeEvent kinds (the .msg file's constants). */
export type EpisodeEventKind = (typeof EpisodeEventConstants)[keyof typeof EpisodeEventConstants];

/**
 * A message as a subscriber receives it: numeric arrays may arrive as typed arrays (CDR decoding), 64-bit integers
 * as number or bigint. Derived from the generated types, so the fields never drift from the .msg files.
 */
export type Received<T> = { [K in keyof T]: T[K] extends number[] ? ArrayLike<number> : T[K] extends bigint ? bigint | number : T[K] };

/** The EpisodeEvent message shape, with its kind typed. */
export type EpisodeEventMsg = Omit<Received<EpisodeEvent>, "event"> & { event: EpisodeEventKind };

/** The Observation message shape. */
export type ObservationMsg = Received<Observation>;

/** The JointState message shape. */
export type JointStateMsg = Received<JointState>;
