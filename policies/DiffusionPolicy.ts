/**
 * A diffusion policy from a verified package: normalise the observation history, denoise an action chunk
 * (whole sampler graph, or the TS DDIM scheduler around the one-step denoiser), unnormalise the actions.
 * An advantage-conditioned (RECAP) package also gets its indicator (positive by default) on every denoising call,
 * and in TS mode classifier-free guidance with policy.json's β (two passes, batched; β = 1 is one pass).
 */
import { PolicyPackage, type DiffusionPolicyJson } from "./PolicyPackage.ts";
import { InferenceClient, type InferenceClientOptions, type WireTensor } from "./InferenceClient.ts";
import { PolicyPackageError } from "./PolicyPackageError.ts";
import { clipUnit, ddimSchedule, ddimStep, type DdimStep } from "./ddim.ts";
import { cfgCombine, resolveIndicator, type Indicator, type IndicatorSetting } from "./AdvantageConditioning.ts";
import { gaussian, gaussianArray, noiseScaleProblem } from "./gaussian.ts";
import { tile } from "./tile.ts";
import { blankImageFeeds, imageFeeds, requireImageFeeds, tileImage, type CameraFrames } from "./imageFeeds.ts";
import { PolicyInputError } from "./PolicyInputError.ts";

export { PolicyInputError } from "./PolicyInputError.ts";
export type { CameraFrames } from "./imageFeeds.ts";

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
  /**
   * The robot config's advantage indicator (launch `actor.indicator`): auto (default) conditions a RECAP package on
   * its policy.json `advantage.condition` and runs a plain one plainly; a mismatch is refused at load.
   */
  indicator?: IndicatorSetting;
  /**
   * Classifier-free guidance β overriding policy.json's `advantage.cfg_beta` (RECAP packages only). sampler.onnx has
   * the package's β baked in, so another β switches a "graph" policy to the TS sampler (logged).
   */
  cfgBeta?: number;
  /**
   * Sampling temperature: the initial DDIM noise is multiplied by this (launch `actor.noise_scale`). 1 (default) samples
   * the learned distribution; below 1 concentrates on its modes, 0 is one deterministic chunk per observation. The
   * seeded draws are the same at every scale, so runs stay reproducible.
   */
  noiseScale?: number;
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
  /** The indicator fed on every call (null: a plain policy). */
  readonly indicator: Indicator | null;
  #normal: () => number;
  #schedule: DdimStep[];
  #cfgBeta: number;
  /** See {@link DiffusionPolicyOptions.noiseScale}. */
  readonly noiseScale: number;

  private constructor(pkg: PolicyPackage, client: InferenceClient, mode: "graph" | "ts", seed: number, indicator: Indicator | null, cfgBeta: number, noiseScale: number) {
    this.package = pkg;
    this.#client = client;
    this.mode = mode;
    this.indicator = indicator;
    this.#cfgBeta = cfgBeta;
    this.noiseScale = noiseScale;
    this.#normal = gaussian(seed);
    this.#schedule = ddimSchedule(pkg.json.sampler.timesteps, pkg.json.sampler.alphas_cumprod);
  }

  /** Classifier-free guidance weight (the `cfgBeta` option, else policy.json advantage.cfg_beta; 1 for a plain policy). */
  get cfgBeta(): number {
    return this.#cfgBeta;
  }

  /** Loads and verifies the package in `dir`, starts the inference worker, warms the model up. */
  static async create(dir: string, options: DiffusionPolicyOptions = {}): Promise<DiffusionPolicy> {
    const pkg = await PolicyPackage.load(dir);
    const indicator = resolveIndicator(pkg.json, options.indicator ?? "auto", pkg.dir);
    const baked = pkg.json.advantage?.cfg_beta ?? 1;
    const beta = options.cfgBeta ?? baked;
    if (options.cfgBeta !== undefined) {
      if (!Number.isFinite(beta) || beta < 0) throw new PolicyPackageError("incompatible", `cfg_beta ${beta}: classifier-free guidance needs a finite β ≥ 0 (1 = no guidance)`, { path: pkg.dir });
      if (pkg.json.advantage === undefined || indicator === null)
        throw new PolicyPackageError("incompatible", `cfg_beta ${beta} set in the robot config, but ${pkg.dir} is not run with an advantage indicator — guidance needs a RECAP package conditioned on an indicator; remove actor.cfg_beta`, { path: pkg.dir });
    }
    const noiseScale = options.noiseScale ?? 1;
    const badScale = noiseScaleProblem(noiseScale);
    if (badScale) throw new PolicyPackageError("incompatible", `${badScale}; fix actor.noise_scale`, { path: pkg.dir });
    let mode = options.mode ?? "graph";
    if (mode === "graph" && beta !== baked) {
      options.logger?.info?.(`cfg_beta ${beta} differs from the ${baked} baked into ${pkg.dir}/sampler.onnx: running the TS sampler (denoiser.onnx, two passes per step)`);
      mode = "ts";
    }
    const { history } = pkg.json.observation;
    const { horizon } = pkg.json.action;
    const obsDims = [1, history * pkg.obsDim];
    const xDims = [1, horizon, pkg.actionDim];
    const zeros = (dims: number[]) => ({ data: new Float32Array(dims.reduce((a, b) => a * b, 1)), dims });
    const ind = indicatorFeed(pkg.json, indicator, 1);
    const blank = blankImageFeeds(pkg.images);
    const imageInputs = pkg.images.map((img) => img.input);
    const encoderPath = pkg.encoderPath;
    let client: InferenceClient;
    if (mode === "graph") {
      client = await InferenceClient.create(
        { sampler: pkg.samplerPath },
        { ...options, warmup: { sampler: { obs: zeros(obsDims), ...blank, noise: zeros(xDims), ...ind } }, expectInputs: { sampler: ["obs", ...imageInputs, "noise", ...Object.keys(ind)] } },
      );
    } else {
      // TS sampler: with cameras, encoder.onnx runs once per chunk and the denoiser's obs is [state history, features].
      const condDims = [1, obsDims[1] + (encoderPath ? await featureWidth(encoderPath, pkg) : 0)];
      client = await InferenceClient.create(
        { denoiser: pkg.denoiserPath, ...(encoderPath ? { encoder: encoderPath } : {}) },
        {
          ...options,
          warmup: {
            denoiser: { obs: zeros(condDims), x: zeros(xDims), t: { data: new BigInt64Array([BigInt(pkg.json.sampler.timesteps[0])]), dims: [1] }, ...ind },
            ...(encoderPath ? { encoder: blank } : {}),
          },
          expectInputs: { denoiser: ["obs", "x", "t", ...Object.keys(ind)], ...(encoderPath ? { encoder: imageInputs } : {}) },
        },
      );
    }
    return new DiffusionPolicy(pkg, client, mode, options.seed ?? 0, indicator, beta, noiseScale);
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
  async sampleChunk(obsHistory: readonly (readonly number[])[], noise?: Float32Array, images?: CameraFrames): Promise<ActionChunk> {
    const t0 = performance.now();
    const obs = this.normaliseObservation(obsHistory);
    const feeds = this.imageFeeds(images);
    const n = this.#chunkSize;
    if (noise !== undefined && noise.length !== n) throw new PolicyInputError("bad_shape", `noise: expected ${n} values (horizon ${this.package.json.action.horizon} × action_dim ${this.package.actionDim}), found ${noise.length}`);
    const x0 = noise !== undefined ? noise : gaussianArray(this.#normal, n, this.noiseScale);
    const x = await this.denoise(obs, x0, this.indicator, feeds);
    return { actions: this.unnormaliseActions(x), inferenceMs: performance.now() - t0 };
  }

  /**
   * `count` chunks for one observation history in one batched call (best-of-N at a re-plan): the seeded noise is drawn
   * in the same order as by `count` calls of {@link sampleChunk}, so the chunks are those calls' (up to the float
   * rounding of batched kernels), for one round trip to the worker instead of `count`.
   */
  async sampleChunks(obsHistory: readonly (readonly number[])[], count: number, images?: CameraFrames): Promise<{ chunks: number[][][]; inferenceMs: number }> {
    if (!Number.isInteger(count) || count < 1) throw new PolicyInputError("bad_shape", `sampleChunks: count must be an integer ≥ 1 (chunks per re-plan, actor.best_of), got ${count}`);
    const t0 = performance.now();
    const obs = this.normaliseObservation(obsHistory);
    const feeds = this.imageFeeds(images);
    const n = this.#chunkSize;
    const x = await this.denoise(obs, gaussianArray(this.#normal, count * n, this.noiseScale), this.indicator, feeds);
    const chunks = Array.from({ length: count }, (_, i) => this.unnormaliseActions(x.subarray(i * n, (i + 1) * n)));
    return { chunks, inferenceMs: performance.now() - t0 };
  }

  /** Values in one chunk's noise: horizon × action_dim. */
  get #chunkSize(): number {
    return this.package.json.action.horizon * this.package.actionDim;
  }

  /**
   * The sampler in normalised space: `obs` [history·obs_dim] normalised, `noise` B chunks' noise back to back
   * (B × horizon × action_dim, B ≥ 1) → B normalised action chunks for that one observation, clipped to [-1, 1]
   * (what sampler.onnx outputs), in one call per graph or per DDIM step. Inputs are not modified.
   */
  async denoise(obs: Float32Array, noise: Float32Array, indicator: Indicator | null = this.indicator, images: Record<string, WireTensor> = {}): Promise<Float32Array> {
    const n = this.#chunkSize;
    const b = noise.length / n;
    if (!Number.isInteger(b) || b < 1) throw new PolicyInputError("bad_shape", `noise: expected a multiple of ${n} values (chunks × horizon ${this.package.json.action.horizon} × action_dim ${this.package.actionDim}), found ${noise.length}`);
    const chunkDims = [this.package.json.action.horizon, this.package.actionDim];
    if ((indicator === null) !== (this.indicator === null)) throw new PolicyInputError("bad_shape", `indicator: this policy ${this.indicator === null ? "takes no indicator" : "needs an indicator"}, got ${indicator}`);
    const cams = this.package.images;
    requireImageFeeds(cams, images, "this policy");
    if (this.mode === "graph") {
      const imgFeeds = Object.fromEntries(cams.map((c) => [c.input, tileImage(images[c.input], b)]));
      const { outputs } = await this.#client.run("sampler", { obs: { data: tile(obs, b), dims: [b, obs.length] }, ...imgFeeds, noise: { data: new Float32Array(noise), dims: [b, ...chunkDims] }, ...indicatorFeed(this.package.json, indicator, b) });
      return outputs.action.data as Float32Array;
    }
    if (cams.length > 0) {
      // One encoder call per chunk; the denoiser conditions on [state history, features] at every step.
      const { outputs } = await this.#client.run("encoder", Object.fromEntries(cams.map((c) => [c.input, tileImage(images[c.input], 1)])));
      const features = outputs.features.data as Float32Array;
      const cond = new Float32Array(obs.length + features.length);
      cond.set(obs);
      cond.set(features, obs.length);
      obs = cond;
    }
    const beta = this.cfgBeta;
    // Guidance: the b conditioned and the b unconditioned passes as one batch of 2b, like the learner's sampler graph.
    const guided = indicator !== null && beta !== 1;
    const rows = guided ? 2 * b : b;
    const x = new Float32Array(noise);
    const obsB = tile(obs, rows);
    for (const step of this.#schedule) {
      const feeds: Record<string, WireTensor> = {
        obs: { data: new Float32Array(obsB), dims: [rows, obs.length] },
        x: { data: tile(x, rows / b), dims: [rows, ...chunkDims] },
        t: { data: new BigInt64Array(rows).fill(BigInt(step.t)), dims: [rows] },
      };
      if (indicator !== null) Object.assign(feeds, indicatorFeed(this.package.json, guided ? [...Array<Indicator>(b).fill(indicator), ...Array<Indicator>(b).fill("unconditioned")] : indicator, rows));
      const { outputs } = await this.#client.run("denoiser", feeds);
      const eps = outputs.eps.data as Float32Array;
      ddimStep(x, guided ? cfgCombine(eps.subarray(0, b * n), eps.subarray(b * n, 2 * b * n), beta) : eps, step, x);
    }
    return clipUnit(x);
  }

  /**
   * The camera frames as ONNX feeds (uint8 [1, H, W, 3] per `image.<camera>` input); throws {@link PolicyInputError}
   * (`bad_image`) naming the camera when a frame is missing, of another size, or not packed rgb8. {} for a state-only policy.
   */
  imageFeeds(images: CameraFrames | undefined): Record<string, WireTensor> {
    return imageFeeds(this.package.images, images, `policy ${this.package.json.version}`);
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

/** Width of the camera features encoder.onnx outputs: 2 × keypoints… is not in policy.json, so ask the graph once. */
async function featureWidth(encoderPath: string, pkg: PolicyPackage): Promise<number> {
  const probe = await InferenceClient.create({ encoder: encoderPath }, {});
  try {
    const { outputs } = await probe.run("encoder", blankImageFeeds(pkg.images));
    return outputs.features.dims[1];
  } finally {
    await probe.close();
  }
}

/** The indicator input feed (`{ [advantage.input]: int64 [b] }`), or {} for a plain policy. */
function indicatorFeed(json: DiffusionPolicyJson, indicator: Indicator | readonly Indicator[] | null, b: number): Record<string, WireTensor> {
  const adv = json.advantage;
  if (indicator === null || adv === undefined || adv.encoding !== "index") return {};
  const list = typeof indicator === "string" ? Array.from({ length: b }, () => indicator) : indicator;
  return { [adv.input]: { data: BigInt64Array.from(list.map((i) => BigInt(adv.values[i]))), dims: [b] } };
}
