/** Seeded Gaussian noise for the sampler: mulberry32 (a 32-bit PRNG, public domain) + Box–Muller. */

/** A uniform [0, 1) generator seeded with a 32-bit integer. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard-normal generator (Box–Muller; both values of each pair are used). */
export function gaussian(seed: number): () => number {
  const uniform = mulberry32(seed);
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const s = spare;
      spare = undefined;
      return s;
    }
    const u1 = 1 - uniform(); // (0, 1]: log never sees 0
    const u2 = uniform();
    const r = Math.sqrt(-2 * Math.log(u1));
    spare = r * Math.sin(2 * Math.PI * u2);
    return r * Math.cos(2 * Math.PI * u2);
  };
}

/** Fills a new Float32Array of length `n` from `normal`, each draw times `scale` (a sampling temperature). */
export function gaussianArray(normal: () => number, n: number, scale = 1): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = normal() * scale;
  return out;
}

/**
 * What is wrong with a sampling temperature (launch `actor.noise_scale`: initial noise × T), or null when it is
 * usable: finite and in [0, 2]. The one check of that range on the TypeScript side: the launch schema, the diffusion
 * policy, the VLA, the CLI and the benches call it (the learner checks its `base_noise_scale` key once, in Python).
 */
export function noiseScaleProblem(t: number): string | null {
  return Number.isFinite(t) && t >= 0 && t <= 2 ? null : `noise_scale ${t}: the sampling temperature must be in [0, 2] (1 = the learned distribution)`;
}
