/**
 * Feature statistics as LeRobot writes them (lerobot/datasets/compute_stats.py, LeRobot 0.4): per episode, for every
 * feature that is not a string, min / max / mean / std (population) / count and the quantiles q01 q10 q50 q90 q99,
 * per dimension for vectors and scalars, per channel in [0, 1] with shape (3, 1, 1) for images, where `count` is the
 * number of frames (not pixels). The dataset's stats (meta/stats.json) aggregate the episodes' as LeRobot's
 * `aggregate_feature_stats` does: min of mins, max of maxes, count-weighted mean, pooled variance, and count-weighted
 * means of the quantiles.
 */

/** Quantile levels and their keys (compute_stats.DEFAULT_QUANTILES). */
export const QUANTILES = [
  [0.01, "q01"],
  [0.1, "q10"],
  [0.5, "q50"],
  [0.9, "q90"],
  [0.99, "q99"],
] as const;

/** Statistics of one feature: every entry one value per dimension (channel for images), `count` one number. */
export interface FeatureStats {
  min: number[];
  max: number[];
  mean: number[];
  std: number[];
  count: number;
  /** q01 ... q99, one value per dimension. */
  quantiles: Record<string, number[]>;
}

const BINS = 5000; // RunningQuantileStats(num_quantile_bins=5000)

/**
 * The quantiles the way LeRobot estimates them (compute_stats.RunningQuantileStats over one batch): a 5000-bin
 * histogram between min − 1e-10 and max + 1e-10, then per level q the point where the cumulative count reaches
 * q · n, interpolated within its bin. Matching its estimator (not NumPy's exact quantile) keeps q01/q99
 * normalisation the same for rlft's and LeRobot's datasets. `values[i]` counts `weights[i]` times.
 */
function lerobotQuantiles(values: ArrayLike<number>, weights: ArrayLike<number> | null, min: number, max: number): number[] {
  const lo = min - 1e-10;
  const width = (max + 1e-10 - lo) / BINS;
  const hist = new Float64Array(BINS);
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const w = weights ? weights[i] : 1;
    if (!w) continue;
    hist[Math.min(BINS - 1, Math.max(0, Math.floor((values[i] - lo) / width)))] += w;
    n += w;
  }
  const cum = new Float64Array(BINS);
  hist.reduce((a, c, i) => (cum[i] = a + c), 0);
  return QUANTILES.map(([q]) => {
    const target = q * n;
    let idx = 0;
    while (idx < BINS && cum[idx] < target) idx++; // np.searchsorted(cumsum, target), side "left"
    if (idx === 0) return lo;
    if (idx >= BINS) return lo + BINS * width;
    const before = cum[idx - 1];
    const inBin = cum[idx] - before;
    return inBin === 0 ? lo + idx * width : lo + idx * width + ((target - before) / inBin) * width;
  });
}

/** Exact statistics of `rows` (frames × dims). */
export function vectorStats(rows: readonly (readonly number[])[]): FeatureStats {
  const n = rows.length;
  const d = rows[0]?.length ?? 0;
  const s: FeatureStats = { min: [], max: [], mean: [], std: [], count: n, quantiles: Object.fromEntries(QUANTILES.map(([, k]) => [k, [] as number[]])) };
  const col = new Float64Array(n);
  for (let j = 0; j < d; j++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += col[i] = rows[i][j];
    const mean = sum / n;
    let ss = 0;
    for (let i = 0; i < n; i++) ss += (col[i] - mean) ** 2;
    const min = col.reduce((a, x) => Math.min(a, x), Infinity);
    const max = col.reduce((a, x) => Math.max(a, x), -Infinity);
    s.min.push(min);
    s.max.push(max);
    s.mean.push(mean);
    s.std.push(Math.sqrt(ss / n));
    // Fewer than two samples: LeRobot sets the quantiles to the mean (compute_stats._compute_basic_stats).
    const qs = n < 2 ? QUANTILES.map(() => mean) : lerobotQuantiles(col, null, min, max);
    QUANTILES.forEach(([, k], i) => s.quantiles[k].push(qs[i]));
  }
  return s;
}

/**
 * Per-channel statistics of RGB frames in [0, 1]: a 256-value histogram per channel (8-bit values, so min, max,
 * mean and std are exact), fed with every `stride`-th pixel of each frame; quantiles as LeRobot estimates them on
 * 0..255 values. `count` counts frames.
 */
export class ImageStats {
  readonly #hist = [new Float64Array(256), new Float64Array(256), new Float64Array(256)];
  #frames = 0;
  constructor(readonly stride = 7) {}

  push(rgb: Uint8Array): void {
    const [r, g, b] = this.#hist;
    for (let p = 0; p < rgb.length; p += 3 * this.stride) {
      r[rgb[p]]++;
      g[rgb[p + 1]]++;
      b[rgb[p + 2]]++;
    }
    this.#frames++;
  }

  get frames(): number {
    return this.#frames;
  }

  result(): FeatureStats {
    const s: FeatureStats = { min: [], max: [], mean: [], std: [], count: this.#frames, quantiles: Object.fromEntries(QUANTILES.map(([, k]) => [k, [] as number[]])) };
    for (const h of this.#hist) {
      let n = 0;
      let sum = 0;
      let lo = 255;
      let hi = 0;
      h.forEach((c, v) => {
        if (!c) return;
        n += c;
        sum += c * v;
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      });
      const mean = sum / n;
      let ss = 0;
      h.forEach((c, v) => (ss += c * (v - mean) ** 2));
      s.min.push(lo / 255);
      s.max.push(hi / 255);
      s.mean.push(mean / 255);
      s.std.push(Math.sqrt(ss / n) / 255);
      const qs = lerobotQuantiles(VALUES_0_255, h, lo, hi);
      QUANTILES.forEach(([, k], i) => s.quantiles[k].push(qs[i] / 255));
    }
    return s;
  }
}

const VALUES_0_255 = Array.from({ length: 256 }, (_, v) => v);

/** Dataset statistics from episodes' (compute_stats.aggregate_feature_stats). */
export function aggregateStats(list: readonly FeatureStats[]): FeatureStats {
  const total = list.reduce((a, s) => a + s.count, 0);
  const d = list[0].mean.length;
  const dims = (f: (i: number) => number) => Array.from({ length: d }, (_, i) => f(i));
  const mean = dims((i) => list.reduce((a, s) => a + s.mean[i] * s.count, 0) / total);
  const variance = dims((i) => list.reduce((a, s) => a + (s.std[i] ** 2 + (s.mean[i] - mean[i]) ** 2) * s.count, 0) / total);
  return {
    min: dims((i) => Math.min(...list.map((s) => s.min[i]))),
    max: dims((i) => Math.max(...list.map((s) => s.max[i]))),
    mean,
    std: variance.map(Math.sqrt),
    count: total,
    quantiles: Object.fromEntries(QUANTILES.map(([, k]) => [k, dims((i) => list.reduce((a, s) => a + s.quantiles[k][i] * s.count, 0) / total)])),
  };
}

/** The JSON form LeRobot stores: arrays per stat, images as (3, 1, 1), count as [n]. */
export function statsJson(s: FeatureStats, image = false): Record<string, unknown> {
  const wrap = (v: number[]) => (image ? v.map((x) => [[x]]) : v);
  const out: Record<string, unknown> = { min: wrap(s.min), max: wrap(s.max), mean: wrap(s.mean), std: wrap(s.std), count: [s.count] };
  for (const [, k] of QUANTILES) out[k] = wrap(s.quantiles[k]);
  return out;
}

/**
 * JSON text of stats with every value but `count` written as a float (`0.0`, not `0`), as Python's json writes
 * LeRobot's: readers that infer one column type over all episodes (Hugging Face `datasets`, in LeRobot's v2.1 →
 * v3.0 converter) fail on a column that is int64 in one episode and double in the next.
 */
export function floatJson(v: unknown, key = ""): string {
  if (Array.isArray(v)) return `[${v.map((x) => floatJson(x, key)).join(", ")}]`;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error(`stat ${key} is ${v}`);
    return key === "count" || !Number.isInteger(v) ? JSON.stringify(v) : v.toFixed(1);
  }
  if (v && typeof v === "object") return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${floatJson(x, k)}`).join(", ")}}`;
  return JSON.stringify(v);
}
