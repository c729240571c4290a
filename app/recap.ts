/**
 * RECAP iterations from the robot side (π*0.6, arXiv 2511.14759; docs/recap.md): collect (the current policy with
 * the supervising operator: autonomous steps, interventions, success labels) → the learner trains the value function
 * on all episodes so far, labels advantages and fine-tunes the indicator-conditioned policy from the pre-trained
 * checkpoint → evaluate the new package (conditioned on positive, no operator) → report. Used by `rlft recap` and
 * `npm run bench:recap`.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { LaunchConfig } from "../launch/LaunchConfig.ts";
import { TASKS } from "../sim/tasks.ts";
import { runEpisodes, type EpisodeSummary } from "./runEpisodes.ts";
import { streamEpisodes, trainBc } from "./trainBc.ts";
import { startLearner, type LearnerEvent } from "./learnerProcess.ts";
import { freePort } from "./ports.ts";
import { progress } from "./progress.ts";
import { wilson } from "../data/stats.ts";
import { episodeFiles, readEpisodeArrays } from "./dataset.ts";
import { learnerFlags } from "./learnerOverrides.ts";
import { packageCameras, packageObservationNames } from "../policies/PolicyPackage.ts";

/** Episode-level numbers a RECAP report compares (π*0.6's: success, throughput, failures). */
export interface OutcomeStats {
  episodes: number;
  successRate: number;
  ci95: [number, number];
  /** Episodes that did not succeed (failure + timeout + abort), as a fraction. */
  failureRate: number;
  /** Explicit task failures only (cube off the table, peg dropped). */
  explicitFailures: number;
  timeouts: number;
  /** Successes per hour of robot time (sum of episode durations; resets not counted). */
  throughputPerHour: number;
  robotSeconds: number;
  meanSuccessSteps: number;
}

/** Summarises a batch of episodes. */
export function outcomeStats(s: EpisodeSummary): OutcomeStats {
  const w = wilson(s.successes, s.episodes);
  return {
    episodes: s.episodes,
    successRate: w.p,
    ci95: [w.lo, w.hi],
    failureRate: s.episodes ? 1 - s.successes / s.episodes : 0,
    explicitFailures: s.outcomes.failure ?? 0,
    timeouts: s.outcomes.timeout ?? 0,
    throughputPerHour: s.simSeconds > 0 ? s.successes / (s.simSeconds / 3600) : 0,
    robotSeconds: s.simSeconds,
    meanSuccessSteps: s.meanSuccessSteps,
  };
}

/** Result of one learner `recap` run. */
export interface RecapTrainResult {
  packageDir: string;
  statsPath: string;
  stats: Record<string, unknown>;
  done: LearnerEvent;
}

/**
 * Streams every episode in `data` (failures and interventions included, aborted ones skipped) to a fresh
 * `python3 -m rlft_learner recap` and returns its package. `plain`: the same fine-tune without the indicator.
 */
export async function trainRecap(o: { data: readonly string[]; pretrained: string; out: string; task: string; plain?: boolean; learner?: Record<string, unknown>; label?: string; maxSteps?: number }): Promise<RecapTrainResult> {
  const endpoint = `tcp://127.0.0.1:${await freePort()}`;
  // T_max for return normalisation: given (an SO-101 task, timed in seconds at the launch file's rate), else rlft_arm5's.
  const maxSteps = o.maxSteps ?? TASKS[o.task as keyof typeof TASKS]?.maxSteps;
  const args = ["recap", "--bind", endpoint, "--pretrained", resolve(o.pretrained), "--out", o.out, "--json-progress"];
  if (maxSteps) args.push("--max-episode-steps", `${o.task}=${maxSteps}`);
  if (o.plain) args.push("--plain");
  args.push(...learnerFlags(o.learner ?? {}));
  let bar: ReturnType<typeof progress> | null = null;
  let phase = "";
  const learner = startLearner(args, (e) => {
    if (e.event !== "progress") return;
    if (e.phase !== phase) {
      bar?.stop();
      phase = String(e.phase);
      bar = progress(`${o.label ?? "recap"} ${phase}`, Number(e.total), { unit: "steps" });
    }
    bar?.update(Number(e.step), { loss: Number(e.loss).toFixed(4) });
  });
  try {
    const learnerFailed = learner.done.then(() => new Promise<never>(() => undefined));
    await learner.ready;
    // A pre-trained policy that sees cameras: its episodes go with their frames (the value and the policy read them).
    // It reads the state columns its policy.json names (the SO-101's joints; the recordings also hold the sim-only
    // cube and target, which it must not see).
    const cameras = await packageCameras(o.pretrained);
    const state = cameras.length ? await packageObservationNames(o.pretrained) : [];
    await Promise.race([streamEpisodes(o.data, endpoint, { includeFailures: true, withInterventions: true, skipUnfinished: true, robotId: "recap", ...(cameras.length ? { cameras } : {}), ...(state.length ? { state } : {}) }), learnerFailed]);
    const done = await learner.done;
    (bar as ReturnType<typeof progress> | null)?.stop();
    const statsPath = String(done.stats ?? join(o.out, "recap.json"));
    return { packageDir: String(done.package), statsPath, stats: JSON.parse(readFileSync(statsPath, "utf8")) as Record<string, unknown>, done };
  } catch (e) {
    learner.child.kill("SIGTERM");
    throw e;
  }
}

/** Options of {@link runRecap}. */
export interface RecapOptions {
  config: LaunchConfig;
  out: string;
  iterations: number;
  episodesPerIteration: number;
  evalEpisodes: number;
  evalSeed: number;
  /** First collection seed; iteration i collects seeds collectSeed + (i−1)·episodesPerIteration … */
  collectSeed: number;
  /** Demonstrations (MCAP dir); collected with the scripted expert when absent. */
  demos?: string;
  demoEpisodes: number;
  expertQuality: number;
  /** The pre-trained (BC) package; trained on the demos when absent. */
  pretrained?: string;
  bcSteps?: number;
  /** Learner `recap` config overrides (n_step, positive_fraction, cfg_beta, steps, value_steps, ...). */
  learner?: Record<string, unknown>;
  /** The scripted operator supervises collection (interventions). Default true. */
  operator?: boolean;
}

/** One iteration's report. */
export interface RecapIteration {
  iteration: number;
  collect: OutcomeStats & { interventionRate: number; policy: string };
  eval: OutcomeStats;
  package: string;
  positiveFraction: number;
  positiveFractionAutonomous: number;
  thresholds: Record<string, number>;
  valueEce: number;
  valueCorr: number;
  calibrationPlot: string | null;
  calibrationNote?: string;
  trainEpisodes: number;
}

/** What `rlft recap` returns and writes to OUT/report.json. */
export interface RecapReport {
  task: string;
  pretrained: string;
  baseline: OutcomeStats;
  iterations: RecapIteration[];
}

/** Runs the RECAP loop; see the file comment. */
export async function runRecap(o: RecapOptions): Promise<RecapReport> {
  const out = resolve(o.out);
  mkdirSync(out, { recursive: true });
  const task = o.config.task;
  const base = (): LaunchConfig => {
    const c = structuredClone(o.config);
    c.camera.enabled = false;
    c.recorder.enabled = true;
    return c;
  };

  // 0. Demonstrations and the pre-trained policy.
  let demos = o.demos;
  if (!demos) {
    demos = join(out, "demos");
    if (!existsSync(join(demos, "index.json"))) {
      console.log(`[0] collecting ${o.demoEpisodes} scripted demonstrations (${task}, quality ${o.expertQuality})`);
      const c = base();
      c.actor = { ...c.actor, kind: "expert", expert_quality: o.expertQuality };
      c.operator.enabled = false;
      await runEpisodes(c, { count: o.demoEpisodes, seed: 0, label: "demos", recordTo: demos, metadata: { source: "scripted_expert" } });
    }
  }
  let pretrained = o.pretrained;
  if (!pretrained) {
    console.log(`[0] pre-training BC on the demonstrations`);
    pretrained = (await trainBc({ data: demos, out: join(out, "pretrained"), steps: o.bcSteps })).packageDir;
  }
  const evaluate = async (pkg: string, label: string, dir: string): Promise<OutcomeStats> => {
    const c = base();
    c.actor = { ...c.actor, kind: "policy", package: pkg, residual: undefined, indicator: "auto" };
    c.operator.enabled = false;
    return outcomeStats((await runEpisodes(c, { count: o.evalEpisodes, seed: o.evalSeed, label, recordTo: dir, metadata: { source: "recap_eval" } })).summary);
  };
  console.log(`[0] evaluating the pre-trained policy on seeds ${o.evalSeed}..${o.evalSeed + o.evalEpisodes - 1}`);
  const baseline = await evaluate(pretrained, "eval BC", join(out, "eval_pretrained"));
  const report: RecapReport = { task, pretrained: resolve(pretrained), baseline, iterations: [] };
  const save = () => {
    writeFileSync(join(out, "report.json"), JSON.stringify(report, null, 2));
    writeFileSync(join(out, "report.md"), reportMarkdown(report));
  };
  save();

  let current = pretrained;
  const collected: string[] = [];
  for (let it = 1; it <= o.iterations; it++) {
    const dir = join(out, `iter_${it}`);
    // 1. Collect with the current policy (conditioned on positive from iteration 2 on) and the operator.
    console.log(`\n[${it}/${o.iterations}] collecting ${o.episodesPerIteration} episodes with ${current === pretrained ? "the pre-trained policy" : "the previous RECAP policy"}${o.operator === false ? "" : " + scripted operator"}`);
    const c = base();
    c.actor = { ...c.actor, kind: "policy", package: current, residual: undefined, indicator: "auto" };
    c.operator.enabled = o.operator !== false;
    const seed = o.collectSeed + (it - 1) * o.episodesPerIteration;
    const episodesDir = join(dir, "episodes");
    const col = await runEpisodes(c, { count: o.episodesPerIteration, seed, label: "collect", recordTo: episodesDir, metadata: { source: "recap_collect", iteration: String(it) } });
    collected.push(episodesDir);
    const interventionRate = await interventionFraction(episodesDir);
    // 2–4. Value, advantages, conditioned policy: the learner, on everything so far.
    console.log(`[${it}/${o.iterations}] value → advantages → policy on demos + ${collected.length} iteration(s) of episodes`);
    const trained = await trainRecap({ data: [demos, ...collected], pretrained, out: join(dir, "learner"), task, learner: o.learner, label: `iter ${it}` });
    // 5. Evaluate.
    console.log(`[${it}/${o.iterations}] evaluating ${trained.packageDir} (indicator positive, no operator)`);
    const ev = await evaluate(trained.packageDir, `eval it ${it}`, join(dir, "eval"));
    const st = trained.stats as { positive_fraction: number; positive_fraction_autonomous: number; thresholds: Record<string, number>; episodes: number; value: { calibration: { ece: number; corr: number }; plot: string | null; plot_note?: string } };
    report.iterations.push({
      iteration: it,
      collect: { ...outcomeStats(col.summary), interventionRate, policy: current },
      eval: ev,
      package: trained.packageDir,
      positiveFraction: st.positive_fraction,
      positiveFractionAutonomous: st.positive_fraction_autonomous,
      thresholds: st.thresholds,
      valueEce: st.value.calibration.ece,
      valueCorr: st.value.calibration.corr,
      calibrationPlot: st.value.plot ? join(dir, "learner", st.value.plot) : null,
      calibrationNote: st.value.plot_note,
      trainEpisodes: st.episodes,
    });
    writeFileSync(join(dir, "report.json"), JSON.stringify(report.iterations[report.iterations.length - 1], null, 2));
    save();
    current = trained.packageDir;
  }
  return report;
}

/** Fraction of recorded ticks under operator control in the episodes of `dir`. */
async function interventionFraction(dir: string): Promise<number> {
  let steps = 0;
  let op = 0;
  for (const f of episodeFiles(dir)) {
    const ep = await readEpisodeArrays(f);
    steps += ep.intervention.length;
    op += ep.intervention.reduce((a, b) => a + b, 0);
  }
  return steps ? op / steps : 0;
}

const pct = (x: number) => `${(100 * x).toFixed(0)}%`;

/** The per-iteration table as markdown. */
export function reportMarkdown(r: RecapReport): string {
  const row = (name: string, s: OutcomeStats, extra: string[]) =>
    `| ${name} | ${pct(s.successRate)} [${pct(s.ci95[0])}, ${pct(s.ci95[1])}] | ${pct(s.failureRate)} (${s.explicitFailures} failed, ${s.timeouts} timed out) | ${s.throughputPerHour.toFixed(0)} | ${Number.isFinite(s.meanSuccessSteps) ? s.meanSuccessSteps.toFixed(1) : "-"} | ${extra.join(" | ")} |`;
  const lines = [
    `# RECAP on ${r.task}`,
    "",
    `Evaluation: ${r.baseline.episodes} held-out seeds per policy, indicator positive, no operator. Throughput = successes per hour of robot (sim) time.`,
    "",
    "| policy | success (Wilson 95%) | failure rate | throughput /h | steps to success | collection success / interventions | positive fraction (all / autonomous) | value ECE / corr | calibration plot |",
    "|---|---|---|---|---|---|---|---|---|",
    row("pre-trained BC", r.baseline, ["-", "-", "-", "-"]),
    ...r.iterations.map((i) =>
      row(`RECAP iteration ${i.iteration}`, i.eval, [
        `${pct(i.collect.successRate)} / ${pct(i.collect.interventionRate)} of steps`,
        `${pct(i.positiveFraction)} / ${pct(i.positiveFractionAutonomous)}`,
        `${i.valueEce.toFixed(3)} / ${i.valueCorr.toFixed(2)}`,
        i.calibrationPlot ?? `none (${i.calibrationNote ?? "not written"})`,
      ]),
    ),
    "",
  ];
  return lines.join("\n");
}
