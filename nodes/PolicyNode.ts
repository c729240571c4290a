/**
 * policy: a diffusion policy package as an actor, optionally with a residual actor on top (ResFiT,
 * arXiv 2509.19301): the base chunk step plus a bounded residual computed every tick, closed-loop.
 * Packages are verified and checked against the robot's observation and action names at load (a mismatch
 * is refused there, never at run time); inference runs in worker threads; new residual packages are loaded
 * off the control path and swapped in at a chunk boundary.
 */
import { DiffusionPolicy } from "../policies/DiffusionPolicy.ts";
import { assertCompatible } from "../policies/PolicyPackage.ts";
import { ActionChunker } from "../policies/ActionChunker.ts";
import { ResidualPolicy } from "../policies/ResidualPolicy.ts";
import { PolicySlot, type OfferResult } from "../policies/PolicySlot.ts";
import type { Actor, ActionInfo } from "./ActorNode.ts";
import type { IndicatorSetting } from "../policies/AdvantageConditioning.ts";
import { mulberry32 } from "../policies/gaussian.ts";

/** Options of the policy actor. */
export interface PolicyActorOptions {
  jointNames: readonly string[];
  observationNames: readonly string[];
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

/**
 * Best-of-N sampling of base chunks at every re-plan (ALGORITHMS.md §1 "go beyond"): N chunks are sampled from the
 * base policy and one is executed. `critic`: the one whose first executed action (base + residual) the running
 * residual package's critic scores highest (mean − pessimism · std over heads; EXPO / PA-RL rank base samples by
 * Q); needs a residual package with critic.onnx, otherwise the first sample runs (warned once). `consensus`: the
 * medoid — the chunk closest (L2 over the executed steps) to all the others, a critic-free control. `chunk_critic`: the
 * one whose K executed base actions the package's chunk-level critic scores highest (learner chunk_critic.py; PA-RL,
 * Q-chunking). `critics`: both, each critic's N scores standardised (z-scores over the samples) and summed. In
 * training mode a share `explore` of re-plans runs the first (unranked) sample instead.
 */
export interface BestOfN {
  n: number;
  select: "critic" | "chunk_critic" | "critics" | "consensus";
  pessimism?: number;
  /** Training mode only: probability of running the first sample unranked (default 0). */
  explore?: number;
}

/** Element-wise sum of score vectors, each first standardised over its entries (a constant vector adds 0). */
export function sumStandardised(parts: readonly (readonly number[])[]): number[] {
  const out = new Array<number>(parts[0].length).fill(0);
  for (const p of parts) {
    const mean = p.reduce((a, x) => a + x, 0) / p.length;
    const sd = Math.sqrt(p.reduce((a, x) => a + (x - mean) ** 2, 0) / p.length);
    for (let i = 0; i < p.length; i++) out[i] += sd > 0 ? (p[i] - mean) / sd : 0;
  }
  return out;
}

/** Index of the medoid of `chunks` over their first `k` steps: the least sum of L2 distances to the others. */
export function medoidChunk(chunks: readonly (readonly (readonly number[])[])[], k: number): number {
  let best = 0;
  let bestScore = Infinity;
  for (let i = 0; i < chunks.length; i++) {
    let score = 0;
    for (let j = 0; j < chunks.length; j++) {
      let d2 = 0;
      for (let t = 0; t < Math.min(k, chunks[i].length); t++) for (let d = 0; d < chunks[i][t].length; d++) d2 += (chunks[i][t][d] - chunks[j][t][d]) ** 2;
      score += Math.sqrt(d2);
    }
    if (score < bestScore) {
      bestScore = score;
      best = i;
    }
  }
  return best;
}

/** Adapts DiffusionPolicy (+ ResidualPolicy) + ActionChunker to the Actor interface. */
export class PolicyActor implements Actor {
  readonly jointNames: readonly string[];
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
    const j = policy.package.json;
    this.#k = j.action.execute_steps;
    const source = {
      sampleChunk: async (h: number[][]) => {
        const c = this.bestOf ? await this.#bestOfChunk(h, this.bestOf) : await policy.sampleChunk(h);
        if (this.chunkMs.length < 100_000) this.chunkMs.push(c.inferenceMs);
        return c;
      },
    };
    this.#chunker = new ActionChunker(source, { history: j.observation.history, horizon: j.action.horizon, executeSteps: j.action.execute_steps });
  }

  async #bestOfChunk(h: number[][], b: BestOfN): Promise<{ actions: number[][]; inferenceMs: number }> {
    const t0 = performance.now();
    const cands = (await this.policy.sampleChunks(h, b.n)).chunks; // one batched sampler call for the N samples
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
      assertCompatible(policy.package, { observationNames: opts.observationNames, actionNames: opts.jointNames });
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

  async act(obs: { names: string[]; values: number[] }): Promise<number[]> {
    if (this.#tickInChunk === 0) this.residual.swapPoint();
    this.#tickInChunk = (this.#tickInChunk + 1) % this.#k;
    const base = this.zeroBase ? zeroAction(this.policy.package.json.action) : await this.#chunker.next(obs.values);
    const res = this.residual.current;
    if (!res) {
      const b = normaliseAction(this.policy.package.json.action, base);
      this.#last = { version: this.version, base: b, residual: b.map(() => 0), action: b };
      return base;
    }
    const s = await res.step(obs.values, base);
    this.#last = { version: res.version, base: s.baseNorm, residual: s.residualNorm, action: s.actionNorm };
    return s.action;
  }

  lastAction(): ActionInfo | null {
    return this.#last;
  }

  /** Stops the inference workers. */
  async close(): Promise<void> {
    await this.residual.close();
    await this.policy.close();
  }
}

/** The raw action whose normalised value is 0: the middle of the package's action range. */
export function zeroAction(spec: { min: readonly number[]; max: readonly number[] }): number[] {
  return spec.min.map((lo, i) => (lo + spec.max[i]) / 2);
}

/** Raw joint targets → [-1, 1] with the package's action min/max (the inverse of the sampler's unnormalisation). */
export function normaliseAction(spec: { min: readonly number[]; max: readonly number[] }, raw: readonly number[]): number[] {
  return raw.map((a, i) => {
    const span = spec.max[i] - spec.min[i];
    return span > 0 ? (2 * (a - spec.min[i])) / span - 1 : 0;
  });
}
