/**
 * episode_manager: runs the episode lifecycle. `begin(seed)` publishes reset then start; the episode
 * ends on a terminal /reward (success or failure), on the step limit (timeout) or on `abort()`, and
 * every transition is published on /episode/event so the recorder and the other nodes follow it.
 */
import type { NodeHandle, Publisher } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import { TOPICS } from "./topics.ts";
import { header, type EpisodeEventKind } from "./msgs.ts";

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
    this.#result = null;
    this.#publish("reset", "");
    this.#running = true;
    this.#startedAt = this.node.clock.now();
    this.#publish("start", "");
  }

  /** Ends the running episode as aborted (operator, shutdown, fault). */
  abort(reason: string): void {
    if (this.#running) this.#end("abort", reason);
  }

  #tick(): void {
    if (!this.#running) return;
    this.#steps++;
    if (this.#steps >= this.#opts.maxSteps) this.#end("timeout", `reached ${this.#opts.maxSteps} steps`);
  }

  #end(outcome: EpisodeResult["outcome"], detail: string): void {
    this.#running = false;
    const r: EpisodeResult = { episode: this.#episode, seed: this.#seed, outcome, steps: this.#steps, durationSec: this.node.clock.now() - this.#startedAt, detail };
    this.#result = r;
    this.#publish(outcome, detail);
    for (const cb of [...this.#listeners]) cb(r);
  }

  #publish(event: EpisodeEventKind, detail: string): void {
    this.#pub?.publish({ header: header(this.node.clock.stamp()), episode: this.#episode, event, seed: BigInt(this.#seed), task: this.#opts.task, detail });
  }
}
