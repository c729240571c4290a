/**
 * `rlft dataset stats <folder>`: per task, episode counts, success rate (Wilson 95% interval), lengths, the
 * intervention fraction, and per-dimension statistics of observations and executed actions. Episodes are read one
 * at a time; statistics are accumulated with Welford's algorithm, so memory does not grow with the dataset.
 */
import { readEpisodeTrace, succeeded } from "./EpisodeTrace.ts";
import { wilson } from "./stats.ts";

/** Running mean / variance / min / max per dimension (Welford 1962). */
export class RunningStats {
  n = 0;
  mean: number[] = [];
  #m2: number[] = [];
  min: number[] = [];
  max: number[] = [];

  /** Adds one vector. */
  push(x: readonly number[]): void {
    if (this.n === 0) {
      this.mean = x.map(() => 0);
      this.#m2 = x.map(() => 0);
      this.min = x.map(() => Infinity);
      this.max = x.map(() => -Infinity);
    }
    if (x.length !== this.mean.length) return;
    this.n++;
    x.forEach((v, i) => {
      const d = v - this.mean[i];
      this.mean[i] += d / this.n;
      this.#m2[i] += d * (v - this.mean[i]);
      this.min[i] = Math.min(this.min[i], v);
      this.max[i] = Math.max(this.max[i], v);
    });
  }

  /** Population standard deviation per dimension. */
  get std(): number[] {
    return this.#m2.map((m) => Math.sqrt(m / Math.max(1, this.n)));
  }
}

/** Statistics of one task's episodes. */
export interface TaskStats {
  task: string;
  episodes: number;
  successes: number;
  successRate: number;
  ci95: [number, number];
  outcomes: Record<string, number>;
  meanLength: number;
  ticks: number;
  interventionTicks: number;
  interventionFraction: number;
  /** Episodes with at least one intervention. */
  episodesWithInterventions: number;
  sources: Record<string, number>;
  obsNames: string[];
  actionNames: string[];
  obs: RunningStats;
  action: RunningStats;
  damaged: number;
}

/** Reads every episode in `files` and returns statistics per task. */
export async function datasetStats(files: readonly string[], opts: { onEpisode?: (i: number) => void; warn?: (m: string) => void } = {}): Promise<TaskStats[]> {
  const byTask = new Map<string, TaskStats>();
  let i = 0;
  for (const f of files) {
    const tr = await readEpisodeTrace(f);
    const task = tr.info.task ?? "unknown";
    let s = byTask.get(task);
    if (!s) {
      s = { task, episodes: 0, successes: 0, successRate: 0, ci95: [0, 1], outcomes: {}, meanLength: 0, ticks: 0, interventionTicks: 0, interventionFraction: 0, episodesWithInterventions: 0, sources: {}, obsNames: tr.obsNames, actionNames: tr.jointNames, obs: new RunningStats(), action: new RunningStats(), damaged: 0 };
      byTask.set(task, s);
    }
    s.episodes++;
    if (succeeded(tr)) s.successes++;
    s.outcomes[tr.outcome] = (s.outcomes[tr.outcome] ?? 0) + 1;
    if (tr.damageNote) {
      s.damaged++;
      opts.warn?.(tr.damageNote);
    }
    let iv = 0;
    for (const k of tr.ticks) {
      if (!k.obs.length) continue;
      s.ticks++;
      s.obs.push(k.obs);
      if (k.executed.length) s.action.push(k.executed);
      if (k.intervention) {
        iv++;
        s.sources[k.interventionSource] = (s.sources[k.interventionSource] ?? 0) + 1;
      }
    }
    s.interventionTicks += iv;
    if (iv) s.episodesWithInterventions++;
    opts.onEpisode?.(++i);
  }
  for (const s of byTask.values()) {
    const w = wilson(s.successes, s.episodes);
    s.successRate = w.p;
    s.ci95 = [w.lo, w.hi];
    s.meanLength = s.ticks / Math.max(1, s.episodes);
    s.interventionFraction = s.ticks ? s.interventionTicks / s.ticks : 0;
  }
  return [...byTask.values()].sort((a, b) => a.task.localeCompare(b.task));
}

/** The statistics as text tables. */
export function formatDatasetStats(stats: readonly TaskStats[]): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(4) : "-");
  const out: string[] = [];
  for (const s of stats) {
    out.push(`task ${s.task}: ${s.episodes} episodes, success ${pct(s.successRate)} (${s.successes}/${s.episodes}, Wilson 95% CI [${pct(s.ci95[0])}, ${pct(s.ci95[1])}])`);
    out.push(`  outcomes: ${Object.entries(s.outcomes).map(([k, v]) => `${k} ${v}`).join(", ")}; mean length ${s.meanLength.toFixed(1)} ticks; ${s.ticks} ticks in all${s.damaged ? `; ${s.damaged} damaged files` : ""}`);
    out.push(`  interventions: ${pct(s.interventionFraction)} of ticks (${s.interventionTicks}), in ${s.episodesWithInterventions} episodes${Object.keys(s.sources).length ? ` by ${Object.entries(s.sources).map(([k, v]) => `${k} ${v}`).join(", ")}` : ""}`);
    for (const [label, names, rs] of [["observation", s.obsNames, s.obs], ["action", s.actionNames, s.action]] as const) {
      out.push(`  ${label} (${rs.n} samples)`);
      out.push(`    ${"name".padEnd(18)} ${"mean".padStart(10)} ${"std".padStart(10)} ${"min".padStart(10)} ${"max".padStart(10)}`);
      rs.mean.forEach((m, i) => out.push(`    ${(names[i] ?? `#${i}`).padEnd(18)} ${f(m).padStart(10)} ${f(rs.std[i]).padStart(10)} ${f(rs.min[i]).padStart(10)} ${f(rs.max[i]).padStart(10)}`));
    }
  }
  return out.join("\n");
}
