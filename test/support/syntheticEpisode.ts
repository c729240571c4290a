/**
 * A small episode log with known content for the interop and frame-causality tests: control ticks at `hz` with /observation,
 * /joint_states, /joint_command and /arbiter/intervention, and cameras whose frames start late and run at their own
 * rate (not on the ticks). Frame j of camera c is one flat colour that encodes j, so a reader that decodes a video can
 * tell which frame it got, and so whether a tick was paired with a frame from its future.
 */
import { McapEpisodeWriter } from "../../recording/McapEpisodeWriter.ts";
import { TOPICS } from "../../contracts/topics.ts";

/** One camera of the synthetic episode. */
export interface SyntheticCamera {
  name: string;
  width: number;
  height: number;
  /** Seconds from the first tick to its first frame. */
  firstSec: number;
  hz: number;
}

/** Options of {@link writeSyntheticEpisode}. */
export interface SyntheticEpisode {
  ticks: number;
  hz: number;
  cameras: readonly SyntheticCamera[];
  seed: number;
  success: boolean;
  /** Tick indices where the operator acted. */
  interventions?: readonly number[];
  /** The episode's language instruction (/task/instruction), for VLA datasets. */
  instruction?: string;
  /**
   * Log time of camera frames this much before their stamp (a log whose frames precede their capture stamps, e.g.
   * recorded against another clock): a player publishing by log time then delivers a frame before the ticks it
   * follows, which whoever pairs frames with ticks must not take.
   */
  imageLogLeadNs?: bigint;
}

export const JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex"];
export const OBS_NAMES = [...JOINTS.map((j) => `q.${j}`), "cube.x", "cube.y"];

const T0 = 5_000_000_000n; // the episode starts 5 s into the session
const stamp = (ns: bigint) => ({ sec: Number(ns / 1_000_000_000n), nanosec: Number(ns % 1_000_000_000n) });

/** The colour of camera `c`'s frame `j` (red encodes j; h264 keeps flat colours within a few levels). */
export function frameColour(c: number, j: number): [number, number, number] {
  return [20 + 12 * j, 60 + 70 * c, 230 - 9 * j];
}

/** Which frame of camera `c` a decoded red channel in [0, 1] shows. */
export function frameFromRed(red: number): number {
  return Math.round((red * 255 - 20) / 12) || 0; // || 0: no -0
}

/** Tick i's time (ns, log time). */
export function tickNs(i: number, hz: number): bigint {
  return T0 + BigInt(Math.round((i * 1e9) / hz));
}

/** Frame j's time of a camera (ns). */
export function frameNs(cam: SyntheticCamera, j: number): bigint {
  return T0 + BigInt(Math.round((cam.firstSec + j / cam.hz) * 1e9));
}

/** The index of the latest frame of `cam` stamped at or before tick `i`, or -1. */
export function latestFrameAt(cam: SyntheticCamera, i: number, hz: number): number {
  let j = -1;
  while (frameNs(cam, j + 1) <= tickNs(i, hz)) j++;
  return j;
}

/** Observation / action of tick i (exact in float32 where the tests compare). */
export function tickValues(i: number, seed: number): { obs: number[]; action: number[] } {
  const q = JOINTS.map((_, k) => 0.01 * i + 0.1 * k + 0.001 * seed);
  return { obs: [...q, 0.3 + 0.001 * i, -0.1], action: q.map((x) => x + 0.005) };
}

/** Writes the episode to `file`. */
export async function writeSyntheticEpisode(file: string, o: SyntheticEpisode): Promise<void> {
  const w = await McapEpisodeWriter.create(file, { episode: { task: "push_cube", seed: o.seed, robot: "rlft_arm5", policy_version: "synthetic", git_revision: "test", control_hz: String(o.hz), episode: o.seed } });
  const msgs: { ns: bigint; topic: string; type: string; msg: unknown }[] = [];
  const add = (ns: bigint, t: { topic: string; type: string }, msg: unknown) => msgs.push({ ns, topic: t.topic, type: t.type, msg });
  if (o.instruction) add(T0, TOPICS.instruction, { data: o.instruction });
  const event = (ns: bigint, e: string) => add(ns, TOPICS.episodeEvent, { header: { stamp: stamp(ns), frame_id: "" }, episode: o.seed, event: e, seed: BigInt(o.seed), task: "push_cube", detail: "" });
  event(T0, "start");
  for (let i = 0; i < o.ticks; i++) {
    const ns = tickNs(i, o.hz);
    const h = { stamp: stamp(ns), frame_id: "" };
    const { obs, action } = tickValues(i, o.seed);
    const op = o.interventions?.includes(i) ?? false;
    add(ns, TOPICS.observation, { header: h, names: OBS_NAMES, values: obs });
    add(ns, TOPICS.jointStates, { header: h, name: JOINTS, position: obs.slice(0, 3), velocity: [], effort: [] });
    add(ns, TOPICS.jointCommand, { header: h, name: JOINTS, position: action, velocity: [], effort: [] });
    add(ns, TOPICS.arbiterIntervention, { header: h, active: op, source: op ? "spacemouse" : "policy", action: op ? action : [] });
  }
  const end = tickNs(o.ticks - 1, o.hz);
  o.cameras.forEach((cam, c) => {
    for (let j = 0; frameNs(cam, j) <= end; j++) {
      const ns = frameNs(cam, j);
      const data = new Uint8Array(cam.width * cam.height * 3);
      const rgb = frameColour(c, j);
      for (let p = 0; p < data.length; p += 3) data.set(rgb, p);
      add(ns - (o.imageLogLeadNs ?? 0n), { topic: `/camera/${cam.name}/image`, type: "sensor_msgs/msg/Image" }, { header: { stamp: stamp(ns), frame_id: `camera_${cam.name}` }, height: cam.height, width: cam.width, encoding: "rgb8", is_bigendian: 0, step: cam.width * 3, data });
    }
  });
  event(end, o.success ? "success" : "timeout");
  msgs.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
  for (const m of msgs) await w.write(m.topic, m.msg, m.ns, { type: m.type });
  await w.close({ success: o.success, length: o.ticks, reason: "synthetic", outcome: o.success ? "success" : "timeout" });
}
