/**
 * `rlft demo --robot so101`: scripted demos on the simulated SO-101 with its front and wrist cameras recorded →
 * diffusion BC on what the real arm senses (`--obs pixels`: joints + cameras) or on the privileged simulator state
 * (`--obs state`, the reference) → evaluation on unseen seeds. Each phase is timed; summary.json keeps the result.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { formatRate, type EpisodeSummary } from "./runEpisodes.ts";
import type { LaunchConfig } from "../launch/LaunchConfig.ts";
import { taskSpec } from "../sim/tasks.ts";
import { collectDemos, evalSo101Bc, trainSo101Bc, type ObsKind, type TrainedBc } from "./pixelBc.ts";

const ROBOTS = ["rlft_arm5", "so101"];
const OBS = ["state", "pixels"];
const SO101_TASKS = ["push_cube", "pick_place", "reach"];

/** The demo's robot, observation and task, checked before anything starts (no Python setup on a bad flag). */
export function demoPlan(o: { robot: string; obs: string; task?: string; onlineEpisodes?: number; launch?: string }): { robot: "rlft_arm5" | "so101"; obs: "state" | "pixels"; task: LaunchConfig["task"] } {
  if (!ROBOTS.includes(o.robot)) throw new Error(`--robot: ${ROBOTS.join(" or ")}; got ${o.robot}`);
  if (!OBS.includes(o.obs)) throw new Error(`--obs: ${OBS.join(" or ")}; got ${o.obs}`);
  if (o.robot === "rlft_arm5") {
    if (o.obs === "pixels") throw new Error("--obs pixels: rlft_arm5 has no cameras to learn from — add --robot so101 (front and wrist cameras, launch/sim_so101.yaml)");
    if (o.task !== undefined && o.task !== "push_cube") throw new Error(`--task ${o.task}: the rlft_arm5 demo runs push_cube; other tasks come with --robot so101 (${SO101_TASKS.join(", ")})`);
    return { robot: "rlft_arm5", obs: "state", task: "push_cube" };
  }
  const task = o.task ?? "push_cube";
  if (!SO101_TASKS.includes(task)) throw new Error(`--task: on the SO-101 one of ${SO101_TASKS.join(", ")}; got ${task}`);
  if (o.onlineEpisodes) throw new Error("--online-episodes: the SO-101 demo trains and evaluates BC only (online fine-tuning runs on rlft_arm5); drop the flag or pass 0");
  return { robot: "so101", obs: o.obs as ObsKind, task: task as LaunchConfig["task"] };
}

/** Settings of one SO-101 demo run. */
export interface So101DemoOptions {
  out: string;
  launch: string;
  task: LaunchConfig["task"];
  obs: ObsKind;
  demos: number;
  quality: number;
  steps: number;
  evalEpisodes: number;
  evalSeed: number;
  /** Learner train-bc settings on top of its defaults. */
  learner?: Record<string, unknown>;
  log?: (line: string) => void;
}

/** What the run produced, with the wall seconds of each phase. */
export interface So101DemoResult {
  collect: EpisodeSummary;
  train: TrainedBc;
  evaluation: EpisodeSummary;
  seconds: { collect: number; train: number; eval: number; total: number };
  summaryFile: string;
}

/** Default BC steps per observation kind: what `npm run bench:pixels` measured (docs/results.md). */
export const SO101_DEMO_STEPS: Record<ObsKind, number> = { pixels: 3000, state: 10_000 };

/** Runs the three phases; throws before starting when the evaluation seeds overlap the demo seeds. */
export async function runSo101Demo(o: So101DemoOptions): Promise<So101DemoResult> {
  if (o.evalSeed < o.demos) throw new Error(`--eval-seed ${o.evalSeed} overlaps the demo seeds 0..${o.demos - 1}: pick ${o.demos} or more so the evaluation is on unseen seeds`);
  const log = o.log ?? ((l: string) => console.log(l));
  const out = resolve(o.out);
  mkdirSync(out, { recursive: true });
  const t0 = performance.now();
  const since = (t: number) => (performance.now() - t) / 1000;

  log(`\n[1/3] collecting ${o.demos} scripted demonstrations on the SO-101 (${o.task}, quality ${o.quality}, front + wrist cameras recorded)`);
  const collect = await collectDemos({ launch: o.launch, task: o.task, count: o.demos, quality: o.quality, out: join(out, "demos") });
  const tCollect = since(t0);
  log(`      expert success ${formatRate(collect)} (${tCollect.toFixed(0)} s)`);

  // From pixels, a position head on the camera features learns the sim-only positions at training time (train-bc --aux;
  // docs/algorithms.md §6): 3x the success of the denoising loss alone (docs/results.md, bench:pixels).
  const aux = o.obs === "pixels" ? [...taskSpec("so101", o.task).privileged] : [];
  const sees = o.obs === "pixels" ? `joint positions + front and wrist cameras (position head trained on ${aux.join(", ")}; training only)` : "the privileged simulator state (cube, target)";
  log(`\n[2/3] training a diffusion policy on ${sees}, ${o.steps} steps`);
  const t1 = performance.now();
  const train = await trainSo101Bc({ launch: o.launch, data: join(out, "demos"), out: join(out, "bc"), obs: o.obs, steps: o.steps, learner: o.learner, aux });
  const tTrain = since(t1);
  log(`      final loss ${train.finalLoss.toFixed(4)} on ${train.episodes} episodes (${tTrain.toFixed(0)} s); package ${train.package}`);

  log(`\n[3/3] evaluating on ${o.evalEpisodes} unseen seeds (${o.evalSeed}..${o.evalSeed + o.evalEpisodes - 1})`);
  const t2 = performance.now();
  const evaluation = await evalSo101Bc({ launch: o.launch, task: o.task, package: train.package, obs: o.obs, count: o.evalEpisodes, seed: o.evalSeed, recordTo: join(out, "eval") });
  const seconds = { collect: tCollect, train: tTrain, eval: since(t2), total: since(t0) };
  log(`      ${o.obs} BC success ${formatRate(evaluation)} (${seconds.eval.toFixed(0)} s)`);
  log(`\ntotal ${(seconds.total / 60).toFixed(1)} min (collect ${(seconds.collect / 60).toFixed(1)}, train ${(seconds.train / 60).toFixed(1)}, eval ${(seconds.eval / 60).toFixed(1)})`);

  const summaryFile = join(out, "summary.json");
  writeFileSync(summaryFile, JSON.stringify({ robot: "so101", task: o.task, obs: o.obs, collect, train, eval: evaluation, seconds }, null, 2));
  return { collect, train, evaluation, seconds, summaryFile };
}
