/**
 * Deterministic DDIM (eta = 0) as plain functions — the same update the learner bakes into sampler.onnx.
 * Song, Meng & Ermon, "Denoising Diffusion Implicit Models" (2021, arXiv 2010.02502), eq. 12 with sigma = 0,
 * plus the x0 clipping Diffusion Policy uses (Chi et al. 2023, arXiv 2303.04137).
 * alphas_cumprod come from policy.json (float32 values written as JSON numbers).
 */

/** One DDIM step: the timestep fed to the denoiser and the cumulative alphas it moves between. */
export interface DdimStep {
  /** Timestep index passed to the denoiser. */
  t: number;
  /** alphas_cumprod[t]. */
  abT: number;
  /** alphas_cumprod of the next (smaller) timestep; 1 after the last step (fully denoised). */
  abPrev: number;
}

/** The step list for `timesteps` (descending) over `alphasCumprod`. */
export function ddimSchedule(timesteps: readonly number[], alphasCumprod: readonly number[]): DdimStep[] {
  return timesteps.map((t, i) => {
    const abT = alphasCumprod[t];
    if (abT === undefined) throw new RangeError(`ddimSchedule: timestep ${t} is outside alphas_cumprod (length ${alphasCumprod.length})`);
    const next = timesteps[i + 1];
    const abPrev = next === undefined ? 1 : alphasCumprod[next];
    if (abPrev === undefined) throw new RangeError(`ddimSchedule: timestep ${next} is outside alphas_cumprod (length ${alphasCumprod.length})`);
    return { t, abT, abPrev };
  });
}

/**
 * x_{t-1} from x_t and the predicted noise, writing into `out` (may alias `x`) — exactly the learner's
 * `DDIMSampler.forward` (learner/rlft_learner/algorithms/bc/diffusion.py), which sampler.onnx is traced from:
 *   x0  = clip((x - sqrt(1-abT)·eps) / sqrt(abT), -1, 1)
 *   out = sqrt(abPrev)·x0 + sqrt(1-abPrev)·eps
 * The learner keeps the network's eps after clipping x0 (diffusers' DDIMScheduler re-derives eps from the clipped
 * x0 instead); graph and TS must agree, so this follows the learner. The coefficients are computed in float64 and
 * rounded to float32 (the traced graph bakes them as float32 constants); the element-wise math is float32.
 */
export function ddimStep(x: Float32Array, eps: Float32Array, step: Pick<DdimStep, "abT" | "abPrev">, out: Float32Array = new Float32Array(x.length)): Float32Array {
  if (eps.length !== x.length || out.length !== x.length) throw new RangeError(`ddimStep: x, eps and out must have one length, found ${x.length}, ${eps.length}, ${out.length}`);
  const f = Math.fround;
  const sqrtAb = f(Math.sqrt(step.abT));
  const sqrtOneMinusAb = f(Math.sqrt(1 - step.abT));
  const sqrtAbPrev = f(Math.sqrt(step.abPrev));
  const sqrtOneMinusAbPrev = f(Math.sqrt(1 - step.abPrev));
  for (let i = 0; i < x.length; i++) {
    const e = eps[i];
    const x0 = clip1(f(f(x[i] - f(sqrtOneMinusAb * e)) / sqrtAb));
    out[i] = f(f(sqrtAbPrev * x0) + f(sqrtOneMinusAbPrev * e));
  }
  return out;
}

/** Clips every element to [-1, 1] in place (the sampler's final clip). */
export function clipUnit(x: Float32Array): Float32Array {
  for (let i = 0; i < x.length; i++) x[i] = clip1(x[i]);
  return x;
}

function clip1(v: number): number {
  return v < -1 ? -1 : v > 1 ? 1 : v;
}
