/**
 * experience_bridge: turns the topics of each control tick into transitions for the learner
 * (docs/protocol.md) and hands them to a sink (the ZeroMQ ExperienceBridge with its disk spool).
 * Transition t = (obs_t, base_t, residual_t, executed_t, who acted) completed by obs_{t+1} and base_{t+1};
 * the episode's end marks the last one terminated (success/failure) or truncated (timeout/abort).
 * Runs only on subscription callbacks and never blocks: the sink's push is synchronous and buffered.
 */
import type { NodeHandle } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import type { Transition } from "../contracts/Transition.ts";
import { TOPICS } from "../contracts/topics.ts";
import { sameTime, type EpisodeEventMsg, type JointStateMsg, type ObservationMsg } from "../contracts/msgs.ts";
import type { Time } from "../runtime/Runtime.ts";

/** Where finished transitions go. */
export interface TransitionSink {
  push(t: Transition): void;
}

/** Options of the experience node. */
export interface ExperienceNodeOptions {
  /** Raw joint targets → the base package's normalised action space. */
  normaliseAction: (raw: readonly number[]) => number[];
}

interface Tick {
  stamp: Time;
  obs: number[];
  base?: number[];
  residual?: number[];
  executed?: number[];
  intervention: boolean;
  source: string;
  policyVersion: string;
  nextObs?: number[];
}

/** The experience bridge node. */
export class ExperienceNode extends NodeBase {
  #sink: TransitionSink;
  #opts: ExperienceNodeOptions;
  #episode = -1;
  #step = 0;
  #live = false;
  /** Tick t, being filled. */
  #cur: Tick | null = null;
  /** Tick t-1, has its next observation, waits for the next base action. */
  #closing: Tick | null = null;
  /** Completed transition held back one tick, so the episode's end can still mark it. */
  #held: Transition | null = null;
  /** Transitions handed to the sink. */
  pushed = 0;

  constructor(node: NodeHandle, sink: TransitionSink, opts: ExperienceNodeOptions) {
    super(node);
    this.#sink = sink;
    this.#opts = opts;
  }

  override async configure(): Promise<void> {
    const sub = <T>(t: { topic: string; type: string }, cb: (m: T) => void) => this.subscribe<T>(t, cb);
    sub<ObservationMsg>(TOPICS.observation, (m) => this.#onObservation(m));
    sub<{ header: { stamp: Time }; policy_version: string; base_action: number[]; residual_action: number[] }>(TOPICS.policyAction, (m) => this.#onPolicyAction(m));
    sub<{ header: { stamp: Time }; active: boolean; source: string }>(TOPICS.arbiterIntervention, (m) => {
      if (this.#cur && sameTime(m.header.stamp, this.#cur.stamp)) {
        this.#cur.intervention = m.active;
        this.#cur.source = m.active ? m.source : "";
      }
    });
    sub<JointStateMsg>(TOPICS.jointCommand, (m) => {
      if (this.#cur && sameTime(m.header.stamp, this.#cur.stamp)) this.#cur.executed = this.#opts.normaliseAction(Array.from(m.position));
    });
    sub<{ reward: number; terminal: boolean }>(TOPICS.reward, (r) => {
      if (r.terminal) this.#finish({ reward: r.reward, terminated: true, truncated: false });
    });
    sub<EpisodeEventMsg>(TOPICS.episodeEvent, (e) => this.#onEvent(e));
  }


  #onEvent(e: EpisodeEventMsg): void {
    if (e.event === "reset") {
      this.#clear();
      this.#episode = e.episode;
      this.#step = 0;
    } else if (e.event === "start") {
      this.#live = true;
    } else if (e.event === "timeout" || e.event === "abort") {
      this.#finish({ reward: 0, terminated: false, truncated: true });
    } else {
      // success / failure from another source than /reward (operator key, UI): terminal.
      this.#finish({ reward: e.event === "success" ? 1 : 0, terminated: true, truncated: false });
    }
  }

  #onObservation(m: ObservationMsg): void {
    if (!this.#live) return;
    const obs = Array.from(m.values);
    const cur = this.#cur;
    if (cur && cur.base && cur.executed) {
      cur.nextObs = obs;
      this.#closing = cur;
    }
    this.#cur = { stamp: m.header.stamp, obs, intervention: false, source: "", policyVersion: "" };
  }

  #onPolicyAction(m: { header: { stamp: Time }; policy_version: string; base_action: number[]; residual_action: number[] }): void {
    const cur = this.#cur;
    if (!this.#live || !cur || !sameTime(m.header.stamp, cur.stamp)) return;
    cur.base = Array.from(m.base_action);
    cur.residual = Array.from(m.residual_action);
    cur.policyVersion = m.policy_version;
    const closing = this.#closing;
    if (closing) {
      this.#closing = null;
      this.#hold(this.#transition(closing, cur.base, { reward: 0, terminated: false, truncated: false }));
    }
  }

  /** The episode ended: flush what is complete, marking the last transition. */
  #finish(end: { reward: number; terminated: boolean; truncated: boolean }): void {
    if (!this.#live) return;
    this.#live = false;
    const closing = this.#closing;
    if (closing) {
      // Ended right after obs_{t+1} (a terminal reward): transition t is the last one.
      if (this.#held) this.#emit(this.#held);
      this.#emit(this.#transition(closing, closing.base!, end));
    } else if (this.#held) {
      // Ended on the manager's tick (timeout/abort): the last completed transition is the last one.
      this.#emit({ ...this.#held, ...end, reward: this.#held.reward + end.reward });
    }
    this.#held = null;
    this.#clear();
  }

  #transition(t: Tick, nextBase: number[], end: { reward: number; terminated: boolean; truncated: boolean }): Transition {
    return {
      episode: this.#episode,
      step: this.#step++,
      obs: t.obs,
      nextObs: t.nextObs!,
      baseAction: t.base!,
      residualAction: t.residual ?? t.base!.map(() => 0),
      action: t.executed!,
      nextBaseAction: nextBase,
      reward: end.reward,
      terminated: end.terminated,
      truncated: end.truncated,
      intervention: t.intervention,
      interventionSource: t.source,
      policyVersion: t.policyVersion,
    };
  }

  #hold(t: Transition): void {
    if (this.#held) this.#emit(this.#held);
    this.#held = t;
  }

  #emit(t: Transition): void {
    this.pushed++;
    this.#sink.push(t);
  }

  #clear(): void {
    this.#cur = null;
    this.#closing = null;
    this.#held = null;
  }
}
