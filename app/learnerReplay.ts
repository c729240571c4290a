/**
 * `rlft replay <folder> --to-learner`: rebuilds the learner's buffers from logs. Each episode is labelled from what
 * its log says: a demonstration (no policy acted: scripted expert or teleoperation), an online episode of a policy,
 * and within online episodes the ticks where the operator intervened (/arbiter/intervention, with its source).
 * Online episodes are played through the same ExperienceNode the live stack runs (data/LogPlayer.ts), so the
 * transitions carry exactly the labels, policy versions and normalised actions the robot would have sent.
 */
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { ExperienceNode, type TransitionSink } from "../nodes/ExperienceNode.ts";
import { normaliseAction } from "../contracts/normalise.ts";
import { TOPICS } from "../contracts/topics.ts";
import { EpisodeReader } from "../recording/EpisodeReader.ts";
import { playLogs } from "../data/LogPlayer.ts";

/** How an episode is labelled for the learner. */
export type EpisodeLabel = "demo" | "online";

/** An episode file with its label. */
export interface LabelledEpisode {
  file: string;
  label: EpisodeLabel;
  /** Ticks where the operator commanded (online episodes). */
  interventionTicks: number;
}

/** Labels `file`: online when a policy's /policy/action was recorded, otherwise a demonstration. */
export async function labelEpisode(file: string): Promise<LabelledEpisode> {
  const r = await EpisodeReader.open(file);
  try {
    const topics = new Map(r.topics().map((t) => [t.topic, t.count]));
    let interventionTicks = 0;
    for await (const m of r.messages({ topics: [TOPICS.arbiterIntervention.topic] })) if ((m.message as { active?: boolean }).active) interventionTicks++;
    const online = (topics.get(TOPICS.policyAction.topic) ?? (topics.has(TOPICS.policyAction.topic) ? 1 : 0)) > 0;
    return { file, label: online ? "online" : "demo", interventionTicks };
  } finally {
    await r.close();
  }
}

/** Counts of what {@link replayTransitions} sent. */
export interface TransitionReplayResult {
  episodes: number;
  transitions: number;
  interventions: number;
  bySource: Record<string, number>;
  policyVersions: string[];
}

/**
 * Plays online episodes through an ExperienceNode into `sink`. `actionSpec` is the base package's action
 * min/max: executed actions are normalised with it, as on the robot.
 */
export async function replayTransitions(files: readonly string[], sink: TransitionSink, actionSpec: { min: readonly number[]; max: readonly number[] }, opts: { warn?: (m: string) => void } = {}): Promise<TransitionReplayResult> {
  const runtime = await EmbeddedRuntime.create({ clock: "sim", logLevel: "error" });
  const result: TransitionReplayResult = { episodes: 0, transitions: 0, interventions: 0, bySource: {}, policyVersions: [] };
  const versions = new Set<string>();
  const counting: TransitionSink = {
    push: (t) => {
      result.transitions++;
      if (t.intervention) {
        result.interventions++;
        result.bySource[t.interventionSource] = (result.bySource[t.interventionSource] ?? 0) + 1;
      }
      versions.add(t.policyVersion);
      sink.push(t);
    },
  };
  const node = new ExperienceNode(runtime.createNode("experience_bridge"), counting, { normaliseAction: (raw) => normaliseAction(actionSpec, raw) });
  try {
    await node.configure();
    await node.activate();
    const topics = [TOPICS.observation, TOPICS.policyAction, TOPICS.arbiterIntervention, TOPICS.jointCommand, TOPICS.reward, TOPICS.episodeEvent].map((t) => t.topic);
    const played = await playLogs(runtime, files, { topics, warn: opts.warn });
    result.episodes = played.episodes;
  } finally {
    await node.shutdown();
    await runtime.shutdown();
  }
  result.policyVersions = [...versions];
  return result;
}
