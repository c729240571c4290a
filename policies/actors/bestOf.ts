/** Best-of-N selection among sampled base chunks: the options and the pure math PolicyActor ranks them with. */

/**
 * Best-of-N sampling of base chunks at every re-plan (docs/algorithms.md §1 "beyond the recipe"): N chunks are sampled from the
 * base policy and one is executed. `critic`: the one whose first executed action (base + residual) the running
 * residual package's critic scores highest (mean − pessimism · std over heads; EXPO / PA-RL rank base samples by
 * Q); needs a residual package with critic.onnx, otherwise the first sample runs (warned once). `consensus`: the
 * medoid — the chunk closest (L2 over the executed steps) to all the others, a critic-free control. `chunk_critic`: the
 * one whose K executed base actions the package's chunk-level critic scores highest (learner algorithms/residual_td3/chunk_critic.py; PA-RL,
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
