/**
 * Turning recorded episodes into training data: each control tick's /observation paired with the
 * /joint_command stamped with the same time (docs/contracts.md), plus the sparse reward.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { EpisodeReader } from "../recording/EpisodeReader.ts";
import { TOPICS } from "../contracts/topics.ts";
import type { ObservationMsg, JointStateMsg } from "../contracts/msgs.ts";

/** One episode as arrays. */
export interface EpisodeArrays {
  file: string;
  episode: number;
  seed: number;
  task: string;
  success: boolean;
  outcome: string;
  obsNames: string[];
  actionNames: string[];
  obs: number[][];
  action: number[][];
  reward: number[];
  /** Per step 1 when the operator acted (/arbiter/intervention active at that tick's stamp), else 0. */
  intervention: number[];
  /** Episode metadata `source` (scripted_expert, recap_collect, ...), "" when absent. */
  source: string;
  /** Sim (or wall) seconds from the first to the last recorded tick, plus one tick. */
  durationSec: number;
  /** True when the file was cut short (crash) and recovered. */
  recovered: boolean;
}

/** MCAP episode files in `dir` (sorted), or `dir` itself when it is a file. */
export function episodeFiles(dir: string): string[] {
  const st = statSync(dir, { throwIfNoEntry: false });
  if (!st) throw new Error(`${dir} does not exist — record episodes first, e.g. rlft collect --out ${dir}`);
  if (st.isFile()) return [dir];
  const files = readdirSync(dir).filter((f) => f.endsWith(".mcap")).sort().map((f) => join(dir, f));
  if (files.length === 0) throw new Error(`${dir} holds no .mcap episodes — record some with: rlft collect --out ${dir}`);
  return files;
}

const key = (s: { sec: number; nanosec: number }) => `${s.sec}.${s.nanosec}`;

/** Reads one episode file into arrays. Ticks without a matching command (the last one) are dropped. */
export async function readEpisodeArrays(file: string): Promise<EpisodeArrays> {
  const r = await EpisodeReader.open(file);
  try {
    const obsMsgs: ObservationMsg[] = [];
    const cmds = new Map<string, JointStateMsg>();
    const active = new Set<string>();
    for await (const m of r.messages({ topics: [TOPICS.observation.topic, TOPICS.jointCommand.topic, TOPICS.arbiterIntervention.topic] })) {
      if (m.topic === TOPICS.observation.topic) obsMsgs.push(m.message as unknown as ObservationMsg);
      else if (m.topic === TOPICS.arbiterIntervention.topic) {
        const i = m.message as unknown as { header: { stamp: { sec: number; nanosec: number } }; active: boolean };
        if (i.active) active.add(key(i.header.stamp));
      } else {
        const c = m.message as unknown as JointStateMsg;
        cmds.set(key(c.header.stamp), c);
      }
    }
    const obs: number[][] = [];
    const action: number[][] = [];
    const intervention: number[] = [];
    const stamps: number[] = [];
    let actionNames: string[] = [];
    for (const o of obsMsgs) {
      const c = cmds.get(key(o.header.stamp));
      if (!c) continue;
      obs.push(Array.from(o.values));
      action.push(Array.from(c.position));
      intervention.push(active.has(key(o.header.stamp)) ? 1 : 0);
      stamps.push(o.header.stamp.sec + o.header.stamp.nanosec * 1e-9);
      actionNames = c.name;
    }
    const tick = stamps.length > 1 ? (stamps[stamps.length - 1] - stamps[0]) / (stamps.length - 1) : 0;
    const info = r.episode ?? {};
    const result = r.result ?? {};
    const success = result.success === "true";
    const reward = obs.map((_, i) => (success && i === obs.length - 1 ? 1 : 0));
    return {
      file,
      episode: Number(info.episode ?? -1),
      seed: Number(info.seed ?? -1),
      task: info.task ?? "unknown",
      success,
      outcome: result.outcome ?? (r.recovered ? "crashed" : "unknown"),
      obsNames: obsMsgs[0]?.names ?? [],
      actionNames,
      obs,
      action,
      reward,
      intervention,
      source: info.source ?? "",
      durationSec: stamps.length ? stamps[stamps.length - 1] - stamps[0] + tick : 0,
      recovered: r.recovered,
    };
  } finally {
    await r.close();
  }
}
