/**
 * One episode as per-tick arrays, assembled while streaming the MCAP (images are skipped: they are streamed
 * separately where needed). Tick t is the /observation with stamp t; the other topics of the tick carry the same
 * stamp (docs/contracts.md). Everything the replay, inspect, stats and export tools need comes from here.
 */
import { EpisodeReader, type EpisodeDamage } from "../recording/EpisodeReader.ts";
import { TOPICS } from "../contracts/topics.ts";
import type { JointStateMsg, ObservationMsg } from "../contracts/msgs.ts";
import { timeNs } from "../contracts/msgs.ts";

/** One control tick. Arrays are empty where the topic had no message at this stamp. */
export interface Tick {
  /** Log time, ns. */
  timeNs: bigint;
  /** Seconds since the episode's start event (or its first tick). */
  t: number;
  obs: number[];
  /** Measured joint positions (/joint_states) at this stamp. */
  q: number[];
  /** Executed command (/joint_command, after safety). */
  executed: number[];
  /** What the actor proposed (/policy/joint_command, before arbiter and safety). */
  proposed: number[];
  /** Normalised base/residual/combined action and the version that produced it (/policy/action). */
  policy?: { version: string; base: number[]; residual: number[]; action: number[] };
  /** Who acted (/arbiter/intervention): true while the operator commanded. */
  intervention: boolean;
  interventionSource: string;
}

/** A whole episode's ticks plus its metadata. */
export interface EpisodeTrace {
  file: string;
  /** `rlft.episode` metadata (robot, task, seed, policy_version...). */
  info: Record<string, string>;
  /** `rlft.episode_result`, absent when recording crashed. */
  result?: Record<string, string>;
  formatVersion: number;
  obsNames: string[];
  jointNames: string[];
  ticks: Tick[];
  /** Every executed command (/joint_command) in time order, also those between ticks (real-robot logs). */
  commands: { timeNs: bigint; position: number[] }[];
  /** Log time of the start event (ns), or the first tick's. */
  startNs: bigint;
  /** Log time of the last message (ns). */
  endNs: bigint;
  /** End event, when recorded: success / failure / timeout / abort. */
  outcome: string;
  /** Messages per topic. */
  counts: Map<string, number>;
  /** Topic → schema name. */
  types: Map<string, string>;
  /** Every metadata record (calibration, ...). */
  metadata: ReadonlyMap<string, Record<string, string>>;
  recovered: boolean;
  damage?: EpisodeDamage;
  /** "" unless the file was damaged or recovered. */
  damageNote: string;
}

const IMAGE_TYPES = new Set(["sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage"]);

type Stamped = { header: { stamp: { sec: number; nanosec: number } } };

/** Reads `file` into an {@link EpisodeTrace}. */
export async function readEpisodeTrace(file: string): Promise<EpisodeTrace> {
  const r = await EpisodeReader.open(file);
  try {
    const types = new Map(r.topics().map((t) => [t.topic, t.type]));
    const wanted = r.topics().filter((t) => !IMAGE_TYPES.has(t.type)).map((t) => t.topic);
    const counts = new Map<string, number>();
    for (const t of r.topics()) if (t.count !== undefined && IMAGE_TYPES.has(t.type)) counts.set(t.topic, t.count);
    const ticks = new Map<bigint, Tick>();
    const tick = (ns: bigint): Tick => {
      let k = ticks.get(ns);
      if (!k) ticks.set(ns, (k = { timeNs: ns, t: 0, obs: [], q: [], executed: [], proposed: [], intervention: false, interventionSource: "" }));
      return k;
    };
    let obsNames: string[] = [];
    let jointNames: string[] = [];
    let startNs: bigint | undefined;
    let endNs = 0n;
    let outcome = "";
    const commands: { timeNs: bigint; position: number[] }[] = [];
    for await (const m of r.messages({ topics: wanted })) {
      counts.set(m.topic, (counts.get(m.topic) ?? 0) + 1);
      if (m.logTimeNs > endNs) endNs = m.logTimeNs;
      const msg = m.message;
      const stamp = (msg as Partial<Stamped>).header?.stamp;
      const ns = stamp ? timeNs(stamp) : m.logTimeNs;
      switch (m.topic) {
        case TOPICS.observation.topic: {
          const o = msg as unknown as ObservationMsg;
          obsNames = o.names;
          tick(ns).obs = Array.from(o.values);
          break;
        }
        case TOPICS.jointStates.topic: {
          const j = msg as unknown as JointStateMsg;
          jointNames = j.name;
          tick(ns).q = Array.from(j.position);
          break;
        }
        case TOPICS.jointCommand.topic: {
          const position = Array.from((msg as unknown as JointStateMsg).position);
          tick(ns).executed = position;
          commands.push({ timeNs: ns, position });
          break;
        }
        case TOPICS.proposedCommand.topic:
          tick(ns).proposed = Array.from((msg as unknown as JointStateMsg).position);
          break;
        case TOPICS.policyAction.topic: {
          const p = msg as { policy_version: string; base_action: number[]; residual_action: number[]; action: number[] };
          tick(ns).policy = { version: p.policy_version, base: Array.from(p.base_action ?? []), residual: Array.from(p.residual_action ?? []), action: Array.from(p.action ?? []) };
          break;
        }
        case TOPICS.arbiterIntervention.topic: {
          const a = msg as { active: boolean; source: string };
          const k = tick(ns);
          k.intervention = a.active;
          k.interventionSource = a.active ? a.source : "";
          break;
        }
        case TOPICS.episodeEvent.topic: {
          const e = msg as { event: string };
          if (e.event === "start") startNs ??= m.logTimeNs;
          else if (e.event !== "reset") outcome = e.event;
          break;
        }
      }
    }
    // A tick is a stamp with an observation or a joint state (logs without /observation still have joint traces).
    const list = [...ticks.values()].filter((k) => k.obs.length || k.q.length).sort((a, b) => (a.timeNs < b.timeNs ? -1 : a.timeNs > b.timeNs ? 1 : 0));
    const start = startNs ?? list[0]?.timeNs ?? 0n;
    for (const k of list) k.t = Number(k.timeNs - start) / 1e9;
    const result = r.result;
    return {
      file,
      info: r.episode ?? {},
      result,
      formatVersion: r.formatVersion,
      obsNames,
      jointNames,
      ticks: list,
      commands: commands.sort((a, b) => (a.timeNs < b.timeNs ? -1 : a.timeNs > b.timeNs ? 1 : 0)),
      startNs: start,
      endNs,
      outcome: result?.outcome ?? (outcome || (r.recovered ? "crashed" : "unknown")),
      counts,
      types,
      metadata: r.metadata,
      recovered: r.recovered,
      damage: r.damage,
      damageNote: r.describeDamage(),
    };
  } finally {
    await r.close();
  }
}

/** Maximal runs of intervention ticks as [first tick index, last tick index]. */
export function interventionSpans(ticks: readonly Tick[]): [number, number][] {
  const spans: [number, number][] = [];
  ticks.forEach((k, i) => {
    if (!k.intervention) return;
    const last = spans.at(-1);
    if (last && last[1] === i - 1) last[1] = i;
    else spans.push([i, i]);
  });
  return spans;
}

/** True when the episode ended in success (result metadata, else the end event). */
export function succeeded(tr: EpisodeTrace): boolean {
  return tr.result ? tr.result.success === "true" : tr.outcome === "success";
}
