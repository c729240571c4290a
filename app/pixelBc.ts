/**
 * Pixel behaviour cloning on the SO-101, end to end: scripted demos recorded with the robot's cameras → a diffusion BC
 * policy that sees the joints and the cameras (what a real arm senses) or, for reference, the privileged simulator
 * state → evaluation on held-out seeds. Shared by `rlft demo --obs pixels` and `npm run bench:pixels`; every step is
 * the ordinary machinery (runEpisodes for collect and eval, trainBc for the learner).
 */
import { existsSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { loadLaunch, type LaunchConfig } from "../launch/LaunchConfig.ts";
import { cameraNames } from "../launch/Stack.ts";
import { runEpisodes, type EpisodeSummary } from "./runEpisodes.ts";
import { trainBc } from "./trainBc.ts";

/** The SO-101 launch file with the front and wrist cameras. */
export const SO101_LAUNCH = "launch/sim_so101.yaml";

type Task = LaunchConfig["task"];

/** What the policy sees: the joints and the launch file's cameras, or the whole (privileged) sim observation. */
export type ObsKind = "pixels" | "state";

/** `launch` with `task`, the actor and the cameras set for one phase; nothing else of the file changes. */
export function phaseConfig(launch: string, task: Task, actor: Partial<LaunchConfig["actor"]>, cameras: boolean, record: boolean): LaunchConfig {
  const cfg = loadLaunch(launch);
  if (cfg.robot !== "so101") throw new Error(`${launch}: pixel BC runs on the SO-101 (robot: so101); this file has robot: ${cfg.robot}`);
  cfg.task = task;
  cfg.actor = { ...cfg.actor, ...actor };
  cfg.camera.enabled = cameras;
  cfg.recorder.enabled = record;
  return cfg;
}

/** Scripted-expert demos with the cameras recorded, seeds `seed`..`seed + count - 1`, into `out` (replaced). */
export async function collectDemos(o: { launch: string; task: Task; count: number; seed?: number; quality: number; out: string }): Promise<EpisodeSummary> {
  rmSync(o.out, { recursive: true, force: true });
  const cfg = phaseConfig(o.launch, o.task, { kind: "expert", expert_quality: o.quality }, true, true);
  return (await runEpisodes(cfg, { count: o.count, seed: o.seed ?? 0, label: `demos ${o.task}`, recordTo: o.out, metadata: { source: "scripted_expert" } })).summary;
}

/** A trained package with what it cost. */
export interface TrainedBc {
  obs: ObsKind;
  package: string;
  steps: number;
  episodes: number;
  finalLoss: number;
  /** Wall time of the learner process (upload + training + export). */
  seconds: number;
  /** CPU time of the learner process (what the training costs on an idle machine); absent from older learners. */
  cpuSeconds?: number;
  learner: Record<string, unknown>;
  /** Training-only targets of the camera encoders' position head (train-bc --aux), when any. */
  aux?: readonly string[];
}

/**
 * Diffusion BC on the successful demos in `data`: `pixels` sees the joint positions and every camera of `launch`
 * (`--state joints --cameras front,wrist`), `state` the whole observation as recorded (privileged cube and target).
 * `saveDataset`: also write the demos as the learner received them (.npz with the frames; an online learner's
 * demo_dataset).
 */
export async function trainSo101Bc(o: { launch: string; data: string; out: string; obs: ObsKind; steps: number; learner?: Record<string, unknown>; quiet?: boolean; label?: string; aux?: readonly string[]; auxData?: readonly string[]; saveDataset?: string }): Promise<TrainedBc> {
  rmSync(o.out, { recursive: true, force: true });
  const cameras = o.obs === "pixels" ? cameraNames(loadLaunch(o.launch)) : undefined;
  if (cameras && cameras.length === 0) throw new Error(`${o.launch}: --obs pixels needs cameras, and the file's camera: section has none (add them, as launch/sim_so101.yaml does)`);
  const t0 = performance.now();
  const r = await trainBc({ data: o.data, out: o.out, steps: o.steps, quiet: o.quiet, learner: o.learner, label: o.label, saveDataset: o.saveDataset, ...(cameras ? { cameras, state: "joints" as const, ...(o.aux?.length ? { aux: o.aux, auxData: o.auxData } : {}) } : {}) });
  return { obs: o.obs, package: r.packageDir, steps: r.steps, episodes: r.episodes, finalLoss: r.finalLoss, seconds: (performance.now() - t0) / 1000, ...(r.done.cpu_seconds !== undefined ? { cpuSeconds: Number(r.done.cpu_seconds) } : {}), learner: o.learner ?? {}, ...(o.aux?.length && cameras ? { aux: o.aux } : {}) };
}

/** `count` episodes of the package on seeds from `seed` (keep them disjoint from the demos'); cameras on for pixels. */
export async function evalSo101Bc(o: { launch: string; task: Task; package: string; residual?: string; obs: ObsKind; count: number; seed: number; recordTo?: string }): Promise<EpisodeSummary> {
  const cfg = phaseConfig(o.launch, o.task, { kind: "policy", package: o.package, ...(o.residual ? { residual: o.residual } : {}) }, o.obs === "pixels", !!o.recordTo);
  return (await runEpisodes(cfg, { count: o.count, seed: o.seed, label: `eval ${o.obs}${o.residual ? " + residual" : ""} ${o.task}`, recordTo: o.recordTo })).summary;
}

/**
 * `make()` once per `tag`: the result is kept in `file` and returned again while the tag matches (a rerun skips the
 * work). `fresh` redoes it.
 */
export async function cached<T>(file: string, tag: string, fresh: boolean, make: () => Promise<T>, log: (m: string) => void = () => undefined): Promise<T> {
  if (!fresh && existsSync(file)) {
    const hit = JSON.parse(readFileSync(file, "utf8")) as { tag: string; value: T };
    if (hit.tag === tag) {
      log(`reusing ${file}`);
      return hit.value;
    }
  }
  const value = await make();
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, JSON.stringify({ tag, value }, null, 2));
  return value;
}
