/**
 * policy: a diffusion policy package as an actor, optionally with a residual actor on top (ResFiT,
 * arXiv 2509.19301): the base chunk step plus a bounded residual computed every tick, closed-loop.
 * Packages are verified and checked against the robot's observation and action names at load (a mismatch
 * is refused there, never at run time); inference runs in worker threads; new residual packages are loaded
 * off the control path and swapped in at a chunk boundary. With cameras, the base needs fresh frames at every re-plan
 * and a residual that sees them at every tick; without them the arm holds (holdReason → ActorNode's SENSOR_STALE).
 */
import { DiffusionPolicy } from "../DiffusionPolicy.ts";
import { assertCompatible, PolicyPackageError } from "../PolicyPackage.ts";
import { ActionChunker } from "../ActionChunker.ts";
import { ResidualPolicy } from "../ResidualPolicy.ts";
import { PolicySlot, type OfferResult } from "../PolicySlot.ts";
import type { Actor, ActionInfo, ActorInput } from "./Actor.ts";
import { indicesOf, latestFrames } from "./cameraFrames.ts";
import type { CameraFrames } from "../DiffusionPolicy.ts";
import { medoidChunk, sumStandardised, type BestOfN } from "./bestOf.ts";
import { normaliseAction, zeroAction } from "../../contracts/normalise.ts";
import type { IndicatorSetting } from "../AdvantageConditioning.ts";
import { mulberry32 } from "../gaussian.ts";

/** Options of the policy actor. */
export interface PolicyActorOptions {
  jointNames: readonly string[];
  observationNames: readonly string[];
  /** Cameras the robot publishes (/camera/<name>/image); a package that sees another camera is refused at load. */
  cameras?: readonly string[];
  /** A camera frame older than this (seconds, against the tick's stamp) counts as missing: the actor holds. Default 0.25. */
  maxImageAgeSec?: number;
  /**
   * On a real robot: observation names only a simulator has (sim/tasks.ts simOnlySignals). A package that reads one is
   * refused at load — it was trained on privileged state a real arm cannot give it.
   */
  simOnlySignals?: ReadonlySet<string>;
  providers?: readonly string[];
  mode?: "graph" | "ts";
  threads?: number;
  /** RECAP advantage indicator (launch `actor.indicator`); default auto. */
  indicator?: IndicatorSetting;
  /** Classifier-free guidance β overriding the RECAP package's (launch `actor.cfg_beta`). */
  cfgBeta?: number;
  /** Sampling temperature of the base policy (launch `actor.noise_scale`; DiffusionPolicyOptions.noiseScale). */
  noiseScale?: number;
  /** A residual package to start with. */
  residual?: string;
  /** Exploration noise on the residual (online RL); false for evaluation. */
  training?: boolean;
  /**
   * Zero base: the base action is 0 in normalised units (the middle of the package's action range) and the base
   * policy is never run; the residual package (scale 1) is then the whole policy. How a policy learned from scratch
   * (the RLPD-SAC baseline, learner `algorithm: rlpd_sac`) runs on the residual machinery. The base package still
   * provides names, normalisation and the version residual packages are checked against.
   */
  zeroBase?: boolean;
  /** Best-of-N base chunks (launch `actor.best_of`); absent or n 1 = one sample per chunk. */
  bestOf?: BestOfN;
  logger?: { warn(msg: string): void; info(msg: string): void };
}

/** Adapts DiffusionPolicy (+ ResidualPolicy) + ActionChunker to the Actor interface. */
export class PolicyActor implements Actor {
  readonly jointNames: readonly string[];
  /** The cameras the base package sees (ActorNode subscribes to them); [] for a state-only policy. */
  readonly cameras: readonly string[];
  /** Ticks held because a camera frame was missing or stale at a re-plan. */
  holds = 0;
  #holding: string | null = null;
  #frames: CameraFrames | undefined;
  #maxImageAge = 0.25;
  #qIdx: number[] | null = null;
  #obsIdx: number[] | null = null;
  readonly policy: DiffusionPolicy;
  readonly residual: PolicySlot<ResidualPolicy>;
  #chunker: ActionChunker;
  #k: number;
  /** Ticks since the last re-plan: 0 means this tick starts a new chunk (a swap point). */
  #tickInChunk = 0;
  /** Latency of each chunk (ms), for status and bench. */
  readonly chunkMs: number[] = [];
  #last: ActionInfo | null = null;
  /** See {@link PolicyActorOptions.zeroBase}; set before the first episode. */
  zeroBase: boolean;
  readonly bestOf: BestOfN | null;
  /** Best-of-N counters: chunks planned with N samples, and how many of them ran a sample other than the first. */
  readonly bestOfStats = { chunks: 0, reranked: 0 };
  #warnedNoCritic = false;
  #logger: PolicyActorOptions["logger"];
  #training: boolean;
  /** Uniform draws for best-of-N exploration, seeded per episode like the sampler noise. */
  #uniform: () => number = mulberry32(0x5eed);

  private constructor(policy: DiffusionPolicy, jointNames: readonly string[], residual: PolicySlot<ResidualPolicy>, zeroBase: boolean, bestOf: BestOfN | null = null, logger?: PolicyActorOptions["logger"], training = false) {
    this.policy = policy;
    this.jointNames = jointNames;
    this.residual = residual;
    this.zeroBase = zeroBase;
    this.bestOf = bestOf && bestOf.n > 1 ? bestOf : null;
    this.#logger = logger;
    this.#training = training;
    this.cameras = policy.package.images.map((i) => i.camera);
    const j = policy.package.json;
    this.#k = j.action.execute_steps;
    const source = {
      sampleChunk: async (h: number[][]) => {
        const c = this.bestOf ? await this.#bestOfChunk(h, this.bestOf) : await policy.sampleChunk(h, undefined, this.#frames);
        if (this.chunkMs.length < 100_000) this.chunkMs.push(c.inferenceMs);
        return c;
      },
    };
    this.#chunker = new ActionChunker(source, { history: j.observation.history, horizon: j.action.horizon, executeSteps: j.action.execute_steps });
  }

  async #bestOfChunk(h: number[][], b: BestOfN): Promise<{ actions: number[][]; inferenceMs: number }> {
    const t0 = performance.now();
    const cands = (await this.policy.sampleChunks(h, b.n, this.#frames)).chunks; // one batched sampler call for the N samples
    let pick = 0;
    const explore = this.#training && (b.explore ?? 0) > 0 && this.#uniform() < (b.explore ?? 0);
    if (b.select === "consensus") pick = medoidChunk(cands, this.#k);
    else if (!explore) {
      // Critic ranking: the chunk critic scores whole chunks, the step critic their first action; `critics` sums
      // both scores, each standardised over the N samples (their scales differ), so two value estimates vote.
      const res = this.residual.current;
      const useChunk = b.select === "chunk_critic" || b.select === "critics";
      const useStep = b.select === "critic" || b.select === "critics";
      const obs = h[h.length - 1];
      const ready = !!res && (!useChunk || res.hasChunkCritic) && (!useStep || res.hasCritic);
      if (res && ready) {
        const parts: number[][] = [];
        if (useStep) parts.push(await res.scoreBaseActions(obs, cands.map((c) => c[0]), b.pessimism ?? 0));
        if (useChunk) parts.push(await res.scoreChunks(obs, cands, b.pessimism ?? 0));
        const scores = parts.length === 1 ? parts[0] : sumStandardised(parts);
        pick = scores.indexOf(Math.max(...scores));
      } else if (!this.#warnedNoCritic) {
        this.#warnedNoCritic = true;
        const file = useChunk && useStep ? "critic.onnx and chunk_critic.onnx (learner chunk_critic: true writes both)" : useChunk ? "chunk_critic.onnx (learner chunk_critic: true writes one)" : "critic.onnx";
        this.#logger?.warn(`actor.best_of: select ${b.select}, but ${res ? `residual ${res.version} lacks ${file}` : "no residual package runs yet"} — executing the first of the ${b.n} samples until one with ${useChunk && useStep ? "both critics" : useChunk ? "a chunk critic" : "a critic"} arrives`);
      }
    }
    this.bestOfStats.chunks++;
    if (pick !== 0) this.bestOfStats.reranked++;
    return { actions: cands[pick], inferenceMs: performance.now() - t0 };
  }

  /** Loads, verifies and checks the package in `dir` (and the residual, if given) against the robot. */
  static async create(dir: string, opts: PolicyActorOptions): Promise<PolicyActor> {
    const policy = await DiffusionPolicy.create(dir, { providers: opts.providers, mode: opts.mode, threads: opts.threads, indicator: opts.indicator, cfgBeta: opts.cfgBeta, noiseScale: opts.noiseScale, logger: opts.logger });
    try {
      const privileged = policy.package.json.observation.names.filter((n) => opts.simOnlySignals?.has(n));
      if (privileged.length > 0) {
        throw new PolicyPackageError("incompatible",
          `Policy ${policy.package.json.version} (${policy.package.dir}) reads ${privileged.join(", ")}: state only the simulator has (the scripted expert's privileged view), which this robot cannot measure — ` +
            `a policy for a real arm reads joint positions and cameras only; retrain it with rlft train-bc --state joints --cameras <names>`,
          { path: policy.package.dir });
      }
      assertCompatible(policy.package, { observationNames: opts.observationNames, actionNames: opts.jointNames, cameras: opts.cameras });
    } catch (e) {
      await policy.close();
      throw e;
    }
    const slot = new PolicySlot<ResidualPolicy>({
      load: (d) => ResidualPolicy.create(d, { base: policy.package, providers: opts.providers, threads: opts.threads, training: opts.training ?? false }),
      probe: (r) => r.probe(),
      logger: opts.logger,
    });
    const actor = new PolicyActor(policy, opts.jointNames, slot, opts.zeroBase ?? false, opts.bestOf ?? null, opts.logger, opts.training ?? false);
    actor.#maxImageAge = opts.maxImageAgeSec ?? 0.25;
    if (opts.residual) {
      const r = await slot.offer(opts.residual);
      if (!r.ok) {
        await actor.close();
        throw new Error(r.reason);
      }
      slot.swapPoint();
    }
    return actor;
  }

  /** The running version: the residual's when one runs, else the base package's (`zero@<base>` with a zero base). */
  get version(): string {
    return this.residual.current?.version ?? (this.zeroBase ? `zero@${this.policy.package.json.version}` : this.policy.package.json.version);
  }

  /** Loads a new residual package off the control path; it takes over at the next chunk boundary. */
  offerResidual(dir: string): Promise<OfferResult> {
    return this.residual.offer(dir);
  }

  reset(seed: number): void {
    // Noise seeded per episode: the same policy version, seed and observations give the same actions (rlft replay --policy).
    this.policy.reseed(seed);
    this.residual.current?.reseed(seed);
    this.#uniform = mulberry32(seed ^ 0x5eed);
    this.#chunker.reset();
    this.#tickInChunk = 0;
  }

  async act(obs: ActorInput): Promise<number[]> {
    if (this.cameras.length > 0 && this.#tickInChunk === 0 && !this.zeroBase) {
      // A re-plan needs a fresh frame from every camera; without one the arm holds where it is (never acts on an old
      // scene) and the next tick tries again.
      const frames = latestFrames(this.cameras, obs, this.#maxImageAge);
      if (typeof frames === "string") return this.#hold(obs, frames);
      this.#frames = frames;
      this.#holding = null;
    }
    if (this.#tickInChunk === 0) this.residual.swapPoint();
    const res = this.residual.current;
    let resFrames: CameraFrames | undefined;
    if (res && res.images.length > 0) {
      // A residual that sees cameras corrects every tick from that tick's frames: a missing or stale one holds the arm
      // (the chunk waits where it is) exactly as a re-plan of the base does.
      const frames = latestFrames(res.images.map((c) => c.camera), obs, this.#maxImageAge);
      if (typeof frames === "string") return this.#hold(obs, frames);
      resFrames = frames;
      this.#holding = null;
    }
    this.#tickInChunk = (this.#tickInChunk + 1) % this.#k;
    // The package's observation, in its order, from the robot's (which may publish more, e.g. the sim's privileged state).
    this.#obsIdx ??= indicesOf(this.policy.package.json.observation.names, obs.names, `policy ${this.version} observation`);
    const values = this.#obsIdx.map((i) => obs.values[i]);
    const base = this.zeroBase ? zeroAction(this.policy.package.json.action) : await this.#chunker.next(values);
    if (!res) {
      const b = normaliseAction(this.policy.package.json.action, base);
      this.#last = { version: this.version, base: b, residual: b.map(() => 0), action: b };
      return base;
    }
    const s = await res.step(values, base, resFrames);
    this.#last = { version: res.version, base: s.baseNorm, residual: s.residualNorm, action: s.actionNorm };
    return s.action;
  }

  lastAction(): ActionInfo | null {
    return this.#last;
  }

  holdReason(): string | null {
    return this.#holding;
  }

  /** Commands the measured joint positions (q.<joint> in the observation): the arm stays put until frames come back. */
  #hold(obs: ActorInput, why: string): number[] {
    this.holds++;
    if (why !== this.#holding) this.#logger?.warn(`policy ${this.version}: holding — ${why}`);
    this.#holding = why;
    this.#qIdx ??= indicesOf(this.jointNames.map((j) => `q.${j}`), obs.names, `policy ${this.version} hold`);
    const q = this.#qIdx.map((i) => obs.values[i]);
    const n = normaliseAction(this.policy.package.json.action, q);
    this.#last = { version: this.version, base: n, residual: n.map(() => 0), action: n };
    return q;
  }

  /** Stops the inference workers. */
  async close(): Promise<void> {
    await this.residual.close();
    await this.policy.close();
  }
}
