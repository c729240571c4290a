/**
 * Shared tick of the nodes that propose actions (policy, scripted expert, later teleop): take the
 * latest /observation, ask `act`, publish /policy/joint_command stamped with the observation's time.
 * A failed `act` publishes nothing: the safety supervisor's watchdog then holds the arm. On a wall clock the
 * decision starts when the observation arrives (see {@link ActorNodeOptions.trigger}); at most one runs at a time, and
 * an episode reset or a shutdown waits for the one in flight.
 */
import type { NodeHandle, Publisher, Time } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import { TOPICS } from "../contracts/topics.ts";
import { jointState, sameTime, timeNs, type EpisodeEventMsg, type ObservationMsg } from "../contracts/msgs.ts";
import type { Actor, CameraImage } from "../policies/actors/Actor.ts";
import { SafetyEventConstants, type SafetyEvent } from "../contracts/msgs.generated.ts";

/** Frames kept per camera to pick the tick's from: a few camera periods at any rate the stack runs. */
const FRAMES_KEPT = 4;

/** Options of an actor node. */
export interface ActorNodeOptions {
  controlHz: number;
  /**
   * What starts a decision. `observation` (the default on a wall clock): the /observation subscription callback, as
   * a ROS 2 node answers a topic, so the command follows the observation by the compute alone; an observation that
   * arrives while a decision runs is answered as soon as that one is done (the newest only). `timer` (the default on
   * the sim clock, where the stepped clock runs the nodes of a tick in order and awaits each): a `controlHz` timer
   * acting on the newest unanswered observation, which on a wall clock waits for that timer (up to a period).
   */
  trigger?: "observation" | "timer";
}

/** Runs an Actor on the control tick. */
export class ActorNode extends NodeBase {
  readonly actor: Actor;
  #opts: ActorNodeOptions;
  #pub?: Publisher<unknown>;
  #pubInfo?: Publisher<unknown>;
  #pubSafety?: Publisher<SafetyEvent>;
  #lastHold: string | null = null;
  #obs: ObservationMsg | null = null;
  #lastActed: ObservationMsg | null = null;
  /** Per camera the last few frames, newest last (a frame stamped after the observation may arrive before the tick). */
  #images: Record<string, CameraImage[]> = {};
  #errors = 0;
  /** Decisions start on each observation (trigger `observation`, while active). */
  #triggered = false;
  /** The decision in flight, if any (a tick's `act`). */
  #inFlight: Promise<void> | null = null;
  /** Episodes reset since start; a decision that finishes in a later one than it began is dropped. */
  #episode = 0;
  /** The seed of a reset that waits for the decision in flight. */
  #resetSeed: number | null = null;
  /** Decisions dropped because their episode was reset while they ran (nothing was published for them). */
  dropped = 0;
  /** Last error from `act`, if any. */
  lastError = "";

  constructor(node: NodeHandle, actor: Actor, opts: ActorNodeOptions) {
    super(node);
    this.actor = actor;
    this.#opts = opts;
  }

  override async configure(): Promise<void> {
    this.#pub = this.node.createPublisher(TOPICS.proposedCommand.type, TOPICS.proposedCommand.topic);
    if (this.actor.lastAction) this.#pubInfo = this.node.createPublisher(TOPICS.policyAction.type, TOPICS.policyAction.topic);
    if (this.actor.holdReason) this.#pubSafety = this.node.createPublisher<SafetyEvent>(TOPICS.safetyEvent.type, TOPICS.safetyEvent.topic);
    this.subscribe<ObservationMsg>(TOPICS.observation, (m) => {
      this.#obs = m;
      // After the callback: every subscriber of this observation (the loop monitor too) has it before the command.
      if (this.#triggered) queueMicrotask(() => void this.tick());
    });
    this.subscribe<EpisodeEventMsg>(TOPICS.episodeEvent, (e) => {
      if (e.event === "reset") {
        // A decision still in flight belongs to the episode that just ended: it finishes first (the policy's chunker,
        // noise and inference worker are never reset under it), its action is dropped, and the actor is reset then.
        // The arm holds meanwhile (no command: the safety supervisor's watchdog).
        if (this.#inFlight) {
          this.#episode++;
          this.#resetSeed = Number(e.seed);
        } else this.actor.reset(Number(e.seed));
        this.#obs = null;
        this.#lastActed = null;
        // A frame from before the reset shows the old scene: the actor must wait for a fresh one.
        this.#images = {};
      }
    });
    if (this.actor.setInstruction) {
      this.subscribe<{ data: string }>(TOPICS.instruction, (m) => this.actor.setInstruction?.(m.data));
    }
    for (const cam of this.actor.cameras ?? []) {
      type ImageMsg = { header: { stamp: Time }; width: number; height: number; encoding: string; step: number; data: Uint8Array };
      this.subscribe<ImageMsg>({ topic: `/camera/${cam}/image`, type: TOPICS.image.type }, (m) => {
        const list = (this.#images[cam] ??= []);
        list.push({ width: m.width, height: m.height, encoding: m.encoding, data: m.data, step: m.step, stamp: m.header.stamp });
        if (list.length > FRAMES_KEPT) list.shift();
      });
    }
  }

  override async activate(): Promise<void> {
    if ((this.#opts.trigger ?? (this.node.clock.kind === "wall" ? "observation" : "timer")) === "observation") this.#triggered = true;
    else this.every(1 / this.#opts.controlHz, () => this.tick());
  }

  /** Stops acting (timer or trigger) and waits for a decision in flight (its inference finishes before the actor is closed). */
  override async deactivate(): Promise<void> {
    this.#triggered = false;
    await super.deactivate();
    await this.#inFlight;
  }

  /** Number of ticks on which `act` failed. */
  get errors(): number {
    return this.#errors;
  }

  /** Each camera's newest frame stamped at or before `stamp`. */
  #framesAt(stamp: Time): Record<string, CameraImage> {
    const at = timeNs(stamp);
    const out: Record<string, CameraImage> = {};
    for (const [cam, list] of Object.entries(this.#images)) {
      for (let i = list.length - 1; i >= 0; i--) {
        if (timeNs(list[i].stamp) <= at) {
          out[cam] = list[i];
          break;
        }
      }
    }
    return out;
  }

  /** One tick: act once per new observation, never two decisions at once. */
  async tick(): Promise<void> {
    const obs = this.#obs;
    if (this.#inFlight || !obs || (this.#lastActed && sameTime(obs.header.stamp, this.#lastActed.header.stamp))) return;
    this.#lastActed = obs;
    const run = this.#decide(obs);
    this.#inFlight = run;
    try {
      await run;
    } finally {
      this.#inFlight = null;
      if (this.#resetSeed !== null) {
        const seed = this.#resetSeed;
        this.#resetSeed = null;
        try {
          this.actor.reset(seed);
        } catch (e) {
          // Never a rejection out of a tick started by a subscription (that would abort the process).
          this.#errors++;
          this.node.logger.error(`actor reset (seed ${seed}) failed: ${(e as Error).message}`);
        }
      }
      // An observation that came while this decision ran is answered now.
      if (this.#triggered) queueMicrotask(() => void this.tick());
    }
  }

  async #decide(obs: ObservationMsg): Promise<void> {
    const episode = this.#episode;
    try {
      const action = await this.actor.act({ names: obs.names, values: Array.from(obs.values), stamp: obs.header.stamp, images: this.#framesAt(obs.header.stamp) });
      if (episode !== this.#episode) {
        this.dropped++;
        return;
      }
      const info = this.actor.lastAction?.();
      if (info) this.#pubInfo?.publish({ header: { stamp: obs.header.stamp, frame_id: "" }, policy_version: info.version, base_action: info.base, residual_action: info.residual, action: info.action });
      this.#pub?.publish(jointState(obs.header.stamp, this.actor.jointNames, action));
      // A hold (missing or stale camera frame) is a safety event, once per cause: the operator and the log see why.
      const why = this.actor.holdReason?.() ?? null;
      if (why !== null && why !== this.#lastHold) {
        this.#pubSafety?.publish({ header: { stamp: obs.header.stamp, frame_id: "" }, kind: SafetyEventConstants.SENSOR_STALE, detail: why, joint_names: [...this.actor.jointNames], requested: [], applied: [...action] });
      }
      this.#lastHold = why;
    } catch (e) {
      if (episode !== this.#episode) {
        this.dropped++;
        return;
      }
      this.#errors++;
      const msg = (e as Error).message;
      if (msg !== this.lastError) this.node.logger.error(`act failed, publishing nothing (the watchdog holds the arm): ${msg}`);
      this.lastError = msg;
    }
  }
}
