/**
 * policy (VLA): a language-conditioned VLA package as an actor. Per chunk it needs a fresh frame from every camera the
 * package names and the episode's instruction (/task/instruction); it executes `execute_steps` actions of each chunk.
 * A missing or stale camera frame at a chunk boundary makes it hold — it commands the measured joint positions and
 * does not run the model on an old or absent image — and it re-plans as soon as frames arrive.
 */
import { VlaPolicy } from "../vla/VlaPolicy.ts";
import { assertVlaCompatible } from "../vla/VlaPackage.ts";
import type { Actor, ActionInfo, ActorInput } from "./Actor.ts";
import { indicesOf, latestFrames } from "./cameraFrames.ts";
import { normaliseAction } from "../../contracts/normalise.ts";

/** Options of {@link VlaActor.create}. */
export interface VlaActorOptions {
  jointNames: readonly string[];
  observationNames: readonly string[];
  /** Cameras this robot publishes (/camera/<name>/image). */
  cameras: readonly string[];
  /** A frame older than this (seconds, against the observation's stamp) counts as missing. Default 0.25. */
  maxImageAgeSec?: number;
  /** Instruction to use before /task/instruction says anything (e.g. `rlft eval --instruction`). */
  instruction?: string;
  providers?: readonly string[];
  threads?: number;
  /** Sampling temperature (launch `actor.noise_scale`). */
  noiseScale?: number;
  logger?: { warn(msg: string): void; info(msg: string): void };
}

/** Adapts VlaPolicy to the Actor interface with open-loop chunk execution. */
export class VlaActor implements Actor {
  readonly jointNames: readonly string[];
  readonly cameras: readonly string[];
  readonly policy: VlaPolicy;
  /** Latency of each chunk (ms). */
  readonly chunkMs: number[] = [];
  /** Ticks held because a frame was missing or stale. */
  holds = 0;
  /** Why the last hold happened, for status displays. */
  lastHold = "";
  #instruction: string;
  #stateIdx: number[] | null = null;
  #qIdx: number[] | null = null;
  #queue: number[][] = [];
  /** What the runtime added to each action of the current chunk (delta actions: the joints at its first tick). */
  #chunkBase: number[] = [];
  #maxAge: number;
  #logger: NonNullable<VlaActorOptions["logger"]>;
  #last: ActionInfo | null = null;
  #warnedUnknown = new Set<string>();
  #holding: string | null = null;

  private constructor(policy: VlaPolicy, opts: VlaActorOptions) {
    this.policy = policy;
    this.jointNames = opts.jointNames;
    // An optional camera the robot lacks is not waited for: the policy feeds it blank with its mask 0.
    this.cameras = policy.package.json.cameras.filter((c) => !c.optional || opts.cameras.includes(c.name)).map((c) => c.name);
    this.#instruction = opts.instruction ?? "";
    this.#maxAge = opts.maxImageAgeSec ?? 0.25;
    this.#logger = opts.logger ?? console;
  }

  /** Loads and verifies the package, refuses it when cameras / state / action do not match the robot. */
  static async create(dir: string, opts: VlaActorOptions): Promise<VlaActor> {
    const policy = await VlaPolicy.create(dir, { providers: opts.providers, threads: opts.threads, noiseScale: opts.noiseScale, logger: opts.logger });
    try {
      assertVlaCompatible(policy.package, { observationNames: opts.observationNames, actionNames: opts.jointNames, cameras: opts.cameras });
    } catch (e) {
      await policy.close();
      throw e;
    }
    return new VlaActor(policy, opts);
  }

  get version(): string {
    return this.policy.package.json.version;
  }

  /** The instruction the next chunks condition on. */
  get instruction(): string {
    return this.#instruction;
  }

  setInstruction(text: string): void {
    this.#instruction = text;
    const unknown = this.policy.encode(text).unknown;
    const key = unknown.join(" ");
    if (unknown.length > 0 && !this.#warnedUnknown.has(key)) {
      this.#warnedUnknown.add(key);
      this.#logger.warn(`VLA ${this.version}: instruction "${text}" has words the tokenizer does not know (${unknown.join(", ")}); they become its unknown token`);
    }
    // The prompt the model reads (the package's template applied, e.g. RECAP's "advantage positive") must fit max_length.
    const { dropped } = this.policy.package.tokenizer.encode(this.policy.prompt(text, new Float32Array(this.policy.package.stateWidth)));
    if (dropped.length > 0 && !this.#warnedUnknown.has(`dropped:${text}`)) {
      this.#warnedUnknown.add(`dropped:${text}`);
      this.#logger.warn(`VLA ${this.version}: the prompt for instruction "${text}" is longer than the package's ${this.policy.package.json.language.max_length} tokens; the tokenizer cuts [${dropped.join(", ")}]${this.policy.package.json.language.template ? ` (the template ${JSON.stringify(this.policy.package.json.language.template)} adds words too)` : ""} — shorten the instruction`);
    }
  }

  reset(_seed: number): void {
    this.#queue = [];
  }

  async act(obs: ActorInput): Promise<number[]> {
    this.#stateIdx ??= indicesOf(this.policy.package.json.state.names, obs.names, "VLA state");
    this.#qIdx ??= indicesOf(this.jointNames.map((j) => `q.${j}`), obs.names, "VLA hold");
    if (this.#queue.length === 0) {
      const frames = latestFrames(this.cameras, obs, this.#maxAge);
      if (typeof frames === "string") return this.#hold(obs, frames);
      this.#holding = null;
      const chunk = await this.policy.sampleChunk({ state: this.#stateIdx.map((i) => obs.values[i]), instruction: this.#instruction, images: frames });
      if (this.chunkMs.length < 100_000) this.chunkMs.push(chunk.inferenceMs);
      this.#queue = chunk.actions.slice(0, this.policy.package.json.action.execute_steps);
      this.#chunkBase = this.#deltaBase(this.#stateIdx.map((i) => obs.values[i]));
    }
    const a = this.#queue.shift()!;
    const n = normaliseAction(this.#actionRange(), a.map((v, i) => v - (this.#chunkBase[i] ?? 0)));
    this.#last = { version: this.version, base: n, residual: n.map(() => 0), action: n };
    return a;
  }

  lastAction(): ActionInfo | null {
    return this.#last;
  }

  holdReason(): string | null {
    return this.#holding;
  }

  async close(): Promise<void> {
    await this.policy.close();
  }

  /** Commands the measured joint positions: the arm stays where it is until frames come back. */
  #hold(obs: ActorInput, why: string): number[] {
    this.holds++;
    this.#holding = why;
    if (why !== this.lastHold) this.#logger.warn(`VLA ${this.version}: holding — ${why}`);
    this.lastHold = why;
    const q = this.#qIdx!.map((i) => obs.values[i]);
    const st = (this.#stateIdx ?? []).map((i) => obs.values[i]);
    const base = st.length > 0 ? this.#deltaBase(st) : [];
    const n = normaliseAction(this.#actionRange(), q.map((v, i) => v - (base[i] ?? 0)));
    this.#last = { version: this.version, base: n, residual: n.map(() => 0), action: n };
    return q;
  }

  /** Per action, the state value a delta action is relative to (0 for absolute actions). */
  #deltaBase(state: readonly number[]): number[] {
    const { names, relative_to_state: rel } = this.policy.package.json.action;
    const stateNames = this.policy.package.json.state.names;
    return names.map((_, a) => (rel?.[a] ? state[stateNames.indexOf(rel[a]!)] : 0));
  }

  #actionRange(): { min: number[]; max: number[] } {
    const { offset, scale } = this.policy.package.actions;
    return { min: offset.map((o, i) => o - scale[i]), max: offset.map((o, i) => o + scale[i]) };
  }
}
