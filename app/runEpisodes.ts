/** Shared by collect, eval and launch: build the stack, run episodes with a progress bar, summarise. */
import { Stack, type StackOptions } from "../launch/Stack.ts";
import type { LaunchConfig } from "../launch/LaunchConfig.ts";
import type { EpisodeResult } from "../nodes/EpisodeManagerNode.ts";
import { progress } from "./progress.ts";
import { wilson } from "../data/stats.ts";

/** Summary of a batch of episodes. */
export interface EpisodeSummary {
  episodes: number;
  successes: number;
  rate: number;
  ci95: [number, number];
  outcomes: Record<string, number>;
  meanSteps: number;
  meanSuccessSteps: number;
  simSeconds: number;
  wallSeconds: number;
  safetyEvents: Record<string, number>;
  actorErrors: number;
}

/**
 * Runs `count` episodes of `config` starting at `seed`. A recording directory that already holds episodes is resumed:
 * numbering continues after them (nothing is overwritten, the index keeps them); with `continueSeeds` the seeds do
 * too (episode n of the directory uses seed + n), so a resumed `rlft collect` does not record the same seeds twice.
 */
export async function runEpisodes(config: LaunchConfig, opts: StackOptions & { count: number; seed: number; label: string; continueSeeds?: boolean }): Promise<{ results: EpisodeResult[]; summary: EpisodeSummary }> {
  const stack = await Stack.create(config, { quiet: true, ...opts });
  const rec = stack.recorder;
  const seed = opts.seed + (opts.continueSeeds ? (rec?.nextEpisode ?? 0) : 0);
  if (rec && rec.resumed > 0) {
    console.error(`resuming ${opts.recordTo ?? config.recorder.out}: ${rec.resumed} episode(s) already there; numbering continues at ${rec.nextEpisode}${opts.continueSeeds ? `, seeds at ${seed}` : ""}`);
  }
  const t0 = performance.now();
  let ok = 0;
  const bar = progress(opts.label, opts.count, { unit: "episodes" });
  let results: EpisodeResult[] = [];
  try {
    results = await stack.runEpisodes({
      count: opts.count,
      seed,
      onEpisode: (r) => {
        if (r.outcome === "success") ok++;
        bar.update(results.length + 1, { success: `${ok}/${results.length + 1}` });
        results.push(r);
      },
    });
  } finally {
    bar.stop();
    await stack.shutdown();
  }
  const wall = (performance.now() - t0) / 1000;
  const outcomes: Record<string, number> = {};
  for (const r of results) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
  const succ = results.filter((r) => r.outcome === "success");
  const w = wilson(succ.length, results.length);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  return {
    results,
    summary: {
      episodes: results.length,
      successes: succ.length,
      rate: w.p,
      ci95: [w.lo, w.hi],
      outcomes,
      meanSteps: mean(results.map((r) => r.steps)),
      meanSuccessSteps: mean(succ.map((r) => r.steps)),
      simSeconds: results.reduce((a, r) => a + r.durationSec, 0),
      wallSeconds: wall,
      safetyEvents: { ...stack.safety.counts },
      actorErrors: stack.actor.errors,
    },
  };
}

/** "62.0% (31/50), Wilson 95% CI [48.2%, 74.1%]". */
export function formatRate(s: EpisodeSummary): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return `${pct(s.rate)} (${s.successes}/${s.episodes}), Wilson 95% CI [${pct(s.ci95[0])}, ${pct(s.ci95[1])}]`;
}

/** Several runs' summaries as one (a run resumed on the seeds after the ones it finished): counts add up, means are
 * weighted by episodes (success steps by successes), the rate and its Wilson interval are recomputed. */
export function mergeSummaries(parts: readonly EpisodeSummary[]): EpisodeSummary {
  const add = (a: Record<string, number>, b: Record<string, number>) => {
    for (const [k, v] of Object.entries(b)) a[k] = (a[k] ?? 0) + v;
    return a;
  };
  const episodes = parts.reduce((n, p) => n + p.episodes, 0);
  const successes = parts.reduce((n, p) => n + p.successes, 0);
  const w = wilson(successes, episodes);
  return {
    episodes,
    successes,
    rate: episodes ? successes / episodes : 0,
    ci95: [w.lo, w.hi],
    outcomes: parts.reduce((a, p) => add(a, p.outcomes), {} as Record<string, number>),
    meanSteps: episodes ? parts.reduce((n, p) => n + p.meanSteps * p.episodes, 0) / episodes : 0,
    meanSuccessSteps: successes ? parts.reduce((n, p) => n + p.meanSuccessSteps * p.successes, 0) / successes : 0,
    simSeconds: parts.reduce((n, p) => n + p.simSeconds, 0),
    wallSeconds: parts.reduce((n, p) => n + p.wallSeconds, 0),
    safetyEvents: parts.reduce((a, p) => add(a, p.safetyEvents), {} as Record<string, number>),
    actorErrors: parts.reduce((n, p) => n + p.actorErrors, 0),
  };
}
