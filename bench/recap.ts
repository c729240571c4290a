/**
 * `npm run bench:recap`: RECAP advantage conditioning vs plain BC on the same mixed-quality data (docs/algorithms.md §3,
 * π*0.6 arXiv 2511.14759). Per task, in one run:
 *   1. demos: scripted-expert demonstrations of mixed quality (slow, hesitant, some failed);
 *   2. BC on demos only: the diffusion policy trained on the successful demos — also the pre-trained checkpoint;
 *   3. mixed data: that policy run with the scripted operator (autonomous steps, failures, interventions);
 *   4. plain BC on the same data: demos + mixed data, fine-tuned from the checkpoint without an indicator;
 *   5. RECAP: the same data and fine-tune budget, with the value function, advantage indicators and conditioning
 *      on positive at inference (β from --cfg-beta, default 2.5: the top of π*0.6’s 1.5–2.5; 1 = one pass);
 *   6. every policy evaluated on the same held-out seeds without the operator: success, failure rate, throughput
 *      (successes per hour of robot time), steps to success.
 * Targets (π*0.6's headline, on the harder task peg_insert): RECAP ≥ 1.5× the throughput of plain BC and ≤ half its
 * failure rate. Writes bench/results/recap-<date>.{json,md,png} and recap-latest.*; prints the markdown table.
 * Demos, BC and mixed data are cached per task in bench/work/recap-<task>/ (reruns skip them).
 *
 * Usage: npm run bench:recap [-- --task peg_insert|push_cube|all] [-- --quick] [-- --demos 40] [-- --quality 0.5]
 *        [-- --mixed 150] [-- --eval 300] [-- --steps 6000] [-- --cfg-beta 2.5] [-- --recap-set key=value ...] [-- --fresh]
 *        [-- --beta-sweep 1,1.5,2,2.5,3] [-- --sweep-seed 5000] [-- --sweep-episodes 50] [-- --iterations 1]
 * --iterations N > 1 runs π*0.6's loop: after each RECAP fine-tune, --mixed more episodes are collected with that
 * policy and the operator, and the next RECAP (from the pre-trained checkpoint again) trains on all data so far; plain
 * BC trains once on the final data, so both see exactly the same episodes.
 * The guidance weight β is chosen on validation seeds (--sweep-seed.., never the eval seeds) among --beta-sweep, by
 * success rate then throughput, and set on the robot with actor.cfg_beta (no retraining).
 * Sampling temperature (actor.noise_scale, the initial DDIM noise × T): every policy — BC, plain BC and RECAP (jointly
 * with β) — gets the same --temperature-sweep on the same validation seeds and is evaluated at its own best; the
 * held-out table also lists each policy at T 1 (the learned distribution, no tuning). A single value skips the sweep.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, copyFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { spawnSync } from "node:child_process";
import { loadLaunch, type LaunchConfig } from "../launch/LaunchConfig.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { trainBc } from "../app/trainBc.ts";
import { findPython, learnerEnv } from "../app/python.ts";
import { outcomeStats, trainRecap, type OutcomeStats } from "../app/recap.ts";
import { episodeFiles, readEpisodeArrays } from "../app/dataset.ts";
import { parseOverrides } from "../app/learnerOverrides.ts";
import { gitRevision } from "../launch/nodeFactory.ts";
import { noiseScaleProblem } from "../policies/gaussian.ts";
import { benchArgs, resultJson } from "./args.ts";

const { flag, arg, args, num } = benchArgs();
if (flag("--help") || flag("-h")) {
  console.log(readFileSync(new URL(import.meta.url), "utf8").split("*/")[0]);
  process.exit(0);
}
const quick = flag("--quick");
const ALL = ["peg_insert", "push_cube"] as const;
type Task = (typeof ALL)[number];
const taskArg = arg("--task", "peg_insert");
const tasks: Task[] = taskArg === "all" ? [...ALL] : ALL.includes(taskArg as Task) ? [taskArg as Task] : (() => { throw new Error(`--task: peg_insert, push_cube or all; got ${taskArg}`); })();
const P = {
  demos: num("--demos", quick ? 10 : 40),
  quality: num("--quality", 0.5),
  bcSteps: num("--bc-steps", quick ? 300 : 3000),
  mixed: num("--mixed", quick ? 10 : 150),
  mixedSeed: num("--mixed-seed", 3000),
  evalEpisodes: num("--eval", quick ? 10 : 300),
  evalSeed: num("--eval-seed", 1000),
  fineTuneSteps: num("--steps", quick ? 200 : 6000),
  valueSteps: num("--value-steps", quick ? 200 : 2000),
  cfgBeta: num("--cfg-beta", 2.5),
  sweepSeed: num("--sweep-seed", 5000),
  sweepEpisodes: num("--sweep-episodes", quick ? 5 : 100),
  iterations: num("--iterations", 1),
};
// Guidance weights tried on validation seeds (--sweep-seed.., disjoint from the eval seeds); the best one is then
// evaluated on the held-out eval seeds. A single value skips the sweep.
const BETAS = arg("--beta-sweep", quick ? "" : "1,1.5,2,2.5,3").split(",").filter(Boolean).map(Number);
if (BETAS.some((b) => !Number.isFinite(b) || b < 0 || b > 10)) throw new Error(`--beta-sweep: comma-separated guidance weights in [0, 10]; got ${arg("--beta-sweep", "")}`);
// Sampling temperatures tried on the same validation seeds, for every policy alike.
const TEMPS = arg("--temperature-sweep", quick ? "" : "1,0.75,0.5,0.25").split(",").filter(Boolean).map(Number);
const badTemperature = TEMPS.map(noiseScaleProblem).find((p) => p !== null);
if (badTemperature) throw new Error(`--temperature-sweep: comma-separated sampling temperatures; ${badTemperature}`);
if (!TEMPS.length) TEMPS.push(1);
// The bench's demos are the scripted expert's: their successful episodes are forced positive like operator corrections
// (learner positive_sources; π*0.6 labels demos by their advantage instead: --recap-set positive_sources= ).
const recapSet = { positive_sources: "scripted_expert", ...parseOverrides(args("--recap-set"), "--recap-set") };
const LAUNCH = "launch/sim_push.yaml";
const WORK = resolve(arg("--work", "bench/work"));
const RESULTS = resolve("bench/results");

interface MethodRow {
  name: string;
  stats: OutcomeStats;
  package: string;
  note: string;
  /** Sampling temperature (actor.noise_scale) it ran at. */
  temperature: number;
  beta?: number;
}
/** One validation point of the (β, temperature) sweep. */
interface SweepPoint {
  policy: string;
  beta?: number;
  temperature: number;
  successRate: number;
  throughputPerHour: number;
}
interface TaskRow {
  task: Task;
  data: { demos: number; demoSuccess: number; mixed: number; mixedSuccess: number; interventionRate: number; trainEpisodes: number };
  /** Each policy at its sampler settings chosen on validation (the ratios compare these). */
  methods: MethodRow[];
  /** Each policy at temperature 1 (and RECAP at the chosen β): no sampler tuning. */
  untuned: MethodRow[];
  /** Validation sweep of the final iteration, all policies. */
  sweep: SweepPoint[];
  iterations: { iteration: number; sweep: SweepPoint[]; chosenBeta: number; chosenTemperature: number; validationSuccess: number | null; collected?: { episodes: number; successes: number } }[];
  chosenBeta: number;
  recap: { positiveFraction: number; positiveFractionAutonomous: number; threshold: number; valueEce: number; valueCorr: number; calibrationPlot: string | null };
  ratios: { throughput: number; failure: number; targetsMet: boolean };
  seconds: Record<string, number>;
}

function config(task: Task): LaunchConfig {
  const c = loadLaunch(LAUNCH);
  c.task = task;
  c.camera.enabled = false;
  c.recorder.enabled = true;
  return c;
}

async function timed<T>(seconds: Record<string, number>, key: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    seconds[key] = Math.round((performance.now() - t0) / 100) / 10;
  }
}

async function runTask(task: Task): Promise<TaskRow> {
  const work = join(WORK, `recap-${task}${quick ? "-quick" : ""}`);
  if (flag("--fresh")) rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const seconds: Record<string, number> = {};
  console.log(`\n=== ${task} ===`);

  // 1. Demos of mixed quality.
  const demos = join(work, "demos");
  const demoSummary = join(work, "demos.json");
  if (!existsSync(demoSummary)) {
    const c = config(task);
    c.actor = { ...c.actor, kind: "expert", expert_quality: P.quality };
    const r = await timed(seconds, "demos", () => runEpisodes(c, { count: P.demos, seed: 0, label: "demos", recordTo: demos, metadata: { source: "scripted_expert" } }));
    writeFileSync(demoSummary, JSON.stringify(r.summary));
  }
  const demo = JSON.parse(readFileSync(demoSummary, "utf8")) as { episodes: number; successes: number };

  // 2. BC on demos only = the pre-trained checkpoint.
  const bcDir = join(work, "bc");
  let bcPackage = join(bcDir, "package");
  if (!existsSync(join(bcPackage, "policy.json"))) bcPackage = (await timed(seconds, "bc", () => trainBc({ data: demos, out: bcDir, steps: P.bcSteps }))).packageDir;

  // 3. Mixed data: the BC policy with the scripted operator.
  const mixed = join(work, "mixed");
  const mixedSummary = join(work, "mixed.json");
  if (!existsSync(mixedSummary)) {
    const c = config(task);
    c.actor = { ...c.actor, kind: "policy", package: bcPackage, indicator: "auto" };
    c.operator.enabled = true;
    const r = await timed(seconds, "mixed", () => runEpisodes(c, { count: P.mixed, seed: P.mixedSeed, label: "mixed", recordTo: mixed, metadata: { source: "recap_collect" } }));
    let steps = 0;
    let op = 0;
    for (const f of episodeFiles(mixed)) {
      const ep = await readEpisodeArrays(f);
      steps += ep.intervention.length;
      op += ep.intervention.reduce((a, b) => a + b, 0);
    }
    writeFileSync(mixedSummary, JSON.stringify({ ...r.summary, interventionRate: steps ? op / steps : 0 }));
  }
  const mix = JSON.parse(readFileSync(mixedSummary, "utf8")) as { episodes: number; successes: number; interventionRate: number };

  // 4–5. RECAP iterations (π*0.6's schedule): train V and the indicator-conditioned policy from the pre-trained
  // checkpoint on all data so far; for the next iteration collect --mixed more episodes with that policy (β chosen
  // on validation seeds) and the scripted operator. Plain BC is trained once, on exactly the data the final RECAP saw.
  const common = { steps: P.fineTuneSteps, value_steps: P.valueSteps, ...recapSet };
  const evaluate = async (name: string, pkg: string, note: string, o: { beta?: number; temperature?: number; seed?: number; count?: number } = {}): Promise<MethodRow> => {
    const c = config(task);
    c.recorder.enabled = false;
    const temperature = o.temperature ?? 1;
    c.actor = { ...c.actor, kind: "policy", package: pkg, indicator: "auto", cfg_beta: o.beta, noise_scale: temperature };
    c.operator.enabled = false;
    const key = seconds[`eval_${name}`] === undefined ? `eval_${name}` : `eval_${name} T ${temperature}`;
    const r = await timed(seconds, key, () => runEpisodes(c, { count: o.count ?? P.evalEpisodes, seed: o.seed ?? P.evalSeed, label: `eval ${name}` }));
    return { name, stats: outcomeStats(r.summary), package: pkg, note, temperature, ...(o.beta !== undefined ? { beta: o.beta } : {}) };
  };
  // Validation sweep over (β, temperature) for one policy; returns the points and the best (success, then throughput).
  const sweepPolicy = async (policy: string, pkg: string, betas: (number | undefined)[]): Promise<{ points: SweepPoint[]; best: SweepPoint }> => {
    const points: SweepPoint[] = [];
    if (betas.length * TEMPS.length <= 1) {
      const only: SweepPoint = { policy, temperature: TEMPS[0], successRate: NaN, throughputPerHour: NaN, ...(betas[0] !== undefined ? { beta: betas[0] } : {}) };
      return { points, best: only };
    }
    for (const beta of betas)
      for (const temperature of TEMPS) {
        const tag = `${beta !== undefined ? `β ${beta} ` : ""}T ${temperature}`;
        const r = await evaluate(`${policy} ${tag} (validation)`, pkg, "", { beta, temperature, seed: P.sweepSeed, count: P.sweepEpisodes });
        points.push({ policy, temperature, successRate: r.stats.successRate, throughputPerHour: r.stats.throughputPerHour, ...(beta !== undefined ? { beta } : {}) });
      }
    const best = [...points].sort((a, b) => b.successRate - a.successRate || b.throughputPerHour - a.throughputPerHour)[0];
    console.log(`${task} ${policy}: ${best.beta !== undefined ? `β ${best.beta}, ` : ""}T ${best.temperature} chosen on ${P.sweepEpisodes} validation episodes (seeds ${P.sweepSeed}..): ${points.map((p) => `${p.beta !== undefined ? `β ${p.beta} ` : ""}T ${p.temperature} ${pct(p.successRate)}`).join(", ")}`);
    return { points, best };
  };
  const data = [demos, mixed];
  const iterations: TaskRow["iterations"] = [];
  let recap: Awaited<ReturnType<typeof trainRecap>> | undefined;
  let recapSweep: SweepPoint[] = [];
  let chosenBeta = P.cfgBeta;
  let chosenTemperature = 1;
  for (let it = 1; it <= P.iterations; it++) {
    if (it > 1) {
      const dir = join(work, `iter${it}-data`);
      rmSync(dir, { recursive: true, force: true });
      const c = config(task);
      c.actor = { ...c.actor, kind: "policy", package: recap!.packageDir, indicator: "auto", cfg_beta: chosenBeta, noise_scale: chosenTemperature };
      c.operator.enabled = true;
      const r = await timed(seconds, `collect_iter${it}`, () => runEpisodes(c, { count: P.mixed, seed: P.mixedSeed + 1000 * (it - 1), label: `collect iter ${it}`, recordTo: dir, metadata: { source: "recap_collect", iteration: String(it) } }));
      iterations[iterations.length - 1].collected = { episodes: r.summary.episodes, successes: r.summary.successes };
      data.push(dir);
    }
    const suffix = it > 1 ? `-iter${it}` : "";
    recap = await timed(seconds, `recap${suffix}`, () => trainRecap({ data, pretrained: bcPackage, out: join(work, `recap${suffix}`), task, learner: { ...common, cfg_beta: P.cfgBeta }, label: `RECAP iter ${it}` }));
    // Guidance weight and temperature: chosen on validation seeds, then fixed for the next collection and the
    // held-out evaluation.
    const s = await sweepPolicy(`RECAP iter ${it}`, recap.packageDir, BETAS.length ? BETAS : [P.cfgBeta]);
    recapSweep = s.points;
    chosenBeta = s.best.beta ?? P.cfgBeta;
    chosenTemperature = s.best.temperature;
    iterations.push({ iteration: it, sweep: s.points, chosenBeta, chosenTemperature, validationSuccess: s.points.length ? s.best.successRate : null });
  }
  const plain = await timed(seconds, "plain_bc", () => trainRecap({ data, pretrained: bcPackage, out: join(work, "plain"), task, plain: true, learner: common, label: "plain BC" }));
  const bcSweep = await sweepPolicy("BC (demos only)", bcPackage, [undefined]);
  const plainSweep = await sweepPolicy("plain BC", plain.packageDir, [undefined]);

  // 6. Evaluation on the same held-out seeds, no operator: each policy at its validated sampler, and at T 1.
  const recapNote = `indicator positive, β ${chosenBeta}${P.iterations > 1 ? `, iteration ${P.iterations}` : ""}`;
  const at = (t: number) => (t === 1 ? "" : `, T ${t}`);
  const methods = [
    await evaluate("BC (demos only)", bcPackage, `${demo.successes} successful demos${at(bcSweep.best.temperature)}`, { temperature: bcSweep.best.temperature }),
    await evaluate("plain BC (same data)", plain.packageDir, `fine-tuned from BC, no indicator${at(plainSweep.best.temperature)}`, { temperature: plainSweep.best.temperature }),
    await evaluate("RECAP (ours)", recap!.packageDir, `${recapNote}${at(chosenTemperature)}`, { beta: chosenBeta, temperature: chosenTemperature }),
  ];
  const untuned: MethodRow[] = [];
  if (TEMPS.length > 1 || TEMPS[0] !== 1) {
    // A policy whose chosen temperature is 1 is not evaluated twice.
    const same = (m: MethodRow) => (m.temperature === 1 ? m : null);
    untuned.push(same(methods[0]) ?? (await evaluate("BC (demos only)", bcPackage, "no sampler tuning")));
    untuned.push(same(methods[1]) ?? (await evaluate("plain BC (same data)", plain.packageDir, "no sampler tuning")));
    untuned.push(same(methods[2]) ?? (await evaluate("RECAP (ours)", recap!.packageDir, `${recapNote}, no temperature tuning`, { beta: chosenBeta })));
  }
  const [, pb, rc] = methods;
  const throughput = pb.stats.throughputPerHour > 0 ? rc.stats.throughputPerHour / pb.stats.throughputPerHour : rc.stats.throughputPerHour > 0 ? Infinity : 1;
  const failure = pb.stats.failureRate > 0 ? rc.stats.failureRate / pb.stats.failureRate : rc.stats.failureRate > 0 ? Infinity : 1;
  const st = recap!.stats as { positive_fraction: number; positive_fraction_autonomous: number; thresholds: Record<string, number>; episodes: number; value: { calibration: { ece: number; corr: number }; plot: string | null } };
  return {
    task,
    data: { demos: demo.episodes, demoSuccess: demo.successes, mixed: mix.episodes, mixedSuccess: mix.successes, interventionRate: mix.interventionRate, trainEpisodes: st.episodes },
    methods,
    untuned,
    sweep: [...recapSweep, ...bcSweep.points, ...plainSweep.points],
    chosenBeta,
    iterations,
    recap: {
      positiveFraction: st.positive_fraction,
      positiveFractionAutonomous: st.positive_fraction_autonomous,
      threshold: st.thresholds[task],
      valueEce: st.value.calibration.ece,
      valueCorr: st.value.calibration.corr,
      calibrationPlot: st.value.plot ? join(recap!.packageDir, "..", st.value.plot) : null,
    },
    ratios: { throughput, failure, targetsMet: throughput >= 1.5 && failure <= 0.5 },
    seconds,
  };
}

const pct = (x: number) => `${(100 * x).toFixed(0)}%`;

function markdown(rows: TaskRow[], meta: Record<string, unknown>): string {
  const out = [`# bench:recap — ${meta.date} (git ${meta.git})`, "", `Config: ${JSON.stringify(meta.params)}`, ""];
  for (const r of rows) {
    out.push(`## ${r.task}`, "");
    out.push(`Data: ${r.data.demos} scripted demos (quality ${P.quality}, ${r.data.demoSuccess} successful) + ${r.data.mixed} episodes of the BC policy with the scripted operator (${r.data.mixedSuccess} successful, operator on ${pct(r.data.interventionRate)} of steps); ${r.data.trainEpisodes} episodes in training. RECAP labels: ${pct(r.recap.positiveFraction)} positive (${pct(r.recap.positiveFractionAutonomous)} of autonomous steps; ε ${r.recap.threshold.toFixed(4)}), value ECE ${r.recap.valueEce.toFixed(3)}, corr ${r.recap.valueCorr.toFixed(2)} (in-sample).`, "");
    out.push(`| policy | sampler | success (Wilson 95%) | failure rate | failed / timed out | throughput (successes/h robot time) | steps to success |`, "|---|---|---|---|---|---|---|");
    const row = (m: MethodRow) => {
      const s = m.stats;
      out.push(`| ${m.name} | ${m.beta !== undefined ? `β ${m.beta}, ` : ""}T ${m.temperature} | ${pct(s.successRate)} [${pct(s.ci95[0])}, ${pct(s.ci95[1])}] | ${pct(s.failureRate)} | ${s.explicitFailures} / ${s.timeouts} | ${s.throughputPerHour.toFixed(0)} | ${Number.isFinite(s.meanSuccessSteps) ? s.meanSuccessSteps.toFixed(1) : "-"} |`);
    };
    r.methods.forEach(row);
    if (r.untuned.length) {
      out.push("", "The same policies at temperature 1 (the learned distribution, no sampler tuning), same held-out seeds:", "", "| policy | sampler | success (Wilson 95%) | failure rate | failed / timed out | throughput (successes/h robot time) | steps to success |", "|---|---|---|---|---|---|---|");
      r.untuned.forEach(row);
      const [, pb, rc] = r.untuned;
      out.push("", `At T 1, RECAP / plain BC: throughput ${(rc.stats.throughputPerHour / pb.stats.throughputPerHour).toFixed(2)}×, failure rate ${(rc.stats.failureRate / pb.stats.failureRate).toFixed(2)}×.`);
    }
    if (r.iterations.length > 1)
      out.push("", `RECAP iterations: ${r.iterations.map((i) => `iter ${i.iteration}: β ${i.chosenBeta}, T ${i.chosenTemperature}${i.validationSuccess === null ? "" : `, validation ${pct(i.validationSuccess)}`}${i.collected ? `, then collected ${i.collected.episodes} episodes with it and the operator (${i.collected.successes} successful)` : ""}`).join("; ")}. Plain BC trains on the same final data.`);
    if (r.sweep.length) {
      out.push("", `Sampler settings chosen on ${P.sweepEpisodes} validation episodes per point (seeds ${P.sweepSeed}.., not the eval seeds), success rate:`, "");
      const policies = [...new Set(r.sweep.map((p) => p.policy))];
      out.push(`| policy | ${TEMPS.map((t) => `T ${t}`).join(" | ")} |`, `|---|${TEMPS.map(() => "---|").join("")}`);
      for (const pol of policies)
        for (const beta of [...new Set(r.sweep.filter((p) => p.policy === pol).map((p) => p.beta))])
          out.push(`| ${pol}${beta !== undefined ? ` β ${beta}` : ""} | ${TEMPS.map((t) => {
            const p = r.sweep.find((q) => q.policy === pol && q.beta === beta && q.temperature === t);
            return p ? pct(p.successRate) : "-";
          }).join(" | ")} |`);
    }
    out.push("", `RECAP / plain BC: throughput ${r.ratios.throughput.toFixed(2)}× (target ≥ 1.5×), failure rate ${r.ratios.failure.toFixed(2)}× (target ≤ 0.5×) — ${r.ratios.targetsMet ? "**targets met**" : "**targets not met**"}.`, "");
    out.push(`Wall time (s): ${Object.entries(r.seconds).map(([k, v]) => `${k} ${v}`).join(", ")}`, "");
  }
  return out.join("\n");
}

const t0 = performance.now();
const git = gitRevision(); // the code that runs, taken before the (long) run
const rows: TaskRow[] = [];
for (const t of tasks) rows.push(await runTask(t));
const date = new Date().toISOString().replace(/[:.]/g, "-");
const meta = { date, git, params: { ...P, recapSet, quick }, seconds: Math.round((performance.now() - t0) / 1000) };
mkdirSync(RESULTS, { recursive: true });
const base = join(RESULTS, `recap-${date}`);
writeFileSync(`${base}.json`, resultJson({ ...meta, tasks: rows }));
const md = markdown(rows, meta);
writeFileSync(`${base}.md`, md);
const plot = spawnSync(findPython(), ["bench/plot_recap.py", `${base}.json`, `${base}.png`], { env: learnerEnv(), encoding: "utf8" });
if (plot.status === 0) copyFileSync(`${base}.png`, join(RESULTS, "recap-latest.png"));
else console.error(plot.status === 3 ? "plot skipped: matplotlib is not installed in the learner's Python (node scripts/setup-python.mjs)" : `plot failed: ${plot.stderr}`);
copyFileSync(`${base}.json`, join(RESULTS, "recap-latest.json"));
copyFileSync(`${base}.md`, join(RESULTS, "recap-latest.md"));
console.log("\n" + md);
console.log(`results: ${base}.{json,md${plot.status === 0 ? ",png" : ""}} (${meta.seconds} s)`);
