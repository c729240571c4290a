/**
 * RECAP returns and advantages as plain functions — the same definitions as the learner's algorithms/recap/value.py
 * and train.py (π*0.6, arXiv 2511.14759; docs/algorithms.md §3), for `rlft inspect-episode` and the tests that hold both
 * sides to one hand-computed answer.
 */

/** Raw rewards of an episode of `length` steps: −1 per step; the last is 0 on success, −cFail on failure. */
export function episodeRewards(length: number, success: boolean, cFail: number): number[] {
  const r = new Array<number>(length).fill(-1);
  if (length > 0) r[length - 1] = success ? 0 : -cFail;
  return r;
}

/** Monte-Carlo returns G_t = Σ_{k≥t} r_k divided by `scale` (T_max) and clipped to [−1, 0]. */
export function normalisedReturns(rewards: readonly number[], scale: number): number[] {
  const g = new Array<number>(rewards.length);
  let acc = 0;
  for (let t = rewards.length - 1; t >= 0; t--) {
    acc += rewards[t];
    g[t] = Math.min(0, Math.max(-1, acc / scale));
  }
  return g;
}

/**
 * Advantages from normalised rewards and values V(o_t): A_t = Σ_{k=t}^{min(t+N,T)−1} r_k + V(o_{t+N}) [if t+N < T]
 * − V(o_t). nStep 0 is Monte-Carlo, A_t = G_t − V(o_t), with `returns` (the clipped normalised G) when given.
 */
export function nStepAdvantages(rewards: readonly number[], values: readonly number[], nStep: number, returns?: readonly number[]): number[] {
  const T = rewards.length;
  if (values.length !== T) throw new RangeError(`nStepAdvantages: ${T} rewards but ${values.length} values`);
  if (nStep <= 0) {
    let acc = 0;
    const g = returns ?? rewards.map((_, i) => rewards[T - 1 - i]).map((r) => (acc += r)).reverse();
    return values.map((v, t) => g[t] - v);
  }
  const csum = [0];
  for (const r of rewards) csum.push(csum[csum.length - 1] + r);
  return values.map((v, t) => {
    const end = Math.min(t + nStep, T);
    const boot = t + nStep < T ? values[t + nStep] : 0;
    return csum[end] - csum[t] + boot - v;
  });
}
