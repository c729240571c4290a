/**
 * experience_bridge: turns the topics of each control tick into transitions for the learner
 * (docs/protocol.md) and hands them to a sink (the ZeroMQ ExperienceBridge with its disk spool).
 * Transition t = (obs_t, base_t, residual_t, executed_t, who acted) completed by obs_{t+1} and base_{t+1};
 * the episode's end marks the last one terminated (success/failure) or truncated (timeout/abort).
 * Runs only on subscription callbacks and never blocks: the sink's push is synchronous and buffered.
 * With `cameras`, each transition carries those cameras' frames of obs_t and obs_{t+1}: the latest frame stamped at or
 * before each tick (docs/data.md). A transition ended by a terminal reward waits until its next frames are settled (a
 * later frame, observation or episode event arrived): the reward comes before the camera's frame of that tick.
 */
import type { NodeHandle } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import type { Transition, TransitionFrame } from "../contracts/Transition.ts";
import { TOPICS } from "../contracts/topics.ts";
import { sameTime, type EpisodeEventMsg, type JointStateMsg, type ObservationMsg } from "../contracts/msgs.ts";
import type { Image } from "../contracts/msgs.generated.ts";
import { cameraTopics } from "./CameraNode.ts";
import type { Time } from "../runtime/Runtime.ts";

/** Where finished transitions go. */
export interface TransitionSink {
  push(t: Transition): void;
}

/** Options of the experience node. */
export interface ExperienceNodeOptions {
  /** Raw joint targets → the base package's normalised action space. */
  normaliseAction: (raw: readonly number[]) => number[];
  /** Cameras whose frames every transition carries (`images`, `nextImages`); none by default. */
  cameras?: readonly string[];
  /**
   * The base package's observation names: each transition's obs / nextObs are these, picked by name from the
   * observation (a base that reads a subset, e.g. train-bc --state joints). Default: the whole observation, in order.
   */
  observationNames?: readonly string[];
}

/** Frames kept per camera to look up the latest at or before a tick (a transition is settled within two ticks). */
const FRAME_HISTORY = 8;

function before(a: Time, b: Time): boolean {
  return a.sec < b.sec || (a.sec === b.sec && a.nanosec <= b.nanosec);
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
  nextStamp?: Time;
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
  /** Recent frames per camera, oldest first. */
  #frames = new Map<string, { stamp: Time; frame: TransitionFrame }[]>();
  /** An episode's last transition waiting for the frames of its next observation. */
  #unsettled: { t: Transition; nextStamp: Time }[] = [];
  /** Indices of observationNames in the observation's names (found on the first observation). */
  #obsIdx: number[] | null = null;
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
    for (const cam of this.#opts.cameras ?? []) {
      this.#frames.set(cam, []);
      sub<Image>({ topic: cameraTopics(cam).image, type: TOPICS.image.type }, (m) => this.#onFrame(cam, m));
    }
  }

  #onFrame(cam: string, m: Image): void {
    if (m.encoding !== "rgb8" || m.data.length !== m.width * m.height * 3) return; // CameraNode publishes rgb8 only
    const list = this.#frames.get(cam)!;
    list.push({ stamp: m.header.stamp, frame: { width: m.width, height: m.height, rgb: Uint8Array.from(m.data) } });
    if (list.length > FRAME_HISTORY) list.shift();
    this.#settle(false);
  }

  /** Each camera's latest frame at or before `stamp`; undefined without cameras (a missing camera is left out). */
  #framesAt(stamp: Time): Record<string, TransitionFrame> | undefined {
    if (this.#frames.size === 0) return undefined;
    const out: Record<string, TransitionFrame> = {};
    for (const [cam, list] of this.#frames) {
      for (let i = list.length - 1; i >= 0; i--) {
        if (before(list[i].stamp, stamp)) {
          out[cam] = list[i].frame;
          break;
        }
      }
    }
    return out;
  }

  /** Emits unsettled transitions once every camera has a frame after their next tick (or `force`: something later came). */
  #settle(force: boolean): void {
    while (this.#unsettled.length > 0) {
      const { t, nextStamp } = this.#unsettled[0];
      const settled = force || [...this.#frames.values()].every((l) => l.length > 0 && before(nextStamp, l[l.length - 1].stamp));
      if (!settled) return;
      this.#unsettled.shift();
      this.#emit({ ...t, nextImages: this.#framesAt(nextStamp) });
    }
  }


  #onEvent(e: EpisodeEventMsg): void {
    this.#settle(true);
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
    this.#settle(true);
    if (!this.#live) return;
    const obs = this.#pick(m);
    const cur = this.#cur;
    if (cur && cur.base && cur.executed) {
      cur.nextObs = obs;
      cur.nextStamp = m.header.stamp;
      this.#closing = cur;
    }
    this.#cur = { stamp: m.header.stamp, obs, intervention: false, source: "", policyVersion: "" };
  }

  /** The observation's values the learner reads: the base package's names in its order, or all of them. */
  #pick(m: ObservationMsg): number[] {
    const want = this.#opts.observationNames;
    if (!want) return Array.from(m.values);
    this.#obsIdx ??= want.map((n) => {
      const i = m.names.indexOf(n);
      if (i < 0) throw new Error(`experience_bridge: the base package reads observation "${n}" but the robot publishes [${m.names.join(", ")}]`);
      return i;
    });
    return this.#obsIdx.map((i) => m.values[i]);
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
      const last = this.#transition(closing, closing.base!, end);
      if (this.#frames.size === 0) this.#emit(last);
      else {
        this.#unsettled.push({ t: last, nextStamp: closing.nextStamp! });
        this.#settle(false);
      }
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
      ...(this.#frames.size > 0 ? { images: this.#framesAt(t.stamp), nextImages: this.#framesAt(t.nextStamp!) } : {}),
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
