/**
 * V(t) and A(t) along a recorded episode from a RECAP package's value head (value.onnx, run in onnxruntime-node),
 * with the package's own return normalisation, lookahead N and threshold ε — what `rlft inspect-episode` shows.
 */
import { join } from "node:path";
import { PolicyPackage } from "../policies/PolicyPackage.ts";
import { InferenceClient } from "../policies/InferenceClient.ts";
import { episodeRewards, nStepAdvantages, normalisedReturns } from "../policies/advantage.ts";
import type { EpisodeArrays } from "./dataset.ts";

/** Values, returns and advantages of one episode (normalised units: returns in [−1, 0]). */
export interface EpisodeValues {
  task: string;
  outcome: string;
  success: boolean;
  steps: number;
  policy: string;
  maxEpisodeSteps: number;
  cFail: number;
  nStep: number;
  /** ε of the task, or null when the package has none for it. */
  threshold: number | null;
  value: number[];
  /** Actual normalised Monte-Carlo return G_t. */
  ret: number[];
  advantage: number[];
  /** 1[A_t > ε] or 1 on operator steps. */
  indicator: number[];
  intervention: number[];
}

/** Runs the value head of the package in `pkgDir` over `ep`; errors say what the package lacks and the fix. */
export async function episodeValues(ep: EpisodeArrays, pkgDir: string, opts: { nStep?: number } = {}): Promise<EpisodeValues> {
  const pkg = await PolicyPackage.load(pkgDir);
  const adv = pkg.json.advantage;
  const spec = adv?.value;
  if (!adv || !spec || !pkg.json.files.value) {
    throw new Error(`${pkg.dir} has no value head (policy.json files.value / advantage.value) — pass --value a package written by \`rlft recap\` (OUT/iter_N/learner/package)`);
  }
  const { names, mean, std } = pkg.json.observation;
  if (ep.obsNames.length !== names.length || ep.obsNames.some((n, i) => n !== names[i])) {
    throw new Error(`${ep.file} records observation [${ep.obsNames.join(", ")}] but the value head of ${pkg.json.version} expects [${names.join(", ")}] — use a package trained on this task`);
  }
  if (ep.obs.length === 0) throw new Error(`${ep.file} has no complete control ticks (observation + command)`);
  const T = ep.obs.length;
  const d = names.length;
  const x = new Float32Array(T * d);
  ep.obs.forEach((row, t) => row.forEach((v, i) => (x[t * d + i] = (v - mean[i]) / std[i])));
  const feeds: Record<string, { data: Float32Array | Uint8Array; dims: number[] }> = { obs: { data: x, dims: [T, d] } };
  if (spec.input === "obs+images") {
    // A value head over camera frames: the step's frame of each camera the package sees (read with the episode).
    for (const cam of pkg.json.observation.images ?? []) {
      const f = ep.images?.[cam.camera];
      if (!f) throw new Error(`${ep.file}: the value head of ${pkg.json.version} reads camera ${cam.camera}, but its frames were not read — read the episode with cameras [${valueCameras(pkg.json).join(", ")}] (rlft inspect-episode does)`);
      if (f.width !== cam.width || f.height !== cam.height) throw new Error(`${ep.file}: camera ${cam.camera} recorded ${f.width}x${f.height} frames, the value head of ${pkg.json.version} reads ${cam.width}x${cam.height} — use a package trained with this camera`);
      feeds[cam.input] = { data: f.data, dims: [T, f.height, f.width, 3] };
    }
  }
  const client = await InferenceClient.create({ value: join(pkg.dir, pkg.json.files.value) }, { logger: { warn: () => undefined, info: () => undefined } });
  let value: number[];
  try {
    value = Array.from((await client.run("value", feeds)).outputs.value.data as Float32Array);
  } finally {
    await client.close();
  }
  const first = <V>(m: Record<string, V>): V | undefined => m[ep.task] ?? Object.values(m)[0];
  const tMax = first(spec.max_episode_steps) ?? T;
  const cFail = first(spec.c_fail) ?? tMax;
  const nStep = opts.nStep ?? adv.n_step ?? 10;
  const raw = episodeRewards(T, ep.success, cFail);
  const ret = normalisedReturns(raw, tMax);
  const advantage = nStepAdvantages(raw.map((r) => r / tMax), value, nStep, ret);
  const eps = adv.thresholds?.[ep.task];
  const threshold = eps === undefined ? null : eps;
  // Operator steps forced positive as the learner labelled them (packages from before the option: all of them).
  const mode = adv.intervention_positive ?? "always";
  const forced = mode === "always" || (mode === "success" && ep.success);
  const indicator = advantage.map((a, t) => (forced && ep.intervention[t] ? 1 : threshold !== null && a > threshold ? 1 : 0));
  return { task: ep.task, outcome: ep.outcome, success: ep.success, steps: T, policy: pkg.json.version, maxEpisodeSteps: tMax, cFail, nStep, threshold, value, ret, advantage, indicator, intervention: ep.intervention };
}

/** The cameras a package's value head reads ([] for a value over the joints alone). */
export function valueCameras(json: { advantage?: { value?: { input: string } }; observation: { images?: { camera: string }[] } }): string[] {
  return json.advantage?.value?.input === "obs+images" ? (json.observation.images ?? []).map((i) => i.camera) : [];
}

const BARS = "▁▂▃▄▅▆▇█";

/** A one-line unicode plot of `xs` on [lo, hi], resampled to at most `width` characters. */
export function sparkline(xs: readonly number[], lo: number, hi: number, width = 72): string {
  if (xs.length === 0) return "";
  const n = Math.min(width, xs.length);
  let s = "";
  for (let i = 0; i < n; i++) {
    const a = Math.floor((i * xs.length) / n);
    const b = Math.max(a + 1, Math.floor(((i + 1) * xs.length) / n));
    const m = xs.slice(a, b).reduce((p, q) => p + q, 0) / (b - a);
    const f = hi > lo ? (Math.min(hi, Math.max(lo, m)) - lo) / (hi - lo) : 0.5;
    s += BARS[Math.min(BARS.length - 1, Math.floor(f * BARS.length))];
  }
  return s;
}
