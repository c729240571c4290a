/**
 * episode_manager: runs the episode lifecycle. `begin(seed)` publishes reset then start; the episode
 * ends on a terminal /reward (success or failure), on the step limit (timeout) or on `abort()`, and
 * every transition is published on /episode/event so the recorder and the other nodes follow it.
 * An operator may pause a running episode (the safety supervisor then holds the arm and the step count
 * stops) and resume it; a terminal reward while paused still ends it.
 */
import type { NodeHandle, Publisher } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header, type EpisodeEventKind } from "../contracts/msgs.ts";

/** How an episode ended. */
export interface EpisodeResult {
  episode: number;
  seed: number;
  outcome: "success" | "failure" | "timeout" | "abort";
  steps: number;
  /** Sim (or wall) seconds from start to end. */
  durationSec: number;
  detail: string;
}

/** Options of the episode manager. */
export interface EpisodeManagerOptions {
  task: string;
  controlHz: number;
  maxSteps: number;
}

/** The episode manager node. */
export class EpisodeManagerNode extends NodeBase {
  #opts: EpisodeManagerOptions;
  #pub?: Publisher<unknown>;
  #episode = 0;
  #seed = 0;
  #steps = 0;
  #startedAt = 0;
  #running = false;
  #paused = false;
  #pausedSec = 0;
  #pausedAt = 0;
  #result: EpisodeResult | null = null;
  #listeners: ((r: EpisodeResult) => void)[] = [];

  constructor(node: NodeHandle, opts: EpisodeManagerOptions) {
    super(node);
    this.#opts = opts;
  }

  override async configure(): Promise<void> {
    this.#pub = this.node.createPublisher(TOPICS.episodeEvent.type, TOPICS.episodeEvent.topic, { durability: "transient_local", depth: 1 });
    this.subscribe<{ reward: number; terminal: boolean; source: string }>(TOPICS.reward, (r) => {
      if (!this.#running || !r.terminal) return;
      this.#end(r.reward > 0 ? "success" : "failure", `terminal reward ${r.reward} from ${r.source}`);
    });
  }

  override async activate(): Promise<void> {
    this.every(1 / this.#opts.controlHz, () => this.#tick());
  }

  override async shutdown(): Promise<void> {
    if (this.#running) this.abort("shutdown");
    await super.shutdown();
  }

  /** True while an episode runs. */
  get running(): boolean {
    return this.#running;
  }

  /** True while the running episode is paused. */
  get paused(): boolean {
    return this.#paused;
  }

  /** The running episode's number, seed and control steps so far. */
  get current(): { episode: number; seed: number; steps: number; maxSteps: number; elapsedSec: number } {
    const now = this.#paused ? this.#pausedAt : this.node.clock.now();
    return { episode: this.#episode, seed: this.#seed, steps: this.#steps, maxSteps: this.#opts.maxSteps, elapsedSec: this.#running ? now - this.#startedAt - this.#pausedSec : 0 };
  }

  /** Pauses the running episode (operator, e-stop, device fault); returns false when nothing runs or it is already paused. */
  pause(reason: string): boolean {
    if (!this.#running || this.#paused) return false;
    this.#paused = true;
    this.#pausedAt = this.node.clock.now();
    this.#publish("pause", reason);
    return true;
  }

  /** Resumes a paused episode. */
  resume(reason = ""): boolean {
    if (!this.#running || !this.#paused) return false;
    this.#paused = false;
    this.#pausedSec += this.node.clock.now() - this.#pausedAt;
    this.#publish("resume", reason);
    return true;
  }

  /** The last finished episode's result. */
  get result(): EpisodeResult | null {
    return this.#result;
  }

  /** Calls `cb` at the end of every episode; returns the function that removes it. */
  onEnd(cb: (r: EpisodeResult) => void): () => void {
    this.#listeners.push(cb);
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== cb);
    };
  }

  /** Resets the world to `seed` and starts episode number `episode`. */
  begin(episode: number, seed: number): void {
    if (this.#running) this.abort("a new episode was started");
    this.#episode = episode;
    this.#seed = seed;
    this.#steps = 0;
    this.#paused = false;
    this.#pausedSec = 0;
    this.#result = null;
    this.#publish("reset", "");
    this.#running = true;
    this.#startedAt = this.node.clock.now();
    this.#publish("start", "");
  }

  /** Resets the world to `seed` without starting (the operator looks at the new start state first). */
  reset(seed: number): boolean {
    if (this.#running) return false;
    this.#seed = seed;
    this.#publish("reset", "reset by the operator");
    return true;
  }

  /** Ends the running episode as aborted (operator, shutdown, fault). */
  abort(reason: string): void {
    if (this.#running) this.#end("abort", reason);
  }

  #tick(): void {
    if (!this.#running || this.#paused) return;
    this.#steps++;
    if (this.#steps >= this.#opts.maxSteps) this.#end("timeout", `reached ${this.#opts.maxSteps} steps`);
  }

  #end(outcome: EpisodeResult["outcome"], detail: string): void {
    this.#running = false;
    this.#paused = false;
    const r: EpisodeResult = { episode: this.#episode, seed: this.#seed, outcome, steps: this.#steps, durationSec: this.node.clock.now() - this.#startedAt, detail };
    this.#result = r;
    this.#publish(outcome, detail);
    for (const cb of [...this.#listeners]) cb(r);
  }

  #publish(event: EpisodeEventKind, detail: string): void {
    this.#pub?.publish({ header: header(this.node.clock.stamp()), episode: this.#episode, event, seed: BigInt(this.#seed), task: this.#opts.task, detail });
  }
}
