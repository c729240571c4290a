/**
 * `rlft demo --robot so101`: scripted demos on the simulated SO-101 with its front and wrist cameras recorded →
 * diffusion BC on what the real arm senses (`--obs pixels`: joints + cameras) or on the privileged simulator state
 * (`--obs state`, the reference) → online residual RL with the scripted operator (`--online-episodes`; from pixels the
 * transitions carry both cameras' frames and the learner reads them through the base's encoder) → BC and BC + residual
 * evaluated on the same unseen seeds. Each phase is timed; summary.json keeps the result.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { formatRate, type EpisodeSummary } from "./runEpisodes.ts";
import { runSession, type SessionResult, type SessionStatus } from "./session.ts";
import { learnerOverrides } from "./learnerOverrides.ts";
import type { LaunchConfig } from "../launch/LaunchConfig.ts";
import { taskSpec } from "../sim/tasks.ts";
import { collectDemos, evalSo101Bc, phaseConfig, trainSo101Bc, type ObsKind, type TrainedBc } from "./pixelBc.ts";

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
  /** Online residual RL episodes with the scripted operator after BC (seeds from onlineSeed); 0 skips the phase. */
  onlineEpisodes?: number;
  onlineSeed?: number;
  /** Online learner settings on top of the task's preset (learner/presets/so101_<task>_pixels.yaml from pixels). */
  online?: Record<string, unknown>;
  onSessionStatus?: (s: SessionStatus) => void;
  log?: (line: string) => void;
}

/** The online learner's preset for an SO-101 task: learner/presets/so101_<task>_<obs>.yaml when it exists, else {}. */
export function so101OnlinePreset(task: string, obs: ObsKind): { file: string | null; config: Record<string, unknown> } {
  const file = fileURLToPath(new URL(`../learner/presets/so101_${task}_${obs}.yaml`, import.meta.url));
  return existsSync(file) ? { file, config: learnerOverrides(file) } : { file: null, config: {} };
}

/** What the run produced, with the wall seconds of each phase. */
export interface So101DemoResult {
  collect: EpisodeSummary;
  train: TrainedBc;
  evaluation: EpisodeSummary;
  /** The online phase and BC + residual on the same seeds as `evaluation` (null when skipped or nothing published). */
  session: SessionResult | null;
  residualEvaluation: EpisodeSummary | null;
  seconds: { collect: number; train: number; online: number; eval: number; total: number };
  summaryFile: string;
}

/** Default BC steps per observation kind: what `npm run bench:pixels` measured (docs/results.md). */
export const SO101_DEMO_STEPS: Record<ObsKind, number> = { pixels: 3000, state: 10_000 };

/** Why the demo phases' seeds do not fit (demos, online episodes and evaluation must use disjoint seeds), or null. */
export function demoSeedProblem(o: { demos: number; evalSeed: number; evalEpisodes: number; onlineEpisodes?: number; onlineSeed?: number }): string | null {
  if (o.evalSeed < o.demos) return `--eval-seed ${o.evalSeed} overlaps the demo seeds 0..${o.demos - 1}: pick ${o.demos} or more so the evaluation is on unseen seeds`;
  const online = o.onlineEpisodes ?? 0;
  const seed = o.onlineSeed ?? 2000;
  if (online === 0) return null;
  const range = `the online seeds ${seed}..${seed + online - 1}`;
  if (seed < o.demos) return `--online-seed ${seed}: ${range} overlap the demo seeds 0..${o.demos - 1}; pick ${o.demos} or more`;
  if (seed < o.evalSeed + o.evalEpisodes && o.evalSeed < seed + online) {
    return `--online-seed ${seed}: ${range} overlap the evaluation seeds ${o.evalSeed}..${o.evalSeed + o.evalEpisodes - 1}; pick ${o.evalSeed + o.evalEpisodes} or more (or move --eval-seed)`;
  }
  return null;
}

/** Runs the phases; throws before starting when the seeds of two phases overlap (demoSeedProblem). */
export async function runSo101Demo(o: So101DemoOptions): Promise<So101DemoResult> {
  const problem = demoSeedProblem(o);
  if (problem) throw new Error(problem);
  const online = o.onlineEpisodes ?? 0;
  const onlineSeed = o.onlineSeed ?? 2000;
  const phases = online > 0 ? 4 : 3;
  const log = o.log ?? ((l: string) => console.log(l));
  const out = resolve(o.out);
  mkdirSync(out, { recursive: true });
  const t0 = performance.now();
  const since = (t: number) => (performance.now() - t) / 1000;

  log(`\n[1/${phases}] collecting ${o.demos} scripted demonstrations on the SO-101 (${o.task}, quality ${o.quality}, front + wrist cameras recorded)`);
  const collect = await collectDemos({ launch: o.launch, task: o.task, count: o.demos, quality: o.quality, out: join(out, "demos") });
  const tCollect = since(t0);
  log(`      expert success ${formatRate(collect)} (${tCollect.toFixed(0)} s)`);

  // From pixels, a position head on the camera features learns the sim-only positions at training time (train-bc --aux;
  // docs/algorithms.md §6): 3x the success of the denoising loss alone (docs/results.md, bench:pixels).
  const aux = o.obs === "pixels" ? [...taskSpec("so101", o.task).privileged] : [];
  const sees = o.obs === "pixels" ? `joint positions + front and wrist cameras (position head trained on ${aux.join(", ")}; training only)` : "the privileged simulator state (cube, target)";
  log(`\n[2/${phases}] training a diffusion policy on ${sees}, ${o.steps} steps`);
  const t1 = performance.now();
  // The demos as the learner received them: the online learner's offline half (RLPD 50/50 batches, as ResFiT).
  const demosNpz = join(out, "bc", "demos.npz");
  const train = await trainSo101Bc({ launch: o.launch, data: join(out, "demos"), out: join(out, "bc"), obs: o.obs, steps: o.steps, learner: o.learner, aux, ...(online > 0 ? { saveDataset: demosNpz } : {}) });
  const tTrain = since(t1);
  log(`      final loss ${train.finalLoss.toFixed(4)} on ${train.episodes} episodes (${tTrain.toFixed(0)} s); package ${train.package}`);

  let session: SessionResult | null = null;
  const t15 = performance.now();
  if (online > 0) {
    const preset = so101OnlinePreset(o.task, o.obs);
    log(`\n[3/${phases}] online fine-tuning: ${online} episodes, residual RL over the BC policy with a scripted operator (seeds ${onlineSeed}..)${o.obs === "pixels" ? "; every transition carries both cameras' frames" : ""}; learner ${preset.file ? `preset ${preset.file}` : "defaults"}`);
    const scfg = phaseConfig(o.launch, o.task, { kind: "policy", package: train.package }, o.obs === "pixels", false);
    scfg.operator.enabled = true;
    const sdir = join(out, "session");
    rmSync(sdir, { recursive: true, force: true });
    session = await runSession({
      config: scfg, learner: true, episodes: online, seed: onlineSeed, out: sdir, pace: true,
      learnerConfig: { ...preset.config, ...o.online, demo_dataset: demosNpz }, onStatus: o.onSessionStatus, onNote: (line) => log(`      ${line}`),
    });
    log(`      ${session.learnerUpdates} learner updates, ${session.transitions.acked}/${session.transitions.pushed} transitions acked, final policy ${session.finalVersion} (${since(t15).toFixed(0)} s)`);
  }
  const tOnline = since(t15);

  log(`\n[${phases}/${phases}] evaluating on ${o.evalEpisodes} unseen seeds (${o.evalSeed}..${o.evalSeed + o.evalEpisodes - 1})${session?.finalPolicyDir ? ": BC, then BC + residual on the same seeds" : ""}`);
  const t2 = performance.now();
  const evaluation = await evalSo101Bc({ launch: o.launch, task: o.task, package: train.package, obs: o.obs, count: o.evalEpisodes, seed: o.evalSeed, recordTo: join(out, "eval") });
  log(`      ${o.obs} BC success ${formatRate(evaluation)}`);
  let residualEvaluation: EpisodeSummary | null = null;
  if (session?.finalPolicyDir) {
    residualEvaluation = await evalSo101Bc({ launch: o.launch, task: o.task, package: train.package, residual: session.finalPolicyDir, obs: o.obs, count: o.evalEpisodes, seed: o.evalSeed, recordTo: join(out, "eval-residual") });
    log(`      ${o.obs} BC + residual success ${formatRate(residualEvaluation)}`);
  } else if (session) log("      the learner published no residual package (too few updates): BC + residual not evaluated");
  const seconds = { collect: tCollect, train: tTrain, online: tOnline, eval: since(t2), total: since(t0) };
  log(`\ntotal ${(seconds.total / 60).toFixed(1)} min (collect ${(seconds.collect / 60).toFixed(1)}, train ${(seconds.train / 60).toFixed(1)}${online > 0 ? `, online ${(seconds.online / 60).toFixed(1)}` : ""}, eval ${(seconds.eval / 60).toFixed(1)})`);

  const summaryFile = join(out, "summary.json");
  const sessionSummary = session && { episodes: session.episodes.length, learner_updates: session.learnerUpdates, transitions: session.transitions, final_version: session.finalVersion, final_policy: session.finalPolicyDir };
  writeFileSync(summaryFile, JSON.stringify({ robot: "so101", task: o.task, obs: o.obs, collect, train, session: sessionSummary, eval: evaluation, eval_residual: residualEvaluation, seconds }, null, 2));
  return { collect, train, evaluation, session, residualEvaluation, seconds, summaryFile };
}
