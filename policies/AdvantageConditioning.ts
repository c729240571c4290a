/**
 * The `advantage` block of a policy.json: how an advantage-conditioned (RECAP, π*0.6 arXiv 2511.14759) policy takes
 * its indicator, what inference conditions on, and the classifier-free guidance weight β. Any policy kind may carry
 * it (diffusion today; a VLA can use the `text` encoding, appending the phrase to its instruction). docs/recap.md.
 */
import { z } from "zod";
import { PolicyPackageError } from "./PolicyPackageError.ts";

const Finite = z.number().refine(Number.isFinite, "a finite number");

/** The indicator values a policy can be conditioned on; `unconditioned` is the "dropped" indicator of training. */
export const INDICATORS = ["positive", "negative", "unconditioned"] as const;
/** One indicator value. */
export type Indicator = (typeof INDICATORS)[number];

/** Statistics of the RECAP iteration that produced the package: informational, except `value` for inspect-episode. */
const TrainingFields = {
  /** Advantage lookahead in steps; 0 = Monte-Carlo. */
  n_step: z.number().int().min(0).optional(),
  /** Target fraction of the policy's own steps labelled positive. */
  positive_fraction: z.number().min(0).max(1).optional(),
  /** Probability the indicator was dropped in training. */
  dropout: z.number().min(0).max(1).optional(),
  /** Per-task advantage threshold ε (normalised units). */
  thresholds: z.record(z.string(), Finite).optional(),
  positive_fraction_measured: z.number().min(0).max(1).optional(),
  /** Which operator steps were forced positive: all (π*0.6), those of successful episodes, or none. Absent = always. */
  intervention_positive: z.enum(["always", "success", "none"]).optional(),
  /**
   * The value head (value.onnx in `files.value`): current normalised observation in (`obs+images`: and the current
   * uint8 HWC frame of each camera in observation.images, as `image.<camera>`), E[return] and bin probabilities out.
   */
  value: z
    .strictObject({
      input: z.enum(["obs", "obs+images"]),
      history: z.literal(1),
      bins: z.number().int().min(2),
      v_min: Finite,
      v_max: Finite,
      /** T_max per task: returns are divided by it. */
      max_episode_steps: z.record(z.string(), z.number().int().min(1)),
      /** Failure cost in steps per task. */
      c_fail: z.record(z.string(), Finite),
    })
    .optional(),
};

/** zod schema of policy.json `advantage`; unknown keys are rejected. */
export const AdvantageConditioningSchema = z.discriminatedUnion("encoding", [
  z.strictObject({
    /** The indicator is an int64 [B] input of every graph that denoises (sampler.onnx, denoiser.onnx). */
    encoding: z.literal("index"),
    /** Name of that ONNX input. */
    input: z.string().min(1),
    /** Integer fed for each indicator value. */
    values: z.strictObject({ negative: z.number().int(), positive: z.number().int(), unconditioned: z.number().int() }),
    /** What inference conditions on unless the robot config says otherwise (π*0.6: positive). */
    condition: z.enum(INDICATORS),
    /** Classifier-free guidance: eps = eps_u + β (eps_c − eps_u); 1 = one conditioned pass. Baked into sampler.onnx. */
    cfg_beta: Finite.refine((v) => v >= 0, "cfg_beta >= 0"),
    ...TrainingFields,
  }),
  z.strictObject({
    /** The indicator is a phrase added to the instruction (a VLA's tokenizer input), e.g. "Advantage: positive". */
    encoding: z.literal("text"),
    /** Phrase per indicator value; "" for unconditioned means nothing is added. */
    text: z.strictObject({ negative: z.string(), positive: z.string(), unconditioned: z.string() }),
    condition: z.enum(INDICATORS),
    cfg_beta: Finite.refine((v) => v >= 0, "cfg_beta >= 0"),
    ...TrainingFields,
  }),
]);

/** A parsed `advantage` block. */
export type AdvantageConditioning = z.infer<typeof AdvantageConditioningSchema>;

/** What the robot config asks for (launch file `actor.indicator`): `auto` follows the package, `none` wants a plain policy. */
export type IndicatorSetting = "auto" | Indicator | "none";

/**
 * The indicator to feed, or null for a plain policy; throws {@link PolicyPackageError} `incompatible` naming the
 * mismatch when the package and the robot config disagree (an indicator asked of a plain package, or a plain policy
 * expected and a conditioned one given).
 */
export function resolveIndicator(pkg: { version: string; advantage?: AdvantageConditioning }, setting: IndicatorSetting, where: string): Indicator | null {
  const adv = pkg.advantage;
  if (setting === "auto") return adv ? adv.condition : null;
  if (setting === "none") {
    if (adv) throw new PolicyPackageError("incompatible", `Policy ${pkg.version} (${where}) is advantage-conditioned (input "${adv.encoding === "index" ? adv.input : "instruction text"}", condition ${adv.condition}) but the robot config says actor.indicator: none — set actor.indicator to auto or positive, or deploy a plain policy`, { path: where });
    return null;
  }
  if (!adv) throw new PolicyPackageError("incompatible", `The robot config asks for actor.indicator: ${setting}, but policy ${pkg.version} (${where}) has no indicator input (no "advantage" block in policy.json) — deploy a RECAP package, or set actor.indicator to auto or none`, { path: where });
  return setting;
}

/** Classifier-free guidance, in float32 like the learner's `cfg_combine`: out[i] = u + β (c − u). */
export function cfgCombine(epsCond: Float32Array, epsUncond: Float32Array, beta: number, out: Float32Array = new Float32Array(epsCond.length)): Float32Array {
  if (epsUncond.length !== epsCond.length || out.length !== epsCond.length) throw new RangeError(`cfgCombine: eps_cond, eps_uncond and out must have one length, found ${epsCond.length}, ${epsUncond.length}, ${out.length}`);
  const f = Math.fround;
  const b = f(beta);
  for (let i = 0; i < epsCond.length; i++) out[i] = f(epsUncond[i] + f(b * f(epsCond[i] - epsUncond[i])));
  return out;
}
