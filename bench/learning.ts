/**
 * `npm run bench:learning`: sample efficiency of online fine-tuning, measured side by side in one run on the same task,
 * the same demos and the same online episode budget (docs/algorithms.md §5):
 *   - BC base alone (diffusion policy trained on the scripted demos);
 *   - BC + residual RL (ours: ResFiT-style TD3 residual, `runSession` with the scripted operator);
 *   - RLPD-style SAC from scratch with the same demos (the HIL-SERL baseline, learner `algorithm: rlpd_sac`), run by the
 *     same machinery over a zero base with the same operator and budget.
 * For both learners: success rate vs online episodes (the package live after k episodes, on held-out seeds, Wilson 95%
 * intervals), intervention rate over the session, learner updates/s; a final evaluation of at least 100 held-out
 * episodes; and transitions/s through the experience bridge next to raw ZeroMQ loopback for the same bytes.
 * Writes bench/results/learning-<date>.{json,md,png} and learning-latest.*; prints the markdown table.
 * Demos and BC are cached per task in bench/work/<task>/ (reruns skip collection and training).
 *
 * Usage: npm run bench:learning [-- --task push_cube|peg_insert] [-- --episodes 300] [-- --quick] [-- --plan]
 *        [-- --methods residual,sac] [-- --res-set key=value ...] [-- --sac-set key=value ...] [-- --no-throughput]
 *        [-- --link [-- --soak-minutes 10] [-- --robots 4] [-- --hz 30]]  (the experience link with camera frames alone: bench/linkBench.ts)
 *        [-- --best-of 8] [-- --temperature 1] [-- --chunk-best-of 8] [-- --session-best-of 8 [-- --session-best-of-select critic]]
 * --temperature T samples the BC base at temperature T (actor.noise_scale) everywhere: sessions, curve, final
 * evaluation and the BC-alone row. --plan prints what the flags resolve to (budgets, seeds, learner configs, files) and exits.
 * --best-of N (> 1) also evaluates BC and the final residual package with best-of-N base chunks (critic-ranked and
 * consensus) on the final held-out seeds (docs/algorithms.md §1 "beyond the recipe"); 1 skips it.
 * --chunk-best-of N (> 1): ours also trains the chunk-level critic (learner chunk_critic: true) and the robot runs
 * best-of-N base chunks ranked by it, in the session (with best_of_explore) and in every evaluation of its packages.
 * --session-best-of N (> 1) does the same with the ranking --session-best-of-select (critic: the residual package's
 * step critic, the default; chunk_critic: as --chunk-best-of), so ours is trained and evaluated steering the base
 * by its own critic (value-guided policy steering, V-GPS; docs/residual.md "What we learned").
 *
 * From pixels on the SO-101 (issue 27): npm run bench:learning -- --robot so101 --obs pixels [-- --task push_cube|pick_place]
 *        [-- --aux task|none] [-- --aux-data DIR,...] [-- --quick]
 * The same three rows on launch/sim_so101.yaml, where every policy sees the joint positions and the front and wrist
 * cameras (84×84, a frame per tick): BC alone (pixel diffusion BC, app/pixelBc.ts trainSo101Bc, on 100 quality-1
 * scripted demos, seeds 0..99, as bench:pixels), BC + residual TD3 over it (the base's frozen encoder, learner
 * learner/presets/so101_<task>_pixels.yaml) and RLPD-SAC from pixels over a zero base (docs/algorithms.md §6); the
 * sessions stream both cameras with every transition (launch learner.cameras). --aux task (default) trains BC's camera
 * encoders with a position head on the task's sim-only names (cube, target; training only, the policy never reads
 * them); --aux none leaves it out; --aux-data DIR,... adds episodes whose frames train only that head (as bench:pixels). Best-of-N and the link throughput are state-bench measurements and are off here.
 * Cached under bench/work/so101-<task>-pixels/; writes bench/results/learning-so101-pixels-<date>.* and
 * learning-so101-pixels-latest.* (the state bench's learning-latest.* stays as it is).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync, copyFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { spawnSync } from "node:child_process";
import { loadLaunch, type LaunchConfig } from "../launch/LaunchConfig.ts";
import { Stack, cameraNames } from "../launch/Stack.ts";
import { gitRevision } from "../launch/nodeFactory.ts";
import { PolicyActor } from "../policies/actors/PolicyActor.ts";
import type { EpisodeResult } from "../nodes/EpisodeManagerNode.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { trainBc } from "../app/trainBc.ts";
import { collectDemos, trainSo101Bc } from "../app/pixelBc.ts";
import { findPython, learnerEnv } from "../app/python.ts";
import { runSession } from "../app/session.ts";
import { percentile } from "../data/stats.ts";
import { PolicyPackage } from "../policies/PolicyPackage.ts";
import { measureThroughput } from "./learningThroughput.ts";
import { runLinkBench } from "./linkBench.ts";
import { renderLinkFrames } from "./linkFrames.ts";
import { benchArgs, resultJson } from "./args.ts";
import { learningSettings, type Task } from "./learningArgs.ts";
import { markdown, rate, type Supervised, type CurvePoint, type LearningBench, type MethodResult, type SessionEpisodeRow, type TaskResult } from "./learningReport.ts";

// ---------------------------------------------------------------------------------------------------------------------
// Arguments.
const { flag, num } = benchArgs();
if (flag("--help") || flag("-h")) {
  console.log(readFileSync(new URL(import.meta.url), "utf8").split("*/")[0]);
  process.exit(0);
}
const { quick, robot, obs, pixels, tasks, P, AUX, AUX_DATA, auxFor, STEER, steerMode, chunkMode, methods, LAUNCH, TARGET, RES_SET, SAC_SET, METHOD_CONFIG, TASK_RESIDUAL, LABEL, STEER_BEST_OF, NAME, taskDir, plan } = learningSettings();
if (flag("--plan")) {
  console.log(JSON.stringify(plan(), null, 2));
  process.exit(0);
}
const t0 = performance.now();
const log = (m: string) => console.log(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(5)} s] ${m}`);
if (flag("--link")) {
  // The experience link with camera frames alone (bench/linkBench.ts): no demos, no training.
  await runLinkBench({ minutes: num("--soak-minutes", 10), robots: num("--robots", 4), hz: num("--hz", 30), transitions: P.throughputN, log });
  process.exit(0);
}
const readJson = <T>(f: string): T => JSON.parse(readFileSync(f, "utf8")) as T;

// ---------------------------------------------------------------------------------------------------------------------
// Demos and BC, cached per task.

function launchFor(task: Task): LaunchConfig {
  const cfg = loadLaunch(LAUNCH);
  cfg.task = task;
  // From pixels every policy reads the cameras (BC, residual, SAC); the state bench renders none.
  cfg.camera.enabled = pixels;
  cfg.actor.noise_scale = P.temperature;
  return cfg;
}

async function demosAndBc(task: Task, dir: string) {
  mkdirSync(dir, { recursive: true });
  const demos = join(dir, "demos");
  const demosMeta = join(dir, "demos.json");
  const tag = `${P.demos}-${P.quality}`;
  if (!existsSync(demosMeta) || readJson<{ tag: string }>(demosMeta).tag !== tag) {
    log(`${task}: collecting ${P.demos} scripted demonstrations (quality ${P.quality}, seeds 0..${P.demos - 1})${pixels ? " with the front and wrist cameras" : ""}`);
    rmSync(demos, { recursive: true, force: true });
    rmSync(join(dir, "bc"), { recursive: true, force: true });
    let summary: { episodes: number; successes: number };
    if (pixels) summary = await collectDemos({ launch: LAUNCH, task, count: P.demos, seed: 0, quality: P.quality, out: demos });
    else {
      const cfg = launchFor(task);
      cfg.actor = { ...cfg.actor, kind: "expert", expert_quality: P.quality };
      summary = (await runEpisodes(cfg, { count: P.demos, seed: 0, label: "collect", recordTo: demos, metadata: { source: "scripted_expert" } })).summary;
    }
    writeFileSync(demosMeta, JSON.stringify({ tag, episodes: summary.episodes, successes: summary.successes }, null, 2));
  } else log(`${task}: reusing demos in ${demos}`);
  const d = readJson<{ episodes: number; successes: number }>(demosMeta);

  const bcDir = join(dir, "bc");
  const bcMeta = join(bcDir, "bc.json");
  const npz = join(bcDir, "demos.npz");
  const aux = auxFor(task);
  const auxData = AUX_DATA.map((d) => resolve(d));
  const stale = (m: { steps: number; aux?: string[]; auxData?: string[] }) => m.steps !== P.bcSteps || (m.aux ?? []).join() !== aux.join() || (m.auxData ?? []).join() !== auxData.join();
  if (!existsSync(bcMeta) || stale(readJson<{ steps: number; aux?: string[]; auxData?: string[] }>(bcMeta)) || !existsSync(npz)) {
    log(`${task}: training ${pixels ? `pixel BC (joints + ${cameraNames(launchFor(task)).join(" + ")}${aux.length ? `; aux targets ${aux.join(",")}, training only` : ""})` : "BC"} (${P.bcSteps} steps) on the successful demos; dataset → ${npz}`);
    rmSync(bcDir, { recursive: true, force: true });
    let done: { package: string; finalLoss: number; episodes: number; seconds: number };
    if (pixels) {
      const r = await trainSo101Bc({ launch: LAUNCH, data: demos, out: bcDir, obs: "pixels", steps: P.bcSteps, quiet: true, aux, auxData, saveDataset: npz, label: task });
      done = { package: r.package, finalLoss: r.finalLoss, episodes: r.episodes, seconds: r.seconds };
    } else {
      const r = await trainBc({ data: demos, out: bcDir, steps: P.bcSteps, quiet: true, saveDataset: npz });
      done = { package: String(r.packageDir), finalLoss: Number(r.finalLoss), episodes: Number(r.episodes), seconds: Number(r.done.seconds) };
    }
    writeFileSync(bcMeta, JSON.stringify({ ...done, steps: P.bcSteps, ...(aux.length ? { aux } : {}), ...(auxData.length ? { auxData } : {}) }, null, 2));
  } else log(`${task}: reusing BC package in ${bcDir}`);
  const bc = readJson<{ package: string; steps: number; finalLoss: number; episodes: number; seconds: number; aux?: string[] }>(bcMeta);
  return { demos: { episodes: d.episodes, successes: d.successes, used: bc.episodes, quality: P.quality, dataset: npz }, bc };
}

// ---------------------------------------------------------------------------------------------------------------------
// Evaluation on held-out seeds: no exploration noise, no recording; the operator only for the supervised measure.

/** A stack for evaluation on held-out seeds: no exploration noise, no recording; the operator only when asked. */
async function evalStack(task: Task, basePackage: string, residual: string | undefined, zeroBase: boolean, opts: { operator: boolean; bestOf?: { n: number; select: "critic" | "critics" | "consensus" } }): Promise<Stack> {
  const cfg = launchFor(task);
  const chunk = residual && !zeroBase ? STEER_BEST_OF : {};
  cfg.actor = { ...cfg.actor, kind: "policy", package: basePackage, residual, ...chunk, ...(opts.bestOf ? { best_of: opts.bestOf.n, best_of_select: opts.bestOf.select } : {}) };
  cfg.operator.enabled = opts.operator;
  cfg.recorder.enabled = false;
  const stack = await Stack.create(cfg, { quiet: true, training: false });
  (stack.actor.actor as PolicyActor).zeroBase = zeroBase;
  return stack;
}

async function evaluate(task: Task, basePackage: string, residual: string | undefined, zeroBase: boolean, count: number, bestOf?: { n: number; select: "critic" | "critics" | "consensus"; stats?: { chunks: number; reranked: number } }): Promise<EpisodeResult[]> {
  const stack = await evalStack(task, basePackage, residual, zeroBase, { operator: false, bestOf });
  try {
    const rs = await stack.runEpisodes({ count, seed: P.evalSeed });
    if (bestOf?.stats) Object.assign(bestOf.stats, (stack.actor.actor as PolicyActor).bestOfStats);
    return rs;
  } finally {
    await stack.shutdown();
  }
}

/**
 * The same held-out seeds with the scripted operator watching (as in the sessions) and no exploration noise: how much
 * of the policy's time the operator takes over. Unlike the session's first→last-20% column, both policies face the
 * same seeds, so a harder stretch of session seeds cannot pass for a rise (or a fall) in interventions.
 */
async function supervised(task: Task, basePackage: string, residual: string | undefined, zeroBase: boolean, count: number): Promise<Supervised> {
  const stack = await evalStack(task, basePackage, residual, zeroBase, { operator: true });
  let before = stack.arbiter.interventionTicks;
  let steps = 0, interventionSteps = 0, episodes = 0, successes = 0;
  try {
    await stack.runEpisodes({
      count, seed: P.evalSeed, onEpisode: (r) => {
        const k = stack.arbiter.interventionTicks - before;
        before = stack.arbiter.interventionTicks;
        steps += r.steps;
        interventionSteps += k;
        if (k > 0) episodes++;
        if (r.outcome === "success") successes++;
      },
    });
  } finally {
    await stack.shutdown();
  }
  return { n: count, steps, interventionSteps, interventionRate: steps ? interventionSteps / steps : 0, episodesWithIntervention: episodes, successes };
}

const successes = (rs: EpisodeResult[], n = rs.length) => rs.slice(0, n).filter((r) => r.outcome === "success").length;
const meanSteps = (rs: EpisodeResult[]) => rs.reduce((a, r) => a + r.steps, 0) / Math.max(1, rs.length);

// ---------------------------------------------------------------------------------------------------------------------
// One learner: session, then the curve and the final evaluation.

async function runMethod(task: Task, method: string, bcPackage: string, bcVersion: string, bcFinal: EpisodeResult[], demoNpz: string, dir: string): Promise<MethodResult> {
  const zero = method === "sac";
  const out = join(dir, method);
  rmSync(out, { recursive: true, force: true });
  const cfg = launchFor(task);
  cfg.actor = { ...cfg.actor, kind: "policy", package: bcPackage, ...(zero ? {} : STEER_BEST_OF) };
  cfg.operator.enabled = true;
  cfg.recorder.enabled = false;
  // From pixels every transition carries both cameras' frames of obs and next_obs to the learner.
  if (pixels) cfg.learner.cameras = cameraNames(cfg);
  const learnerConfig: Record<string, unknown> = { ...METHOD_CONFIG[method], ...(method === "residual" ? { ...TASK_RESIDUAL[task], ...RES_SET } : {}), demo_dataset: resolve(demoNpz) };
  log(`${task}/${method}: online session, ${P.episodes} episodes (seeds ${P.sessionSeed}..), learner ${JSON.stringify(learnerConfig)}`);
  const ts = performance.now();
  let lastLog = 0;
  const res = await runSession({
    config: cfg, learner: true, episodes: P.episodes, seed: P.sessionSeed, out, learnerConfig, pace: true, baseMode: zero ? "zero" : "policy", window: 20,
    onStatus: (s) => {
      if (s.episode - lastLog >= Math.max(1, Math.floor(P.episodes / 15)) || s.episode === P.episodes) {
        lastLog = s.episode;
        log(`${task}/${method}: episode ${s.episode}/${s.episodes}, success(20) ${(100 * s.rollingSuccess).toFixed(0)}%, interventions ${(100 * s.interventionRate).toFixed(0)}%, ${s.learnerUpdates} updates (${s.updatesPerSec.toFixed(0)}/s), policy ${s.policyVersion}`);
      }
    },
  });
  const wall = (performance.now() - ts) / 1000;
  const eps: SessionEpisodeRow[] = res.episodes.map((e) => ({ episode: e.episode, outcome: e.outcome, steps: e.steps, interventionSteps: e.interventionSteps, policyVersion: e.policyVersion }));

  // Package lookup: the learner's packages (keep_packages is high) or the robot's verified cache.
  const packageDir = (version: string): string => {
    for (const d of [join(out, "learner", "packages", version), join(out, "policies", version)]) if (existsSync(join(d, "policy.json"))) return d;
    throw new Error(`${task}/${method}: package ${version} is neither in ${out}/learner/packages nor in ${out}/policies`);
  };
  /** The residual package a version runs over the base; none for the BC base itself or SAC's zero@ start. */
  const residualDir = (version: string): string | undefined => ((!zero && version === bcVersion) || version.startsWith("zero@") ? undefined : packageDir(version));
  const cache = new Map<string, EpisodeResult[]>();
  const run = async (version: string, n: number): Promise<EpisodeResult[]> => {
    const hit = cache.get(version);
    if (hit && hit.length >= n) return hit;
    let rs: EpisodeResult[];
    if (!zero && version === bcVersion) rs = bcFinal;
    else rs = await evaluate(task, bcPackage, residualDir(version), zero, n);
    cache.set(version, rs);
    return rs;
  };
  const finalVersion = eps.length ? eps[eps.length - 1].policyVersion : res.finalVersion;
  log(`${task}/${method}: final evaluation of ${finalVersion} on ${P.finalEval} held-out seeds`);
  const final = await run(finalVersion, P.finalEval);
  const curve: CurvePoint[] = [];
  for (let k = 0; k <= eps.length; k += P.evalEvery) {
    const version = k === 0 ? (eps[0]?.policyVersion ?? finalVersion) : eps[k - 1].policyVersion;
    const rs = await run(version, P.evalSeeds);
    curve.push({ episodes: k, version, ...rate(successes(rs, P.evalSeeds), P.evalSeeds) });
  }
  if (curve[curve.length - 1]?.episodes !== eps.length && eps.length > 0) {
    curve.push({ episodes: eps.length, version: finalVersion, ...rate(successes(final, P.evalSeeds), P.evalSeeds) });
  }
  let bestOf: MethodResult["bestOf"];
  if (!zero && P.bestOf > 1 && finalVersion !== bcVersion) {
    const stats = { chunks: 0, reranked: 0 };
    const critic = await evaluate(task, bcPackage, packageDir(finalVersion), false, P.finalEval, { n: P.bestOf, select: "critic", stats });
    const consensus = await evaluate(task, bcPackage, packageDir(finalVersion), false, P.finalEval, { n: P.bestOf, select: "consensus" });
    // A package with a chunk critic (learner chunk_critic: true) is also ranked by both critics voting.
    const both = learnerConfig.chunk_critic === true ? await evaluate(task, bcPackage, packageDir(finalVersion), false, P.finalEval, { n: P.bestOf, select: "critics" }) : null;
    bestOf = { n: P.bestOf, critic: rate(successes(critic), critic.length), consensus: rate(successes(consensus), consensus.length), rerankedFraction: stats.chunks ? stats.reranked / stats.chunks : 0, ...(both ? { critics: rate(successes(both), both.length) } : {}) };
    log(`${task}/${method}: best-of-${P.bestOf} final: critic ${successes(critic)}/${critic.length}, consensus ${successes(consensus)}/${consensus.length}${both ? `, both critics ${successes(both)}/${both.length}` : ""}`);
  }
  const sup = await supervised(task, bcPackage, residualDir(finalVersion), zero, P.finalEval);
  log(`${task}/${method}: final package with the scripted operator on the held-out seeds: ${(100 * sup.interventionRate).toFixed(1)}% of steps under operator control, ${sup.episodesWithIntervention}/${sup.n} episodes with a takeover`);
  log(`${task}/${method}: curve ${curve.map((c) => `${c.episodes}:${(100 * c.rate).toFixed(0)}%`).join(" ")}; final ${(100 * successes(final) / final.length).toFixed(1)}%`);

  const metrics = join(out, "learner", "metrics.jsonl");
  const ups = existsSync(metrics)
    ? readFileSync(metrics, "utf8").split("\n").filter(Boolean).map((l) => Number((JSON.parse(l) as Record<string, number>)["charts/updates_per_s"])).filter((x) => x > 0)
    : [];
  const pk = join(out, "learner", "packages");
  const steps = eps.reduce((a, e) => a + e.steps, 0);
  const target = TARGET(task, successes(bcFinal) / bcFinal.length);
  return {
    label: LABEL[method],
    learnerConfig,
    curve,
    final: { version: finalVersion, meanSteps: meanSteps(final), ...rate(successes(final), final.length) },
    supervised: sup,
    bestOf,
    session: {
      dir: out,
      episodes: eps,
      wallSeconds: wall,
      learnerUpdates: res.learnerUpdates,
      updatesPerSecMedian: ups.length ? percentile(ups, 50) : 0,
      updatesPerSecOverall: res.learnerUpdates / wall,
      transitions: res.transitions,
      packages: existsSync(pk) ? readdirSync(pk).filter((d) => !d.startsWith(".")).length : 0,
      interventionRate: steps ? eps.reduce((a, e) => a + e.interventionSteps, 0) / steps : 0,
      onlineSuccess: rate(eps.filter((e) => e.outcome === "success").length, eps.length),
    },
    episodesToTarget: curve.find((c) => c.rate >= target)?.episodes ?? null,
  };
}

async function runTask(task: Task, stamp: string): Promise<TaskResult> {
  const ts = performance.now();
  const dir = taskDir(task);
  const { demos, bc } = await demosAndBc(task, dir);
  const bcVersion = (await PolicyPackage.load(bc.package)).json.version;
  // BC's held-out results are cached next to its package (retraining BC removes them with it).
  const cached = async <T>(kind: string, compute: () => Promise<T>): Promise<T> => {
    const file = join(dir, "bc", `${kind}-${P.evalSeed}-${P.finalEval}${P.temperature !== 1 ? `-T${P.temperature}` : ""}.json`);
    if (existsSync(file)) return readJson<T>(file);
    const v = await compute();
    writeFileSync(file, JSON.stringify(v));
    return v;
  };
  const bcFinal = await cached("eval", () => {
    log(`${task}: evaluating BC alone on ${P.finalEval} held-out seeds (${P.evalSeed}..)`);
    return evaluate(task, bc.package, undefined, false, P.finalEval);
  });
  log(`${task}: BC alone ${successes(bcFinal)}/${bcFinal.length}`);
  const bcSup = await cached("supervised", () => supervised(task, bc.package, undefined, false, P.finalEval));
  log(`${task}: BC alone with the scripted operator: ${(100 * bcSup.interventionRate).toFixed(1)}% of steps under operator control, ${bcSup.episodesWithIntervention}/${bcSup.n} episodes with a takeover`);
  const result: TaskResult = {
    task, target: TARGET(task, successes(bcFinal) / bcFinal.length), demos, bc: { package: bc.package, steps: bc.steps, finalLoss: bc.finalLoss, ...(bc.aux ? { aux: bc.aux } : {}), trainSeconds: bc.seconds, final: { meanSteps: meanSteps(bcFinal), ...rate(successes(bcFinal), bcFinal.length) }, supervised: bcSup },
    methods: {}, seconds: 0,
  };
  if (P.bestOf > 1 && methods.includes("residual")) {
    const cons = await evaluate(task, bc.package, undefined, false, P.finalEval, { n: P.bestOf, select: "consensus" });
    result.bc.bestOfConsensus = { samples: P.bestOf, ...rate(successes(cons), cons.length) };
    log(`${task}: BC with best-of-${P.bestOf} consensus ${successes(cons)}/${cons.length}`);
  }
  for (const m of methods) result.methods[m] = await runMethod(task, m, bc.package, bcVersion, bcFinal, demos.dataset, join(dir, "sessions", stamp));
  result.seconds = (performance.now() - ts) / 1000;
  return result;
}

// ---------------------------------------------------------------------------------------------------------------------
// Main.

const date = new Date().toISOString();
const stamp = date.replace(/[:.]/g, "-");
const bench: LearningBench = {
  date, git: gitRevision(), robot, obs, launch: LAUNCH, command: `npm run bench:learning -- ${process.argv.slice(2).join(" ")}`.trim(), overrides: { residual: { ...(chunkMode ? { chunk_critic: true } : {}), ...(steerMode ? { session_best_of: STEER.n, session_best_of_select: STEER.select } : {}), ...RES_SET }, sac: SAC_SET }, temperature: P.temperature, quick, episodes: P.episodes, evalEvery: P.evalEvery, evalSeeds: P.evalSeeds, finalEval: P.finalEval, evalSeed: P.evalSeed, sessionSeed: P.sessionSeed,
  tasks: [], throughput: null, throughputFrames: null, seconds: 0,
  notes: pixels ? [
    `SO-101 from pixels (${LAUNCH}): every policy reads the six joint positions and the front and wrist cameras (84×84, a frame per tick); the sessions send both cameras' frames of obs and next_obs with every transition (launch learner.cameras). Cube and target positions are sim-only: the scripted expert, the scripted operator and the success check read them, no policy does${AUX === "task" ? " (BC's camera encoders are trained to estimate them, an auxiliary loss at training time only)" : ""}.`,
    `Same demos (the pixel BC's training set, with their frames, also ${methods.length > 1 ? "each learner's" : "the learner's"} offline buffer via demo_dataset), same scripted operator, same session seeds and episode budget${methods.length > 1 ? " for both learners" : ""}; paced so the learner keeps UTD 2 (the robot waits for the learner's updates before each episode). Targets from pixels: push_cube 90%, pick_place 20 points over the pixel BC.`,
    ...(methods.includes("residual") ? ["Ours (residual TD3 from pixels) reads [joints, the frozen BC encoder's features] (image_encoder base) with the learner defaults and learner/presets/so101_<task>_pixels.yaml (no mirror_obs: a mirrored episode would need mirrored frames)."] : []),
    ...(methods.includes("sac") ? ["RLPD-SAC from pixels: the same encoder path, 2 LayerNorm critics 256x256, actor 256x256, lr 3e-4, auto-entropy, 50/50 demo/online batches, over a zero base (docs/algorithms.md §6)."] : []),
    `Curve points evaluate the package that ran online episode k (session.jsonl) on the first ${P.evalSeeds} of the ${P.finalEval} final-evaluation seeds; evaluation runs without operator and without exploration noise. Demo seeds 0..${P.demos - 1}, held-out seeds ${P.evalSeed}.., session seeds ${P.sessionSeed}.. do not overlap.`,
  ] : [
    "Same demos (the BC training set, also each learner's offline buffer via demo_dataset), same scripted operator, same session seeds and episode budget for both learners; both paced so the learner keeps UTD 2 as on a real 10 Hz robot.",
    "RLPD-SAC baseline (learner/rlft_learner/algorithms/rlpd_sac/agent.py): 2 LayerNorm critics 256x256, actor 256x256, Adam lr 3e-4, auto-entropy (target -|A|/2, initial alpha 1), 50/50 demo/online batches, UTD 2 and one actor update per env step like ours. gamma 0.99 and 3-step returns like ours for a like-for-like comparison (HIL-SERL uses gamma 0.97, RLPD 1-step).",
    "The SAC actor runs on the robot as a residual package with scale 1 over a zero base; the behaviour policy is its deterministic mean tanh(mu) plus Gaussian noise with the policy's own mean spread (clipped to [0.05, 0.3]), not SAC's own tanh-Gaussian sample. The learner publishes its untrained actor at start, so it explores from episode 0.",
    "Ours (residual TD3) uses the learner defaults: 10-head REDQ critic 128 wide, residual scale 0.1, exploration std 0.05, critic warm-up 1000 updates; with the trust region actor_residual_penalty 0.1 on push_cube and 1 on peg_insert, and on push_cube mirror-symmetry augmentation (mirror_obs q.shoulder_pan,ee.y,cube.y,target.y) (bench/learning.ts TASK_RESIDUAL; --res-set overrides it).",
    `Curve points evaluate the package that ran online episode k (session.jsonl) on the first ${P.evalSeeds} of the ${P.finalEval} final-evaluation seeds; evaluation runs without operator and without exploration noise.`,
  ],
};
for (const task of tasks) bench.tasks.push(await runTask(task, stamp));
// The experience link's throughput is a property of the link, measured by the state bench (with and without camera frames).
if (!flag("--no-throughput") && !pixels) {
  log(`throughput: ${P.throughputN} transitions through the bridge vs raw ZeroMQ`);
  bench.throughput = await measureThroughput(bench.tasks[0].bc.package, P.throughputN);
  log(`throughput: the same with the SO-101's two 84x84 camera frames per transition (obs and next_obs)`);
  bench.throughputFrames = await measureThroughput(bench.tasks[0].bc.package, P.throughputN, 32, await renderLinkFrames(64));
}
bench.seconds = (performance.now() - t0) / 1000;

mkdirSync("bench/results", { recursive: true });
// Two runs started in the same millisecond (e.g. one per task, side by side) must not overwrite each other's report.
let base = join("bench/results", `${NAME}-${stamp}`);
for (let k = 2; existsSync(`${base}.json`); k++) base = join("bench/results", `${NAME}-${stamp}-${k}`);
const md = markdown(bench);
writeFileSync(`${base}.json`, resultJson(bench));
writeFileSync(`${base}.md`, md + "\n");
console.log("\n" + md + "\n");
const plot = spawnSync(findPython(), ["bench/plot_learning.py", `${base}.json`, `${base}.png`], { env: learnerEnv(), encoding: "utf8" });
if (plot.status === 0) console.log(`plot: ${base}.png`);
else if (plot.status === 3) console.log(`no plot: matplotlib is missing from the learner's Python. Run node scripts/setup-python.mjs, then: .venv/bin/python bench/plot_learning.py ${base}.json ${base}.png`);
else console.log(`plot failed:\n${plot.stderr}`);
for (const ext of ["json", "md", "png"]) if (existsSync(`${base}.${ext}`)) copyFileSync(`${base}.${ext}`, `bench/results/${NAME}-latest.${ext}`);
console.log(`written: ${base}.{json,md${existsSync(`${base}.png`) ? ",png" : ""}} (+ bench/results/${NAME}-latest.*)`);
