/**
 * A VLA policy from a verified package (pi0-style): per chunk, tokenise the instruction, preprocess each camera
 * frame, normalise the state, run the prefix graph once; then integrate the flow with Euler steps, one action-expert
 * graph call per step, feeding it every prefix output by name; unnormalise the chunk. Both graphs run in one
 * inference worker thread (policies/InferenceClient.ts), so the control loop's event loop never blocks on them.
 */
import { InferenceClient, type Feeds, type InferenceClientOptions, type WireTensor } from "../InferenceClient.ts";
import { gaussian, gaussianArray, noiseScaleProblem } from "../gaussian.ts";
import { PolicyInputError } from "../DiffusionPolicy.ts";
import { VlaPackage } from "./VlaPackage.ts";
import { blankFrame, preprocessFrame, type RgbFrame } from "./preprocess.ts";
import type { Encoding } from "./Tokenizer.ts";

/** Options of {@link VlaPolicy.create}. */
export interface VlaPolicyOptions {
  providers?: readonly string[];
  threads?: number;
  /** Seed of the initial noise when sampleChunk gets none. Default 0. */
  seed?: number;
  /** Sampling temperature: drawn initial noise × this, in [0, 2] (launch `actor.noise_scale`). Default 1. */
  noiseScale?: number;
  logger?: InferenceClientOptions["logger"];
  /**
   * Keep the prefix outputs (a KV cache) in the inference worker and feed them to every Euler step from there (default
   * true). false sends them back and forth each step, as before (kept for comparison: see VlaChunk.stepFeedBytes).
   */
  keepPrefix?: boolean;
}

/** One VLA chunk with its timing split the way the bench reports it. */
export interface VlaChunk {
  /** horizon × action_dim, robot units. */
  actions: number[][];
  inferenceMs: number;
  prefixMs: number;
  /** Wall time of each action-expert step (worker round trip included). */
  stepMs: number[];
  encoding: Encoding;
  /** Bytes of the prefix outputs (the KV cache) — kept in the worker, or copied to the main thread and back. */
  prefixBytes: number;
  /** Bytes posted to the worker per action-expert step (x, t, plus the prefix outputs unless they are kept there). */
  stepFeedBytes: number;
}

/** Inputs of one chunk. */
export interface VlaInput {
  /** The state values, in policy.json state.names order, robot units. */
  state: readonly number[];
  instruction: string;
  /** camera name → frame; an optional camera (policy.json cameras[].optional) may be absent: it is fed blank, masked. */
  images: Record<string, RgbFrame>;
  /** horizon × action_dim standard normal noise (normalised units); drawn from the seed when absent. */
  noise?: Float32Array;
}

/** A loaded VLA. */
export class VlaPolicy {
  readonly package: VlaPackage;
  #client: InferenceClient;
  #normal: () => number;
  /** See {@link VlaPolicyOptions.noiseScale}. */
  readonly noiseScale: number;
  #encodings = new Map<string, Encoding>();
  #keepPrefix: boolean;

  private constructor(pkg: VlaPackage, client: InferenceClient, seed: number, noiseScale: number, keepPrefix: boolean) {
    this.package = pkg;
    this.#client = client;
    this.noiseScale = noiseScale;
    this.#normal = gaussian(seed);
    this.#keepPrefix = keepPrefix;
  }

  /** Loads and verifies the package, starts the worker with both graphs, warms them up with a full chunk. */
  static async create(dir: string, options: VlaPolicyOptions = {}): Promise<VlaPolicy> {
    const pkg = await VlaPackage.load(dir);
    const noiseScale = options.noiseScale ?? 1;
    const badScale = noiseScaleProblem(noiseScale);
    if (badScale) throw new PolicyInputError("bad_shape", `${badScale}; fix actor.noise_scale`);
    const client = await InferenceClient.create({ prefix: pkg.prefixPath, expert: pkg.expertPath }, { providers: options.providers, threads: options.threads, logger: options.logger });
    const policy = new VlaPolicy(pkg, client, options.seed ?? 0, noiseScale, options.keepPrefix ?? true);
    try {
      const images: Record<string, RgbFrame> = {};
      for (const c of pkg.json.cameras) {
        const [top, left, h, w] = c.crop;
        images[c.name] = { width: left + w, height: top + h, data: new Uint8Array((left + w) * (top + h) * 3).fill(128) };
      }
      await policy.sampleChunk({ state: pkg.state.offset, instruction: "", images });
    } catch (e) {
      await client.close();
      throw new PolicyInputError("bad_shape", `warm-up of ${pkg.dir} failed: ${(e as Error).message} — the ONNX inputs do not match policy.json`);
    }
    return policy;
  }

  /** Tokenises with the package's tokenizer (cached per instruction: instructions change once per episode). */
  encode(instruction: string): Encoding {
    let e = this.#encodings.get(instruction);
    if (!e) {
      e = this.package.tokenizer.encode(instruction);
      if (this.#encodings.size > 256) this.#encodings.clear();
      this.#encodings.set(instruction, e);
    }
    return e;
  }

  /**
   * The text the tokenizer gets: language.template with {instruction} and {state} (each normalised state value
   * discretised into state_bins bins over [-1, 1] as pi0.5 does: numpy.digitize(x, linspace(-1, 1, bins + 1)[:-1]) − 1).
   */
  prompt(instruction: string, normalisedState: ArrayLike<number>): string {
    const L = this.package.json.language;
    const template = L.template ?? "{instruction}";
    if (!template.includes("{state}")) return template.replaceAll("{instruction}", instruction);
    const bins = L.state_bins!;
    const step = 2 / bins;
    const values = Array.from({ length: this.package.json.state.names.length }, (_, i) => {
      let n = 0;
      for (let k = 0; k < bins; k++) if (-1 + k * step <= normalisedState[i]) n++;
      return n - 1;
    });
    return template.replace(/\{(instruction|state)\}/g, (_, f: string) => (f === "instruction" ? instruction : values.join(" ")));
  }

  /** The prefix graph's feeds for one input (batch 1). */
  prefixFeeds(input: VlaInput): { feeds: Feeds; encoding: Encoding } {
    const j = this.package.json;
    const st = this.package.state;
    if (input.state.length !== j.state.names.length) throw new PolicyInputError("bad_shape", `state: expected ${j.state.names.length} values (${j.state.names.join(", ")}), found ${input.state.length}`);
    // Padded with zeros to the graph's width (state.pad_to) after normalising, as LeRobot and openpi do.
    const state = new Float32Array(this.package.stateWidth);
    input.state.forEach((v, i) => {
      if (!Number.isFinite(v)) throw new PolicyInputError("non_finite_observation", `state ${j.state.names[i]} is ${v} — refusing to run the policy; hold the robot and check the sensor`);
      state[i] = (v - st.offset[i]) / st.scale[i];
    });
    const enc = this.encode(this.prompt(input.instruction, state));
    const L = j.language.max_length;
    const feeds: Feeds = {
      [j.state.input]: { data: state, dims: [1, state.length] },
      [j.language.input_ids]: { data: BigInt64Array.from(enc.ids, BigInt), dims: [1, L] },
    };
    if (j.language.attention_mask) feeds[j.language.attention_mask] = { data: BigInt64Array.from(enc.attentionMask, BigInt), dims: [1, L] };
    for (const t of this.package.transforms) {
      const frame = input.images[t.name];
      if (!frame && !t.optional) throw new PolicyInputError("bad_shape", `no frame from camera ${t.name}`);
      const dims = t.layout === "NCHW" ? [1, 3, t.height, t.width] : [1, t.height, t.width, 3];
      feeds[t.input] = { data: frame ? preprocessFrame(frame, t) : blankFrame(t), dims };
      // The worker converts 0/1 to the graph's bool.
      if (t.maskInput) feeds[t.maskInput] = { data: Uint8Array.of(frame ? 1 : 0), dims: [1], type: "bool" };
    }
    return { feeds, encoding: enc };
  }

  /** Samples one action chunk: prefix once, `flow.steps` Euler steps of the action expert. */
  async sampleChunk(input: VlaInput): Promise<VlaChunk> {
    const t0 = performance.now();
    const j = this.package.json;
    const H = j.action.horizon;
    // The graph's action width (action.pad_to): the robot's dims first, the padding dropped when unnormalising.
    const A = this.package.actionWidth;
    const { feeds, encoding } = this.prefixFeeds(input);
    const keep = this.#keepPrefix;
    const prefix = await this.#client.run("prefix", feeds, keep ? { keep: "prefix" } : {});
    const prefixBytes = keep ? Object.values(prefix.kept ?? {}).reduce((n, k) => n + k.bytes, 0) : Object.values(prefix.outputs).reduce((n, t) => n + t.data.byteLength, 0);
    const prefixMs = performance.now() - t0;
    let x = input.noise ? new Float32Array(input.noise) : gaussianArray(this.#normal, H * A, this.noiseScale);
    if (x.length !== H * A) throw new PolicyInputError("bad_shape", `noise: expected ${H}×${A} values, found ${x.length}`);
    const f = j.flow;
    const dt = (f.t_end - f.t_start) / f.steps;
    const stepMs: number[] = [];
    let stepFeedBytes = 0;
    for (let i = 0; i < f.steps; i++) {
      const s0 = performance.now();
      const expertFeeds: Feeds = { [f.x_input]: { data: new Float32Array(x), dims: [1, H, A] }, [f.time_input]: { data: new Float32Array([f.t_start + i * dt]), dims: [1] } };
      // Kept: the worker feeds its own prefix tensors. Otherwise copies: the worker takes the buffers it is sent,
      // and the prefix is reused by every step.
      if (!keep) for (const [name, t] of Object.entries(prefix.outputs)) expertFeeds[name] = copy(t);
      stepFeedBytes = Object.values(expertFeeds).reduce((n, t) => n + t.data.byteLength, 0);
      const { outputs } = await this.#client.run("expert", expertFeeds, keep ? { reuse: "prefix" } : {});
      const v = outputs[f.velocity_output]?.data as Float32Array | undefined;
      if (!v || v.length !== H * A) throw new PolicyInputError("bad_shape", `action expert output ${f.velocity_output}: expected ${H}×${A} values, found ${v?.length ?? "none"}`);
      const next = new Float32Array(H * A);
      for (let k = 0; k < next.length; k++) next[k] = x[k] + dt * v[k];
      x = next;
      stepMs.push(performance.now() - s0);
    }
    return { actions: this.unnormaliseActions(x, input.state), inferenceMs: performance.now() - t0, prefixMs, stepMs, encoding, prefixBytes, stepFeedBytes };
  }

  /**
   * Normalised chunk → robot units (clipped to [-1, 1] first when flow.clip); a delta action (action.relative_to_state)
   * gets its state value added, from `state` in state.names order (the chunk's first tick).
   */
  unnormaliseActions(x: Float32Array, state: readonly number[] = []): number[][] {
    const { horizon, names, relative_to_state: rel } = this.package.json.action;
    const { offset, scale } = this.package.actions;
    const clip = this.package.json.flow.clip;
    const W = this.package.actionWidth;
    const stateNames = this.package.json.state.names;
    const base = names.map((_, a) => {
      const ref = rel?.[a];
      if (ref === undefined || ref === null) return 0;
      const v = state[stateNames.indexOf(ref)];
      if (!Number.isFinite(v)) throw new PolicyInputError("bad_shape", `action ${names[a]} is relative to state ${ref}, but no finite value for it was given`);
      return v;
    });
    const rows: number[][] = [];
    for (let h = 0; h < horizon; h++) {
      rows.push(names.map((_, a) => {
        const v = x[h * W + a];
        // A constant dimension (min == max in norm_stats) is replayed exactly.
        return (scale[a] > 1e-8 ? (clip ? Math.max(-1, Math.min(1, v)) : v) * scale[a] : 0) + offset[a] + base[a];
      }));
    }
    return rows;
  }

  /** Stops the inference worker. */
  async close(): Promise<void> {
    await this.#client.close();
  }
}

function copy(t: WireTensor): WireTensor {
  const data = t.data instanceof BigInt64Array ? new BigInt64Array(t.data) : t.data instanceof Uint8Array ? new Uint8Array(t.data) : t.data instanceof Uint16Array ? new Uint16Array(t.data) : new Float32Array(t.data);
  return { data, dims: [...t.dims], ...(t.type ? { type: t.type } : {}) };
}
