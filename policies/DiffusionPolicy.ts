/**
 * A diffusion policy from a verified package: normalise the observation history, denoise an action chunk
 * (whole sampler graph, or the TS DDIM scheduler around the one-step denoiser), unnormalise the actions.
 */
import { PolicyPackage } from "./PolicyPackage.ts";
import { InferenceClient, type InferenceClientOptions } from "./InferenceClient.ts";
import { clipUnit, ddimSchedule, ddimStep, type DdimStep } from "./ddim.ts";
import { gaussian, gaussianArray } from "./gaussian.ts";

/** Thrown for inputs the policy refuses (non-finite or wrongly shaped observations); the caller holds the robot. */
export class PolicyInputError extends Error {
  readonly code: "non_finite_observation" | "bad_shape";

  constructor(code: PolicyInputError["code"], message: string) {
    super(message);
    this.name = "PolicyInputError";
    this.code = code;
  }
}

/** Options of {@link DiffusionPolicy.create}. */
export interface DiffusionPolicyOptions {
  /** Execution providers in order of preference. Default `["cpu"]`. */
  providers?: readonly string[];
  /** "graph": sampler.onnx runs the whole DDIM loop (default). "ts": policies/ddim.ts + denoiser.onnx per step. */
  mode?: "graph" | "ts";
  /** Seed of the Gaussian noise used when sampleChunk gets none. Default 0. */
  seed?: number;
  /** onnxruntime intra-op threads. Default 1. */
  threads?: number;
  logger?: InferenceClientOptions["logger"];
}

/** One denoised action chunk. */
export interface ActionChunk {
  /** horizon × action_dim, in robot units (unnormalised). */
  actions: number[][];
  /** Wall time of the whole chunk (all ONNX calls and the TS work). */
  inferenceMs: number;
}

/** A loaded diffusion policy; inference runs in a worker thread. */
export class DiffusionPolicy {
  /** The verified package it runs. */
  readonly package: PolicyPackage;
  readonly mode: "graph" | "ts";
  #client: InferenceClient;
  #normal: () => number;
  #schedule: DdimStep[];

  private constructor(pkg: PolicyPackage, client: InferenceClient, mode: "graph" | "ts", seed: number) {
    this.package = pkg;
    this.#client = client;
    this.mode = mode;
    this.#normal = gaussian(seed);
    this.#schedule = ddimSchedule(pkg.json.sampler.timesteps, pkg.json.sampler.alphas_cumprod);
  }

  /** Loads and verifies the package in `dir`, starts the inference worker, warms the model up. */
  static async create(dir: string, options: DiffusionPolicyOptions = {}): Promise<DiffusionPolicy> {
    const pkg = await PolicyPackage.load(dir);
    const mode = options.mode ?? "graph";
    const { history } = pkg.json.observation;
    const { horizon } = pkg.json.action;
    const obsDims = [1, history * pkg.obsDim];
    const xDims = [1, horizon, pkg.actionDim];
    const zeros = (dims: number[]) => ({ data: new Float32Array(dims.reduce((a, b) => a * b, 1)), dims });
    const client =
      mode === "graph"
        ? await InferenceClient.create({ sampler: pkg.samplerPath }, { ...options, warmup: { sampler: { obs: zeros(obsDims), noise: zeros(xDims) } } })
        : await InferenceClient.create(
            { denoiser: pkg.denoiserPath },
            { ...options, warmup: { denoiser: { obs: zeros(obsDims), x: zeros(xDims), t: { data: new BigInt64Array([BigInt(pkg.json.sampler.timesteps[0])]), dims: [1] } } } },
          );
    return new DiffusionPolicy(pkg, client, mode, options.seed ?? 0);
  }

  /** Restarts the noise generator from `seed` (the policy actor does this at every episode start, so an episode's
   * actions depend only on its seed and observations: what makes open-loop replay exact). */
  reseed(seed: number): void {
    this.#normal = gaussian(seed);
  }

  /** Execution provider each model actually runs on. */
  get providers(): Readonly<Record<string, string>> {
    return this.#client.providers;
  }

  /**
   * Denoises one action chunk from `obsHistory` (history × obs_dim, raw, oldest first).
   * `noise` (horizon × action_dim, flattened) defaults to seeded Gaussian noise.
   */
  async sampleChunk(obsHistory: readonly (readonly number[])[], noise?: Float32Array): Promise<ActionChunk> {
    const t0 = performance.now();
    const obs = this.normaliseObservation(obsHistory);
    const { horizon } = this.package.json.action;
    const n = horizon * this.package.actionDim;
    if (noise !== undefined && noise.length !== n) throw new PolicyInputError("bad_shape", `noise: expected ${n} values (horizon ${horizon} × action_dim ${this.package.actionDim}), found ${noise.length}`);
    const x0 = noise !== undefined ? noise : gaussianArray(this.#normal, n);
    const x = await this.denoise(obs, x0);
    return { actions: this.unnormaliseActions(x), inferenceMs: performance.now() - t0 };
  }

  /**
   * The sampler in normalised space: `obs` [history·obs_dim] normalised, `noise` [horizon·action_dim] → the
   * normalised action chunk, clipped to [-1, 1] (what sampler.onnx outputs). Inputs are not modified.
   */
  async denoise(obs: Float32Array, noise: Float32Array): Promise<Float32Array> {
    const xDims = [1, this.package.json.action.horizon, this.package.actionDim];
    const obsDims = [1, obs.length];
    if (this.mode === "graph") {
      const { outputs } = await this.#client.run("sampler", { obs: { data: new Float32Array(obs), dims: obsDims }, noise: { data: new Float32Array(noise), dims: xDims } });
      return outputs.action.data as Float32Array;
    }
    const x = new Float32Array(noise);
    for (const step of this.#schedule) {
      const { outputs } = await this.#client.run("denoiser", {
        obs: { data: new Float32Array(obs), dims: obsDims },
        x: { data: new Float32Array(x), dims: xDims },
        t: { data: new BigInt64Array([BigInt(step.t)]), dims: [1] },
      });
      ddimStep(x, outputs.eps.data as Float32Array, step, x);
    }
    return clipUnit(x);
  }

  /** (x - mean) / std per dimension, flattened oldest first; throws {@link PolicyInputError} on NaN/Inf or wrong shape. */
  normaliseObservation(obsHistory: readonly (readonly number[])[]): Float32Array {
    const { names, history, mean, std } = this.package.json.observation;
    if (obsHistory.length !== history) throw new PolicyInputError("bad_shape", `observation history: expected ${history} observations (policy.json observation.history), found ${obsHistory.length}`);
    const d = names.length;
    const out = new Float32Array(history * d);
    obsHistory.forEach((row, h) => {
      if (row.length !== d) throw new PolicyInputError("bad_shape", `observation history[${h}]: expected ${d} values (${names.join(", ")}), found ${row.length}`);
      for (let i = 0; i < d; i++) {
        const v = row[i];
        if (!Number.isFinite(v)) throw new PolicyInputError("non_finite_observation", `observation ${names[i]} (history[${h}]) is ${v} — refusing to run the policy; hold the robot and check the sensor`);
        out[h * d + i] = (v - mean[i]) / std[i];
      }
    });
    return out;
  }

  /** a = min + (a_norm + 1) / 2 · (max - min), as horizon × action_dim rows. */
  unnormaliseActions(x: Float32Array): number[][] {
    const { horizon, min, max } = this.package.json.action;
    const m = this.package.actionDim;
    const rows: number[][] = [];
    for (let h = 0; h < horizon; h++) {
      const row = new Array<number>(m);
      for (let j = 0; j < m; j++) row[j] = min[j] + ((x[h * m + j] + 1) / 2) * (max[j] - min[j]);
      rows.push(row);
    }
    return rows;
  }

  /** Stops the inference worker. */
  async close(): Promise<void> {
    await this.#client.close();
  }
}
