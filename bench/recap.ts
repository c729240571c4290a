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
 *
 * From pixels on the SO-101 (issue 27): npm run bench:recap -- --robot so101 --obs pixels [-- --task push_cube|pick_place]
 *        [-- --aux task|none] [-- --plan]
 * The same steps on launch/sim_so101.yaml, where every policy and RECAP's value function see the joint positions and the
 * front and wrist cameras (84×84, a frame per tick; docs/algorithms.md §6 "RECAP from pixels"): pixel diffusion BC
 * (app/pixelBc.ts trainSo101Bc, on 100 quality-1 scripted demos as bench:pixels; --aux task, the default, trains a
 * position head on the task's sim-only names at training time only), the BC policy with the scripted operator for the
 * mixed data, plain BC and RECAP fine-tuned from it with the encoders, β and T swept on validation seeds (1,2.5 and
 * 1,0.5 by default), 100 held-out episodes each. Targets (issue 27): RECAP ≥ 1.5× plain BC's throughput at ≤ 0.6× its
 * failure rate. Cached under bench/work/so101-<task>-pixels-recap/; writes bench/results/recap-so101-pixels-<date>.*
 * and recap-so101-pixels-latest.* (the state bench's recap-latest.* stays as it is). Flags are read and checked in
 * bench/recapArgs.ts (one-line errors naming the fix; demo, collection, validation and held-out seeds disjoint);
 * --plan prints the resolved run without running it.
 */
import { invalidateStaleStages } from "./stageCache.ts";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, copyFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { spawnSync } from "node:child_process";
import { loadLaunch, type LaunchConfig } from "../launch/LaunchConfig.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { trainBc } from "../app/trainBc.ts";
import { findPython, learnerEnv } from "../app/python.ts";
import { outcomeStats, trainRecap, type OutcomeStats } from "../app/recap.ts";
import { episodeFiles, readEpisodeArrays } from "../app/dataset.ts";
import { collectDemos, trainSo101Bc } from "../app/pixelBc.ts";
import { episodeSteps, taskSpec } from "../sim/tasks.ts";
import { gitRevision } from "../launch/nodeFactory.ts";
import { resultJson } from "./args.ts";
import { recapSettings, type RecapTask } from "./recapArgs.ts";

const settings = recapSettings();
const { flag, quick, pixels, tasks, P, BETAS, TEMPS, AUX, auxFor, recapSet, LAUNCH, TARGET, NAME, taskDir } = settings;
type Task = RecapTask;
if (flag("--help") || flag("-h")) {
  console.log(readFileSync(new URL(import.meta.url), "utf8").split("*/")[0]);
  process.exit(0);
}
if (flag("--plan")) {
  console.log(JSON.stringify(settings.plan(), null, 2));
  process.exit(0);
}
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
  // From pixels every policy reads the front and wrist cameras (and every recorded episode carries their frames).
  c.camera.enabled = pixels;
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

const bcDirOf = (work: string) => join(work, "bc");

async function runTask(task: Task): Promise<TaskRow> {
  const work = taskDir(task);
  if (flag("--fresh")) rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const seconds: Record<string, number> = {};
  console.log(`\n=== ${task} ===`);

  // 1. Demos of mixed quality.
  const demos = join(work, "demos");
  const demoSummary = join(work, "demos.json");
  // Each cached stage keeps the options it was built with; one built with others is rebuilt with what depends on it
  // (a cache reused under other options would silently change what the benchmark compares).
  const stages = [
    { name: "demos", paths: [demos, demoSummary], key: { demos: P.demos, quality: P.quality, pixels } },
    { name: "BC", paths: [bcDirOf(work)], key: { bcSteps: P.bcSteps, aux: pixels ? auxFor(task) : [] } },
    { name: "mixed episodes", paths: [join(work, "mixed"), join(work, "mixed.json")], key: { mixed: P.mixed, mixedSeed: P.mixedSeed } },
  ];
  invalidateStaleStages(work, stages, (line) => console.log(`${task}: ${line}`));
  if (!existsSync(demoSummary)) {
    const c = config(task);
    c.actor = { ...c.actor, kind: "expert", expert_quality: P.quality };
    const summary = pixels
      ? await timed(seconds, "demos", () => collectDemos({ launch: LAUNCH, task, count: P.demos, seed: 0, quality: P.quality, out: demos }))
      : (await timed(seconds, "demos", () => runEpisodes(c, { count: P.demos, seed: 0, label: "demos", recordTo: demos, metadata: { source: "scripted_expert" } }))).summary;
    writeFileSync(demoSummary, JSON.stringify(summary));
  }
  const demo = JSON.parse(readFileSync(demoSummary, "utf8")) as { episodes: number; successes: number };

  // 2. BC on demos only = the pre-trained checkpoint.
  const bcDir = bcDirOf(work);
  let bcPackage = join(bcDir, "package");
  // From pixels: pixel diffusion BC (joints + cameras; with --aux task a position head on the sim-only cube/target
  // names, training only), as bench:pixels and bench:learning train it.
  if (!existsSync(join(bcPackage, "policy.json")))
    bcPackage = pixels
      ? (await timed(seconds, "bc", () => trainSo101Bc({ launch: LAUNCH, data: demos, out: bcDir, obs: "pixels", steps: P.bcSteps, aux: auxFor(task), label: task }))).package
      : (await timed(seconds, "bc", () => trainBc({ data: demos, out: bcDir, steps: P.bcSteps }))).packageDir;

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
  // Return normalisation's T_max: the task's episode length at the launch file's control rate (SO-101 tasks are timed in seconds).
  const maxSteps = episodeSteps(taskSpec(pixels ? "so101" : "rlft_arm5", task), config(task).control_hz);
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
    recap = await timed(seconds, `recap${suffix}`, () => trainRecap({ data, pretrained: bcPackage, out: join(work, `recap${suffix}`), task, maxSteps, learner: { ...common, cfg_beta: P.cfgBeta }, label: `RECAP iter ${it}` }));
    // Guidance weight and temperature: chosen on validation seeds, then fixed for the next collection and the
    // held-out evaluation.
    const s = await sweepPolicy(`RECAP iter ${it}`, recap.packageDir, BETAS.length ? BETAS : [P.cfgBeta]);
    recapSweep = s.points;
    chosenBeta = s.best.beta ?? P.cfgBeta;
    chosenTemperature = s.best.temperature;
    iterations.push({ iteration: it, sweep: s.points, chosenBeta, chosenTemperature, validationSuccess: s.points.length ? s.best.successRate : null });
  }
  const plain = await timed(seconds, "plain_bc", () => trainRecap({ data, pretrained: bcPackage, out: join(work, "plain"), task, maxSteps, plain: true, learner: common, label: "plain BC" }));
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
    ratios: { throughput, failure, targetsMet: throughput >= TARGET.throughput && failure <= TARGET.failure },
    seconds,
  };
}

const pct = (x: number) => `${(100 * x).toFixed(0)}%`;

function markdown(rows: TaskRow[], meta: Record<string, unknown>): string {
  const out = [`# bench:recap${pixels ? " — SO-101 from pixels" : ""} — ${meta.date} (git ${meta.git})`, "", `Config: ${JSON.stringify(meta.params)}`, ""];
  if (pixels)
    out.push(`SO-101 from pixels (${LAUNCH}): every policy (BC, plain BC, RECAP) and RECAP's value function read the six joint positions and the front and wrist cameras (84×84, a frame per tick); cube and target positions are sim-only (the scripted expert, the scripted operator and the success check read them${AUX === "task" ? "; BC's camera encoders are trained to estimate them, an auxiliary loss at training time only" : ""}).`, "");
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
    out.push("", `RECAP / plain BC: throughput ${r.ratios.throughput.toFixed(2)}× (target ≥ ${TARGET.throughput}×), failure rate ${r.ratios.failure.toFixed(2)}× (target ≤ ${TARGET.failure}×) — ${r.ratios.targetsMet ? "**targets met**" : "**targets not met**"}.`, "");
    out.push(`Wall time (s): ${Object.entries(r.seconds).map(([k, v]) => `${k} ${v}`).join(", ")}`, "");
  }
  return out.join("\n");
}

const t0 = performance.now();
const git = gitRevision(); // the code that runs, taken before the (long) run
const rows: TaskRow[] = [];
for (const t of tasks) rows.push(await runTask(t));
const date = new Date().toISOString().replace(/[:.]/g, "-");
const meta = { date, git, params: { robot: settings.robot, obs: settings.obs, launch: LAUNCH, ...P, betas: BETAS, temperatures: TEMPS, aux: AUX, recapSet, quick }, seconds: Math.round((performance.now() - t0) / 1000) };
mkdirSync(RESULTS, { recursive: true });
const base = join(RESULTS, `${NAME}-${date}`);
writeFileSync(`${base}.json`, resultJson({ ...meta, tasks: rows }));
const md = markdown(rows, meta);
writeFileSync(`${base}.md`, md);
const plot = spawnSync(findPython(), ["bench/plot_recap.py", `${base}.json`, `${base}.png`], { env: learnerEnv(), encoding: "utf8" });
if (plot.status === 0) copyFileSync(`${base}.png`, join(RESULTS, `${NAME}-latest.png`));
else console.error(plot.status === 3 ? "plot skipped: matplotlib is not installed in the learner's Python (node scripts/setup-python.mjs)" : `plot failed: ${plot.stderr}`);
copyFileSync(`${base}.json`, join(RESULTS, `${NAME}-latest.json`));
copyFileSync(`${base}.md`, join(RESULTS, `${NAME}-latest.md`));
console.log("\n" + md);
console.log(`results: ${base}.{json,md${plot.status === 0 ? ",png" : ""}} (${meta.seconds} s)`);
