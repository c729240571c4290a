/**
 * Action normalisation shared by the robot side and the data tools: a policy package's action min/max map raw joint
 * targets to [-1, 1] (the learner's convention, learner/rlft_learner/data.py), and back.
 */

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
