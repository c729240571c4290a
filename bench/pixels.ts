/**
 * `npm run bench:pixels`: diffusion BC from pixels on the SO-101 against BC on privileged state, same demos, same
 * held-out seeds. Per task (push_cube, pick_place):
 *   1. scripted demos with the front and wrist cameras recorded (launch/sim_so101.yaml, 84×84, a frame per tick);
 *   2. pixel BC: joint positions + both cameras (`rlft train-bc --state joints --cameras front,wrist`), and state BC
 *      on the same demos with the whole simulator observation (cube, target: sim-only, for reference);
 *   3. both evaluated on held-out seeds (disjoint from the demo seeds), success with a Wilson 95% interval.
 * Writes bench/results/pixels-<date>.{md,json,png} and pixels-latest.*; prints the markdown table.
 * Demos, packages and evaluations are cached under --cache (default bench/work/pixels), keyed by their settings, so a
 * rerun reuses what it already has; --fresh redoes everything.
 *
 * Usage: npm run bench:pixels [-- --tasks push_cube,pick_place] [-- --demos 100] [-- --quality 1]
 *        [-- --pixel-steps 3000] [-- --state-steps 10000] [-- --eval 200] [-- --eval-seed 1000]
 *        [-- --pixel-set key=value ...] [-- --obs pixels,state] [-- --cache DIR] [-- --fresh] [-- --parallel 3]
 *        [-- --name pixels] [-- --launch launch/sim_so101_wide.yaml] [-- --aux task|NAMES] [-- --aux-data DIR,...]
 * --obs pixels leaves out the state BC reference (a run that varies only the pixel policy); --name NAME writes
 * NAME-<date>.* and NAME-latest.* instead of pixels-* (so such a run does not replace the main table). --launch: another
 * SO-101 launch file (other cameras); cached work is keyed by it, so give such a run its own --cache as well.
 * --aux: training-only targets for the pixel policy's camera encoders (`rlft train-bc --aux`): comma-separated names,
 * or `task` for every sim-only name of the task (cube.x, cube.y, target.x, ...); the policy still sees joints + cameras.
 * --aux-data: episode dirs (noisy demos: `rlft collect --quality 0.3`; a policy's own rollouts: `rlft eval --record-to`)
 * whose frames train only that position head (`rlft train-bc --aux-data`); give the same dirs for every task run.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync, copyFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { spawnSync } from "node:child_process";
import { gitRevision } from "../launch/nodeFactory.ts";
import { taskSpec } from "../sim/tasks.ts";
import { loadLaunch, type LaunchConfig } from "../launch/LaunchConfig.ts";
import { cameraSizes } from "../launch/Stack.ts";
import { parseOverrides } from "../app/learnerOverrides.ts";
import { findPython, learnerEnv } from "../app/python.ts";
import { SO101_LAUNCH as DEFAULT_LAUNCH, cached, collectDemos, evalSo101Bc, trainSo101Bc, type ObsKind, type TrainedBc } from "../app/pixelBc.ts";
import type { EpisodeSummary } from "../app/runEpisodes.ts";
import { benchArgs, resultJson } from "./args.ts";
import { pixelsMarkdown, type PixelsBench, type PixelsTask } from "./pixelsReport.ts";

const { flag, arg, args, num } = benchArgs();
if (flag("--help") || flag("-h")) {
  console.log(readFileSync(new URL(import.meta.url), "utf8").split("*/")[0]);
  process.exit(0);
}
const TASKS = ["push_cube", "pick_place"];
const tasks = arg("--tasks", TASKS.join(",")).split(",").filter(Boolean) as LaunchConfig["task"][];
for (const t of tasks) if (!TASKS.includes(t as string)) throw new Error(`--tasks: comma-separated, from ${TASKS.join(", ")}; got ${t}`);
const P = {
  demos: num("--demos", 100),
  quality: num("--quality", 1),
  pixelSteps: num("--pixel-steps", 3000),
  stateSteps: num("--state-steps", 10_000),
  eval: num("--eval", 200),
  evalSeed: num("--eval-seed", 1000),
  parallel: num("--parallel", 3),
};
if (P.evalSeed < P.demos) throw new Error(`--eval-seed ${P.evalSeed}: the held-out seeds must not overlap the demo seeds 0..${P.demos - 1}`);
const PIXEL_SET = parseOverrides(args("--pixel-set"), "--pixel-set");
const TARGET: Record<string, number> = { push_cube: 0.6, pick_place: 0.4 };
const CACHE = resolve(arg("--cache", "bench/work/pixels"));
const LAUNCH = arg("--launch", DEFAULT_LAUNCH);
if (!existsSync(LAUNCH)) throw new Error(`--launch ${LAUNCH}: no such file — give an SO-101 launch file with cameras, e.g. launch/sim_so101_wide.yaml`);
/** Cached work made with another launch file than the default is keyed by it too (the default's keys stay as they were). */
const launchTag = LAUNCH === DEFAULT_LAUNCH ? "" : `-${LAUNCH}`;
const fresh = flag("--fresh");

const t0 = performance.now();
const log = (m: string) => console.log(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(5)} s] ${m}`);

/** Runs `jobs` with at most `n` at a time (the learners and evaluations of both tasks share the machine). */
async function pool<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.max(1, n) }, async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]();
    }
  }));
  return out;
}

const demos: Record<string, EpisodeSummary> = {};
for (const task of tasks) {
  demos[task] = await cached(join(CACHE, task, "demos.json"), `${P.demos}-${P.quality}${launchTag}`, fresh, async () => {
    log(`${task}: collecting ${P.demos} scripted demos (quality ${P.quality}, seeds 0..${P.demos - 1}) with both cameras`);
    return collectDemos({ launch: LAUNCH, task, count: P.demos, quality: P.quality, out: join(CACHE, task, "demos") });
  }, log);
  log(`${task}: demos ${demos[task].successes}/${demos[task].episodes} successful`);
}

const kinds = arg("--obs", "pixels,state").split(",").filter(Boolean) as ObsKind[];
for (const k of kinds) if (k !== "pixels" && k !== "state") throw new Error(`--obs: pixels and/or state; got ${k}`);
const NAME = arg("--name", "pixels");
if (!/^[a-z0-9-]+$/.test(NAME)) throw new Error(`--name: lower-case letters, digits and dashes (a file name stem); got ${NAME}`);
const steps = (obs: ObsKind) => (obs === "pixels" ? P.pixelSteps : P.stateSteps);
const learnerSet = (obs: ObsKind) => (obs === "pixels" ? PIXEL_SET : {});
const AUX = arg("--aux", "");
const AUX_DATA = arg("--aux-data", "").split(",").filter(Boolean);
for (const d of AUX_DATA) if (!existsSync(d)) throw new Error(`--aux-data ${d}: no such directory (record one with rlft collect --quality 0.3 or rlft eval --record-to)`);
if (AUX_DATA.length && !AUX) throw new Error("--aux-data trains the position head: give --aux task (or names) too");
const auxFor = (task: string, obs: ObsKind): string[] => (obs !== "pixels" || !AUX ? [] : AUX === "task" ? [...taskSpec("so101", task).privileged] : AUX.split(",").map((s) => s.trim()).filter(Boolean));
const trainTag = (obs: ObsKind, task = "") => `${P.demos}-${P.quality}-${steps(obs)}-${JSON.stringify(learnerSet(obs))}${launchTag}${auxFor(task, obs).length ? `-aux:${auxFor(task, obs).join(",")}${AUX_DATA.length ? `+${AUX_DATA.join(",")}` : ""}` : ""}`;
const trained: Record<string, TrainedBc> = {};
await pool(kinds.flatMap((obs) => tasks.map((task) => async () => {
  trained[`${task}/${obs}`] = await cached(join(CACHE, task, `${obs}.json`), trainTag(obs, task), fresh, async () => {
    log(`${task}: training ${obs} BC, ${steps(obs)} steps`);
    const r = await trainSo101Bc({ launch: LAUNCH, data: join(CACHE, task, "demos"), out: join(CACHE, task, obs), obs, steps: steps(obs), learner: learnerSet(obs), aux: auxFor(task, obs), auxData: AUX_DATA, label: `${task} ${obs}` });
    log(`${task}: ${obs} BC trained in ${(r.seconds / 60).toFixed(1)} min, final loss ${r.finalLoss.toFixed(4)}`);
    return r;
  }, log);
})), P.parallel);

const evals: Record<string, EpisodeSummary> = {};
await pool(kinds.flatMap((obs) => tasks.map((task) => async () => {
  evals[`${task}/${obs}`] = await cached(join(CACHE, task, `${obs}.eval.json`), `${trainTag(obs, task)}-${P.eval}-${P.evalSeed}`, fresh, async () => {
    log(`${task}: evaluating ${obs} BC on ${P.eval} held-out seeds (${P.evalSeed}..)`);
    const s = await evalSo101Bc({ launch: LAUNCH, task, package: trained[`${task}/${obs}`].package, obs, count: P.eval, seed: P.evalSeed });
    log(`${task}: ${obs} BC ${s.successes}/${s.episodes} (${(100 * s.rate).toFixed(1)}%)`);
    return s;
  }, log);
})), P.parallel);

const result: PixelsBench = {
  date: new Date().toISOString(),
  git: gitRevision(),
  command: `npm run bench:pixels -- ${process.argv.slice(2).join(" ")}`.trim(),
  settings: { ...P, pixelSet: PIXEL_SET, ...(AUX ? { aux: AUX } : {}), ...(AUX_DATA.length ? { auxData: AUX_DATA.join(",") } : {}), launch: LAUNCH, cameras: Object.entries(cameraSizes(loadLaunch(LAUNCH))).map(([c, s]) => `${c} ${s.width}×${s.height}`).join(" + ") },
  minutes: (performance.now() - t0) / 60_000,
  tasks: tasks.map((task): PixelsTask => ({
    task,
    target: TARGET[task],
    demos: demos[task],
    ...(kinds.includes("pixels") ? { pixels: { train: trained[`${task}/pixels`], eval: evals[`${task}/pixels`] } } : {}),
    ...(kinds.includes("state") ? { state: { train: trained[`${task}/state`], eval: evals[`${task}/state`] } } : {}),
  })),
};
const md = pixelsMarkdown(result);
console.log(`\n${md}`);
mkdirSync("bench/results", { recursive: true });
const stem = join("bench/results", `${NAME}-${result.date.replace(/[:.]/g, "-")}`);
writeFileSync(`${stem}.json`, resultJson(result));
writeFileSync(`${stem}.md`, md);
const plot = spawnSync(findPython(), ["bench/plot_pixels.py", `${stem}.json`, `${stem}.png`], { env: learnerEnv(), stdio: "inherit" });
for (const ext of ["json", "md", ...(plot.status === 0 ? ["png"] : [])]) copyFileSync(`${stem}.${ext}`, `bench/results/${NAME}-latest.${ext}`);
if (plot.status !== 0) console.log("no plot (bench/plot_pixels.py needs matplotlib in the learner's Python)");
log(`written to ${stem}.{json,md${plot.status === 0 ? ",png" : ""}} and bench/results/${NAME}-latest.*`);
