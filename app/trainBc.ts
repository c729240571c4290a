/**
 * Behaviour cloning end to end from the robot side: start the learner, stream the recorded episodes to
 * it over ZeroMQ (`rlft-exp/1`), follow its progress, return where the policy package went.
 */
import { createHash } from "node:crypto";
import { DatasetClient } from "../bridge/DatasetClient.ts";
import { episodeFiles, readEpisodeArrays, type EpisodeArrays } from "./dataset.ts";
import { startLearner, type LearnerEvent } from "./learnerProcess.ts";
import { freePort } from "./ports.ts";
import { progress } from "./progress.ts";
import { learnerFlags } from "./learnerOverrides.ts";

/** Options of {@link streamEpisodes}. */
export interface StreamOptions {
  /** Also send failed episodes (default: successful demonstrations only). */
  includeFailures?: boolean;
  /** Send who acted per step and the episode's source (RECAP needs them; BC ignores them). */
  withInterventions?: boolean;
  /** Skip aborted episodes and ones cut short by a crash (their outcome is unknown). Default false. */
  skipUnfinished?: boolean;
  robotId?: string;
  /** Camera frames to send with each episode (a policy that sees them); episodes without one are refused. */
  cameras?: readonly string[];
  /**
   * The observation columns to send (a policy's `observation.state`): names, or "joints" for every `q.<joint>`. Default:
   * the whole /observation. A policy that runs on a real robot must not see sim-only signals (cube.x, ...).
   */
  state?: readonly string[] | "joints";
  /**
   * Training-only targets sent after the state columns (e.g. cube.x, target.x: what only a simulator knows): the
   * learner's `aux_targets` takes them out again and trains the camera encoders to estimate them, so the policy never
   * reads them. Needs `cameras`.
   */
  aux?: readonly string[];
  /**
   * More episode dirs whose frames train only the position head (`aux`): noisy demos, the policy's own rollouts. Sent
   * after the demos, successful or not, with source `aux_only`; the learner never imitates them.
   */
  auxData?: readonly string[];
  onEpisode?: (ep: EpisodeArrays, sent: boolean) => void;
}

/** The indices of the observation columns `state` selects in `names` (all of them when absent). */
export function stateColumns(names: readonly string[], state: StreamOptions["state"], file: string): number[] {
  if (state === undefined) return names.map((_, i) => i);
  const want = state === "joints" ? names.filter((n) => n.startsWith("q.")) : state;
  if (want.length === 0) throw new Error(`${file}: the observation has no joint positions (q.<joint>); it has ${names.join(", ")}`);
  return want.map((n) => {
    const i = names.indexOf(n);
    if (i < 0) throw new Error(`${file}: the observation has no "${n}" (it has ${names.join(", ")}) — pick state names the robot publishes`);
    return i;
  });
}

/**
 * Streams the episodes in `dir` (or in each of several dirs) to a learner at `endpoint`; returns how many demos were
 * sent and skipped, and how many aux-only episodes (`auxData`) went with them.
 */
export async function streamEpisodes(dir: string | readonly string[], endpoint: string, opts: StreamOptions = {}): Promise<{ sent: number; skipped: number; auxSent: number }> {
  const demoFiles = (typeof dir === "string" ? [dir] : dir).flatMap((d) => episodeFiles(d));
  if (opts.auxData?.length && !opts.aux?.length) throw new Error("--aux-data gives frames for the position head: name its targets with --aux");
  const auxFiles = new Set((opts.auxData ?? []).flatMap((d) => episodeFiles(d)));
  const files = [...demoFiles, ...auxFiles];
  let client: DatasetClient | null = null;
  let sent = 0;
  let skipped = 0;
  let auxSent = 0;
  try {
    for (const f of files) {
      const ep = await readEpisodeArrays(f, { cameras: opts.cameras });
      const state = stateColumns(ep.obsNames, opts.state, f);
      const aux = opts.aux?.length ? stateColumns(ep.obsNames, opts.aux, f).filter((i) => !state.includes(i)) : [];
      const cols = [...state, ...aux];
      const obsNames = cols.map((i) => ep.obsNames[i]);
      const obs = ep.obs.map((row) => cols.map((i) => row[i]));
      const unfinished = ep.recovered || ep.outcome === "abort" || ep.outcome === "crashed";
      const auxOnly = auxFiles.has(f);
      const use = (ep.success || !!opts.includeFailures || auxOnly) && ep.obs.length > 0 && !(opts.skipUnfinished && unfinished);
      if (use) {
        client ??= await DatasetClient.connect(endpoint, {
          robotId: opts.robotId ?? "sim",
          configHash: createHash("sha256").update(JSON.stringify([ep.task, obsNames, ep.actionNames])).digest("hex").slice(0, 16),
          obsNames,
          actionNames: ep.actionNames,
          task: ep.task,
        });
        const extra = opts.withInterventions ? { intervention: ep.intervention, source: ep.source } : auxOnly ? { source: "aux_only" } : {};
        await client.sendEpisode({ episodeId: ep.episode, seed: ep.seed, task: ep.task, success: ep.success, obs, action: ep.action, reward: ep.reward, ...extra, ...(ep.images ? { images: ep.images } : {}) });
        if (auxOnly) auxSent++;
        else sent++;
      } else skipped++;
      opts.onEpisode?.(ep, use);
    }
    if (!client) throw new Error(`none of the ${demoFiles.length} episodes in ${String(dir)} is usable (successful, non-empty); pass --include-failures to send failures too`);
    await client.end();
  } finally {
    client?.close();
  }
  return { sent, skipped, auxSent };
}

/** Result of a BC training run. */
export interface TrainBcResult {
  packageDir: string;
  finalLoss: number;
  steps: number;
  episodes: number;
  done: LearnerEvent;
}

/** Trains a diffusion BC policy on the episodes in `data`; the package goes under `out`. */
export async function trainBc(opts: {
  data: string;
  out: string;
  steps?: number;
  includeFailures?: boolean;
  quiet?: boolean;
  saveDataset?: string;
  /** Cameras whose frames the policy sees (a pixel policy); the learner trains an encoder per camera. */
  cameras?: readonly string[];
  /** Observation columns the policy sees (see StreamOptions.state). */
  state?: StreamOptions["state"];
  /** Training-only targets for the camera encoders (see StreamOptions.aux); needs `cameras`. */
  aux?: readonly string[];
  /** Episode dirs whose frames train only the position head (see StreamOptions.auxData); needs `aux`. */
  auxData?: readonly string[];
  /** Learner train-bc config on top of its defaults (e.g. `{ batch_size: 64, image_shift: 4 }`). */
  learner?: Readonly<Record<string, unknown>>;
  /** Names the progress lines (several trainings in one log). Default "train" / "upload". */
  label?: string;
}): Promise<TrainBcResult> {
  const port = await freePort();
  const endpoint = `tcp://127.0.0.1:${port}`;
  const args = ["train-bc", "--bind", endpoint, "--out", opts.out, "--json-progress"];
  if (opts.steps) args.push("--steps", String(opts.steps));
  // The same demos, as .npz, seed the online learner's offline buffer (RLPD 50/50 batches, docs/algorithms.md §1).
  if (opts.saveDataset) args.push("--save-dataset", opts.saveDataset);
  if (opts.aux?.length) {
    if (!opts.cameras?.length) throw new Error("--aux trains the camera encoders to estimate those columns: give --cameras too");
    // Without --state the policy sees every column but these; with it, a name in both would be input and target.
    const both = opts.aux.filter((n) => (opts.state === "joints" ? n.startsWith("q.") : (opts.state ?? []).includes(n)));
    if (both.length) throw new Error(`--aux ${both.join(",")}: ${both.length > 1 ? "these are" : "this is"} also in --state; a training-only target must not be an input (leave it out of one of them)`);
  }
  args.push(...learnerFlags({ ...(opts.learner ?? {}), ...(opts.aux?.length ? { aux_targets: opts.aux.join(",") } : {}) }));
  let bar: ReturnType<typeof progress> | null = null;
  const learner = startLearner(args, (e) => {
    if (e.event === "progress" && !opts.quiet) {
      bar ??= progress(opts.label ? `train ${opts.label}` : "train", Number(e.total), { unit: "steps" });
      bar.update(Number(e.step), { loss: Number(e.loss).toFixed(4) });
    }
  });
  try {
    const files = [opts.data, ...(opts.auxData ?? [])].flatMap((d) => episodeFiles(d));
    const upload = opts.quiet ? null : progress(opts.label ? `upload ${opts.label}` : "upload", files.length, { unit: "episodes" });
    let n = 0;
    // If the learner dies while we upload, report its own error rather than a handshake timeout.
    const learnerFailed = learner.done.then(() => new Promise<never>(() => undefined));
    await learner.ready;
    const { sent } = await Promise.race([streamEpisodes(opts.data, endpoint, { includeFailures: opts.includeFailures, cameras: opts.cameras, state: opts.state, aux: opts.aux, auxData: opts.auxData, onEpisode: () => upload?.update(++n) }), learnerFailed]);
    upload?.stop();
    const done = await learner.done;
    (bar as ReturnType<typeof progress> | null)?.stop();
    return { packageDir: String(done.package), finalLoss: Number(done.final_loss), steps: Number(done.steps ?? opts.steps ?? 0), episodes: sent, done };
  } catch (e) {
    learner.child.kill("SIGTERM");
    throw e;
  }
}
