/**
 * A residual policy on top of a base package (docs/protocol.md § Residual policy package; ResFiT, arXiv 2509.19301):
 * executed action (normalised) = clip(base + residual.onnx(obs, base) [+ N(0, exploration_std²) in training], -1, 1);
 * with residual.exploration_rho ρ > 0 the noise is temporally correlated per joint (AR(1) / discretised
 * Ornstein–Uhlenbeck, as DDPG; coloured noise, Eberhard et al. ICLR 2023): n_t = ρ n_{t−1} + √(1−ρ²) ε_t, same
 * stationary std, reset at every episode start. A warm-up package (residual.exploration_uniform u > 0) explores
 * with U(−u, u) instead.
 * Normalisation uses the base package's stats; residual.onnx runs in the inference worker, off the event loop.
 * A residual over a base that sees cameras sees them too (observation.images, the base's cameras at the same sizes):
 * residual.onnx takes the tick's uint8 frames between obs and base_action, every tick (policies/imageFeeds.ts).
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PolicyPackage, PolicyPackageError, readPolicyJson, verifyHashes, type ResidualPolicyJson } from "./PolicyPackage.ts";
import { InferenceClient, type InferenceClientOptions } from "./InferenceClient.ts";
import { PolicyInputError } from "./PolicyInputError.ts";
import { blankImageFeeds, cameraMismatches, imageFeeds, requireImageFeeds, type CameraFrames } from "./imageFeeds.ts";
import type { ImageInput } from "./PolicyPackage.ts";
import type { WireTensor } from "./InferenceClient.ts";
import { gaussian, mulberry32 } from "./gaussian.ts";
import { tile } from "./tile.ts";

/** Options of {@link ResidualPolicy.create}. */
export interface ResidualPolicyOptions {
  /** The base package the robot runs; the residual must have been trained on exactly this one. */
  base: PolicyPackage;
  providers?: readonly string[];
  threads?: number;
  /** Add exploration noise (online RL); false for evaluation and deployment. */
  training: boolean;
  /** Seed of the exploration noise. Default 0. */
  seed?: number;
  logger?: InferenceClientOptions["logger"];
}

/** One residual step; all `*Norm` arrays are in the base package's normalised action space. */
export interface ResidualStep {
  /** Executed action in robot units. */
  action: number[];
  baseNorm: number[];
  /** The residual actually applied: actionNorm − baseNorm (network output + noise, after clipping). */
  residualNorm: number[];
  actionNorm: number[];
}

/** A verified residual package with its ONNX session. */
export class ResidualPolicy {
  readonly dir: string;
  readonly json: ResidualPolicyJson;
  readonly base: PolicyPackage;
  readonly training: boolean;
  #client: InferenceClient;
  #normal: () => number;
  #uniform: () => number;
  /** AR(1) exploration state per action dim (exploration_rho > 0); null until the first draw of an episode. */
  #noise: number[] | null = null;

  private constructor(dir: string, json: ResidualPolicyJson, base: PolicyPackage, client: InferenceClient, training: boolean, seed: number) {
    this.dir = dir;
    this.json = json;
    this.base = base;
    this.#client = client;
    this.training = training;
    this.#normal = gaussian(seed);
    this.#uniform = mulberry32(seed ^ 0x2545f491);
  }

  /** Restarts the exploration noise from `seed` (at episode start, like the base policy's sampler noise). */
  reseed(seed: number): void {
    this.#normal = gaussian(seed);
    this.#uniform = mulberry32(seed ^ 0x2545f491);
    this.#noise = null;
  }

  /** Package version (logged with every action). */
  get version(): string {
    return this.json.version;
  }

  /** Loads and verifies the residual package in `dir` against `options.base`, starts and warms up its session. */
  static async create(dir: string, options: ResidualPolicyOptions): Promise<ResidualPolicy> {
    const { dir: abs, jsonPath, json } = await readPolicyJson(dir);
    if (json.kind !== "residual") throw new PolicyPackageError("kind", `${jsonPath} is a ${json.kind} package, not a residual policy`, { path: jsonPath });
    const base = options.base;
    const baseJsonPath = join(base.dir, "policy.json");
    const baseSha = createHash("sha256").update(await readFile(baseJsonPath)).digest("hex");
    if (json.base.version !== base.json.version || json.base.policy_json_sha256 !== baseSha) {
      const what = json.base.version !== base.json.version ? `base.version ${json.base.version}, but the robot runs base ${base.json.version}` : `base.policy_json_sha256 ${json.base.policy_json_sha256}, but ${baseJsonPath} hashes to ${baseSha}`;
      throw new PolicyPackageError("base_mismatch", `Residual ${json.version} (${abs}) was trained on another base: it names ${what} — deploy the base it was trained on, or train a residual for this base`, { path: jsonPath });
    }
    checkResidualDims(json, base, jsonPath);
    for (const f of Object.values(json.files)) if (f !== undefined && !(f in json.sha256)) throw new PolicyPackageError("dims", `${jsonPath}: sha256 has no hash for ${f} (every file must be hashed)`, { path: jsonPath });
    await verifyHashes(abs, json);
    const zeros = (n: number) => ({ data: new Float32Array(n), dims: [1, n] });
    const critic = json.files.critic;
    const chunkCritic = json.files.chunk_critic;
    if (chunkCritic && !json.chunk_critic) throw new PolicyPackageError("dims", `${jsonPath}: files.chunk_critic needs chunk_critic.steps (how many base actions of a chunk it scores)`, { path: jsonPath });
    if (json.chunk_critic && json.chunk_critic.steps !== base.json.action.execute_steps) {
      throw new PolicyPackageError("incompatible", `${jsonPath}: chunk_critic.steps ${json.chunk_critic.steps} differs from the base's action.execute_steps ${base.json.action.execute_steps}; the chunk critic scores the steps a chunk executes — retrain it against this base`, { path: jsonPath });
    }
    const chunkWidth = (json.chunk_critic?.steps ?? 0) * base.actionDim;
    const client = await InferenceClient.create(
      { actor: join(abs, json.files.actor), ...(critic ? { critic: join(abs, critic) } : {}), ...(chunkCritic ? { chunk_critic: join(abs, chunkCritic) } : {}) },
      {
        providers: options.providers,
        threads: options.threads,
        logger: options.logger,
        warmup: {
          actor: { obs: zeros(base.obsDim), ...blankImageFeeds(json.observation.images ?? []), base_action: zeros(base.actionDim) },
          ...(critic ? { critic: { obs: zeros(base.obsDim), action: zeros(base.actionDim) } } : {}),
          ...(chunkCritic ? { chunk_critic: { obs: zeros(base.obsDim), chunk: zeros(chunkWidth) } } : {}),
        },
        ...(critic || chunkCritic || json.observation.images ? { expectInputs: { actor: ["obs", ...(json.observation.images ?? []).map((c) => c.input), "base_action"], ...(critic ? { critic: ["obs", "action"] } : {}), ...(chunkCritic ? { chunk_critic: ["obs", "chunk"] } : {}) } } : {}),
      },
    );
    return new ResidualPolicy(abs, json, base, client, options.training, options.seed ?? 0);
  }

  /** Execution provider the actor runs on. */
  get providers(): Readonly<Record<string, string>> {
    return this.#client.providers;
  }

  /** The cameras residual.onnx reads, in input order ([] for a state-only residual); the base's cameras. */
  get images(): readonly ImageInput[] {
    return this.json.observation.images ?? [];
  }

  /** True when the package carries the learner's critic (critic.onnx): {@link scoreBaseActions} works. */
  get hasCritic(): boolean {
    return this.json.files.critic !== undefined;
  }

  /** True when the package carries a chunk-level critic (chunk_critic.onnx): {@link scoreChunks} works. */
  get hasChunkCritic(): boolean {
    return this.json.files.chunk_critic !== undefined; // create() refuses one without chunk_critic.steps
  }

  /**
   * Chunk-critic-ranked best-of-N (learner algorithms/residual_td3/chunk_critic.py; PA-RL / Q-chunking): for one raw observation and N
   * candidate raw base chunks, the chunk critic's score of each chunk's first K actions (K = chunk_critic.steps, the
   * base's execute_steps): mean over heads − `pessimism` · std over heads. One batched call.
   */
  async scoreChunks(obsRaw: readonly number[], chunksRaw: readonly (readonly (readonly number[])[])[], pessimism = 0): Promise<number[]> {
    if (!this.hasChunkCritic) throw new PolicyPackageError("dims", `Residual ${this.version} (${this.dir}) has no chunk_critic.onnx: chunk-critic best-of-N needs a package from a learner run with chunk_critic: true`, { path: this.dir });
    const n = chunksRaw.length;
    const k = this.json.chunk_critic!.steps;
    const m = this.base.actionDim;
    const obs = this.#tiledObservation(obsRaw, n);
    const chunk = new Float32Array(n * k * m);
    for (let i = 0; i < n; i++) {
      if (chunksRaw[i].length < k) throw new PolicyInputError("bad_shape", `best-of-N chunk ${i}: ${chunksRaw[i].length} actions, the chunk critic scores ${k}`);
      for (let t = 0; t < k; t++) chunk.set(this.#normBase(chunksRaw[i][t]), (i * k + t) * m);
    }
    const q = await this.#client.run("chunk_critic", { obs: { data: obs, dims: [n, obs.length / n] }, chunk: { data: chunk, dims: [n, k * m] } });
    return ensembleScores(q.outputs.q.data as Float32Array, n, pessimism);
  }

  /**
   * Critic-ranked best-of-N (docs/algorithms.md §1 "beyond the recipe"; EXPO / PA-RL rank base samples by Q): for one raw
   * observation and N candidate raw base actions (the first action of N sampled base chunks), the ensemble's
   * score of what the robot would execute, clip(base + residual, −1, 1), without exploration noise:
   * mean over heads − `pessimism` · std over heads. One batched actor call and one batched critic call.
   */
  async scoreBaseActions(obsRaw: readonly number[], baseActionsRaw: readonly (readonly number[])[], pessimism = 0): Promise<number[]> {
    if (!this.hasCritic) throw new PolicyPackageError("dims", `Residual ${this.version} (${this.dir}) has no critic.onnx: critic-ranked best-of-N needs a package exported with its critic (learner residual_td3)`, { path: this.dir });
    const n = baseActionsRaw.length;
    const obs = this.#tiledObservation(obsRaw, n);
    const d = obs.length / n;
    const m = this.base.actionDim;
    const base = new Float32Array(n * m);
    for (let k = 0; k < n; k++) base.set(this.#normBase(baseActionsRaw[k]), k * m);
    // Feeds are transferred to the worker (their buffers detach): each call gets its own copies.
    const { outputs } = await this.#client.run("actor", { obs: { data: new Float32Array(obs), dims: [n, d] }, base_action: { data: new Float32Array(base), dims: [n, m] } });
    const res = outputs.residual.data as Float32Array;
    const act = base.map((b, i) => Math.min(1, Math.max(-1, b + res[i])));
    const q = await this.#client.run("critic", { obs: { data: obs, dims: [n, d] }, action: { data: act, dims: [n, m] } });
    return ensembleScores(q.outputs.q.data as Float32Array, n, pessimism);
  }

  /**
   * One step: raw observation and raw base action (robot units), and the tick's camera frames when the residual sees
   * cameras → executed action and its normalised parts. Throws {@link PolicyInputError} on a missing or wrong frame.
   */
  async step(obsRaw: readonly number[], baseActionRaw: readonly number[], images?: CameraFrames): Promise<ResidualStep> {
    const { action } = this.base.json;
    const obs = this.#normObservation(obsRaw);
    const baseNorm = this.#normBase(baseActionRaw);
    const residual = await this.residual(obs, Float32Array.from(baseNorm), imageFeeds(this.images, images, `residual ${this.version}`));
    const noise = this.#explorationNoise(baseNorm.length);
    const actionNorm = baseNorm.map((b, j) => Math.min(1, Math.max(-1, b + residual[j] + (noise ? noise[j] : 0))));
    return {
      action: actionNorm.map((a, j) => action.min[j] + ((a + 1) / 2) * (action.max[j] - action.min[j])),
      baseNorm,
      residualNorm: actionNorm.map((a, j) => a - baseNorm[j]),
      actionNorm,
    };
  }

  /** Raw observation → normalised with the base stats; throws {@link PolicyInputError} on a wrong length or NaN/Inf. */
  #normObservation(obsRaw: readonly number[]): Float32Array {
    const { names, mean, std } = this.base.json.observation;
    if (obsRaw.length !== names.length) throw new PolicyInputError("bad_shape", `observation: expected ${names.length} values (${names.join(", ")}), found ${obsRaw.length}`);
    const obs = new Float32Array(names.length);
    for (let i = 0; i < names.length; i++) {
      if (!Number.isFinite(obsRaw[i])) throw new PolicyInputError("non_finite_observation", `observation ${names[i]} is ${obsRaw[i]} — refusing to run the policy; hold the robot and check the sensor`);
      obs[i] = (obsRaw[i] - mean[i]) / std[i];
    }
    return obs;
  }

  /**
   * This step's exploration noise for `m` action dims, or null for none (evaluation, or std 0): U(−u, u) for a
   * warm-up package; else N(0, exploration_std²), white, or AR(1) with correlation exploration_rho (the first draw of
   * an episode comes from the stationary distribution, so every step has std exploration_std).
   */
  #explorationNoise(m: number): readonly number[] | null {
    if (!this.training) return null;
    const { exploration_std: std, exploration_uniform: u = 0, exploration_rho: rho = 0 } = this.json.residual;
    if (u > 0) return Array.from({ length: m }, () => u * (2 * this.#uniform() - 1));
    if (!(std > 0)) return null;
    if (rho > 0 && this.#noise) {
      const k = Math.sqrt(1 - rho * rho);
      for (let j = 0; j < m; j++) this.#noise[j] = rho * this.#noise[j] + k * std * this.#normal();
    } else this.#noise = Array.from({ length: m }, () => std * this.#normal());
    return this.#noise;
  }

  /** One raw observation, normalised, repeated for a batch of `n` candidates ([n · obs_dim], row-major). */
  #tiledObservation(obsRaw: readonly number[], n: number): Float32Array {
    return tile(this.#normObservation(obsRaw), n);
  }

  /** Raw base action → [-1, 1] with the base package's action range; throws {@link PolicyInputError} on a wrong length or NaN/Inf. */
  #normBase(raw: readonly number[]): number[] {
    const { names, min, max } = this.base.json.action;
    if (raw.length !== names.length) throw new PolicyInputError("bad_shape", `base action: expected ${names.length} values (${names.join(", ")}), found ${raw.length}`);
    const out = new Array<number>(names.length);
    for (let j = 0; j < names.length; j++) {
      if (!Number.isFinite(raw[j])) throw new PolicyInputError("bad_shape", `base action ${names[j]} is ${raw[j]}`);
      const span = max[j] - min[j];
      out[j] = span > 0 ? (2 * (raw[j] - min[j])) / span - 1 : 0;
    }
    return out;
  }

  /**
   * residual.onnx on normalised inputs (obs_dim and A values) and, for a residual that sees cameras, the frames' feeds
   * ({@link imageFeeds}) → the network's residual (A values, |r| ≤ scale).
   */
  async residual(obsNorm: Float32Array, baseNorm: Float32Array, images: Record<string, WireTensor> = {}): Promise<Float32Array> {
    requireImageFeeds(this.images, images, `residual ${this.version}`);
    const frames = Object.fromEntries(this.images.map((c) => [c.input, images[c.input]]));
    const { outputs } = await this.#client.run("actor", {
      obs: { data: new Float32Array(obsNorm), dims: [1, obsNorm.length] },
      ...frames,
      base_action: { data: new Float32Array(baseNorm), dims: [1, baseNorm.length] },
    });
    return outputs.residual.data as Float32Array;
  }

  /**
   * The residual for probe inputs, without exploration noise (no random state is touched): the mean observation
   * (normalised 0) and ±1 standard deviation, each with the base action at the middle and at both ends of its range
   * (and all-zero frames for a residual that sees cameras).
   * PolicySlot refuses a package unless every value is finite.
   */
  async probe(): Promise<number[]> {
    const d = this.base.obsDim;
    const m = this.base.actionDim;
    const out: number[] = [];
    for (const o of [0, 1, -1]) {
      for (const b of [0, 1, -1]) out.push(...(await this.residual(new Float32Array(d).fill(o), new Float32Array(m).fill(b), blankImageFeeds(this.images))));
    }
    return out;
  }

  /** Stops the inference worker. */
  async close(): Promise<void> {
    await this.#client.close();
  }
}

/** Per-row score of a batch-first ensemble output q [n, E]: mean over heads − pessimism · std over heads. */
function ensembleScores(qs: Float32Array, n: number, pessimism: number): number[] {
  const heads = qs.length / n;
  const out: number[] = [];
  for (let k = 0; k < n; k++) {
    let mean = 0;
    for (let e = 0; e < heads; e++) mean += qs[k * heads + e];
    mean /= heads;
    let v = 0;
    for (let e = 0; e < heads; e++) v += (qs[k * heads + e] - mean) ** 2;
    out.push(mean - pessimism * Math.sqrt(v / Math.max(1, heads - 1)));
  }
  return out;
}

function checkResidualDims(json: ResidualPolicyJson, base: PolicyPackage, jsonPath: string): void {
  const problems: string[] = [];
  const same = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  if (!same(json.observation.names, base.json.observation.names)) problems.push(`observation.names [${json.observation.names.join(", ")}] differ from the base's [${base.json.observation.names.join(", ")}]`);
  if (!same(json.action.names, base.json.action.names)) problems.push(`action.names [${json.action.names.join(", ")}] differ from the base's [${base.json.action.names.join(", ")}]`);
  const n = json.observation.names.length;
  const m = json.action.names.length;
  for (const [k, v, want] of [["observation.mean", json.observation.mean, n], ["observation.std", json.observation.std, n], ["action.min", json.action.min, m], ["action.max", json.action.max, m]] as const) {
    if (v.length !== want) problems.push(`${k}: expected ${want} values, found ${v.length}`);
  }
  problems.push(...cameraMismatches(json.observation.images ?? [], base.images, `the base ${base.json.version}`));
  if (problems.length > 0) throw new PolicyPackageError("incompatible", `${jsonPath} does not fit its base ${base.json.version}:\n  - ${problems.join("\n  - ")}`, { path: jsonPath });
}
