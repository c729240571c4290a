/**
 * bench:learning's flags (bench/learning.ts), read and checked in one place: which robot and observations, tasks,
 * budgets, seeds, BC, each learner's config and where the results go. Kept apart from the bench so the checks (and
 * `--plan`) run without loading the robot stack.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { learnerOverrides, parseOverrides } from "../app/learnerOverrides.ts";
import { taskSpec } from "../sim/tasks.ts";
import { noiseScaleProblem } from "../policies/gaussian.ts";
import { benchArgs } from "./args.ts";

/** The SO-101 launch file with the front and wrist cameras (app/pixelBc.ts SO101_LAUNCH). */
export const SO101_PIXELS_LAUNCH = "launch/sim_so101.yaml";

export type Task = "push_cube" | "peg_insert" | "pick_place";

/**
 * `--robot` and `--obs` of a learning bench, checked together: rlft_arm5 learns from the simulator state
 * (launch/sim_push.yaml), the SO-101 from its joint positions and two cameras (launch/sim_so101.yaml).
 */
export function robotAndObs(arg: (name: string, fallback: string) => string): { robot: "rlft_arm5" | "so101"; obs: "state" | "pixels" } {
  const ROBOTS = ["rlft_arm5", "so101"] as const;
  const robot = arg("--robot", "rlft_arm5");
  if (!(ROBOTS as readonly string[]).includes(robot)) throw new Error(`--robot: rlft_arm5 (learns from state) or so101 (learns from its cameras, with --obs pixels); got ${robot}`);
  const obs = arg("--obs", robot === "so101" ? "pixels" : "state");
  if (obs !== "state" && obs !== "pixels") throw new Error(`--obs: state (--robot rlft_arm5) or pixels (--robot so101); got ${obs}`);
  if (obs === "pixels" && robot !== "so101") throw new Error("--obs pixels: the pixel bench runs on the SO-101 and its cameras; add --robot so101 (rlft_arm5 learns from state: leave out --obs)");
  if (obs === "state" && robot === "so101") throw new Error("--robot so101 --obs state: the SO-101 bench learns from its cameras; use --obs pixels (the state bench is --robot rlft_arm5)");
  return { robot: robot as "rlft_arm5" | "so101", obs };
}

/** Every setting of a bench:learning run, from its command line; throws a one-line error naming the fix for bad flags. */
export function learningSettings(argv: string[] = process.argv.slice(2)) {
  const { flag, arg, args, num } = benchArgs(argv);
  const quick = flag("--quick");
  const { robot, obs } = robotAndObs(arg);
  const pixels = obs === "pixels";
  const TASKS = pixels ? ["push_cube", "pick_place"] as const : ["push_cube", "peg_insert"] as const;
  const taskArg = arg("--task", "");
  if (taskArg && !(TASKS as readonly string[]).includes(taskArg)) throw new Error(`--task: one of ${TASKS.join(", ")} for --robot ${robot}; got ${taskArg}`);
  // From pixels one task is hours of paced sessions on a CPU: push_cube alone unless --task says otherwise.
  const tasks: Task[] = taskArg ? [taskArg as Task] : pixels ? ["push_cube"] : [...TASKS];
  const P = {
    episodes: num("--episodes", quick ? (pixels ? 4 : 20) : pixels ? 200 : 300),
    evalEvery: num("--eval-every", quick ? (pixels ? 2 : 10) : 50),
    evalSeeds: num("--eval-seeds", quick ? (pixels ? 4 : 10) : 50),
    finalEval: num("--final-eval", quick ? (pixels ? 6 : 20) : 100),
    evalSeed: num("--eval-seed", 1000),
    sessionSeed: num("--session-seed", 2000),
    // Pixels: bench:pixels' demos (100 at quality 1, seeds 0..99) and its pixel BC budget (3000 steps).
    demos: num("--demos", quick ? (pixels ? 6 : 20) : pixels ? 100 : 50),
    quality: num("--quality", pixels ? 1 : 0.7),
    bcSteps: num("--bc-steps", quick ? (pixels ? 60 : 500) : pixels ? 3000 : 20_000),
    throughputN: num("--throughput-transitions", quick ? 5000 : 20_000),
    // Best-of-N ranks base chunks by a critic that reads the state: off from pixels (a pixel residual ships no critic.onnx).
    bestOf: num("--best-of", pixels ? 1 : 8),
    temperature: num("--temperature", 1),
    chunkBestOf: num("--chunk-best-of", 1),
  };
  /** Pixel BC's training-only position-head targets (trainSo101Bc aux): the task's sim-only names, or none. */
  const AUX = arg("--aux", pixels ? "task" : "none");
  if (AUX !== "task" && AUX !== "none") throw new Error(`--aux: task (the task's sim-only cube/target names as BC's training-only targets) or none; got ${AUX}`);
  if (!pixels && AUX !== "none") throw new Error("--aux: training-only targets for the pixel BC's camera encoders; it needs --robot so101 --obs pixels");
  const auxFor = (task: Task): string[] => (pixels && AUX === "task" ? [...taskSpec("so101", task).privileged] : []);
  /** Episode dirs whose frames train only pixel BC's position head (noisy demos, a policy's own rollouts). */
  const AUX_DATA = arg("--aux-data", "").split(",").filter(Boolean);
  for (const d of AUX_DATA) if (!existsSync(d)) throw new Error(`--aux-data ${d}: no such directory (record one with rlft collect --quality 0.3 or rlft eval --record-to)`);
  if (AUX_DATA.length && AUX !== "task") throw new Error("--aux-data trains pixel BC's position head: it needs --robot so101 --obs pixels with --aux task");
  if (pixels) {
    for (const f of ["--session-best-of", "--chunk-best-of", "--link"]) if (flag(f)) throw new Error(`${f}: not with --obs pixels (the chunk critic and best-of-N steering read the state; the link bench has its own frames): leave it out`);
    if (P.bestOf !== 1) throw new Error(`--best-of ${P.bestOf}: not with --obs pixels (a pixel residual ships no critic.onnx to rank base chunks); leave it out or give 1`);
  }
  // Demo, held-out and session seeds never overlap: what a policy is evaluated on, it was not trained on.
  {
    const ranges = [["demo", 0, P.demos], ["held-out (--eval-seed)", P.evalSeed, Math.max(P.finalEval, P.evalSeeds)], ["session (--session-seed)", P.sessionSeed, P.episodes]] as const;
    for (let i = 0; i < ranges.length; i++) for (let j = i + 1; j < ranges.length; j++) {
      const [a, a0, an] = ranges[i], [b, b0, bn] = ranges[j];
      if (a0 < b0 + bn && b0 < a0 + an) throw new Error(`the ${a} seeds ${a0}..${a0 + an - 1} overlap the ${b} seeds ${b0}..${b0 + bn - 1}: move --eval-seed or --session-seed`);
    }
  }
  /** Best-of-N base chunks for ours in its session and every evaluation of its packages (--session-best-of, --chunk-best-of). */
  const STEER = {
    n: num("--session-best-of", P.chunkBestOf),
    select: arg("--session-best-of-select", P.chunkBestOf > 1 ? "chunk_critic" : "critic") as "critic" | "chunk_critic",
  };
  if (!["critic", "chunk_critic"].includes(STEER.select)) throw new Error(`--session-best-of-select: critic or chunk_critic; got ${STEER.select}`);
  if (!(Number.isInteger(STEER.n) && STEER.n >= 1 && STEER.n <= 64)) throw new Error(`--session-best-of: an integer in [1, 64]; got ${STEER.n}`);
  const steerMode = STEER.n > 1;
  /** Steering by the chunk critic: ours also trains it (learner chunk_critic: true). */
  const chunkMode = steerMode && STEER.select === "chunk_critic";
  const badTemperature = noiseScaleProblem(P.temperature);
  if (badTemperature) throw new Error(`--temperature: the base's sampling temperature (actor.noise_scale): ${badTemperature}`);
  if (P.evalSeeds > P.finalEval) throw new Error("--eval-seeds must not exceed --final-eval (curve seeds are the first final-eval seeds)");
  const methods = arg("--methods", "residual,sac").split(",").filter(Boolean);
  for (const m of methods) if (m !== "residual" && m !== "sac") throw new Error(`--methods: residual and/or sac; got ${m}`);
  const LAUNCH = pixels ? SO101_PIXELS_LAUNCH : "launch/sim_push.yaml";
  const WORK = resolve(arg("--work", "bench/work"));
  // BC + residual's targets (docs/results.md "Targets at a glance"). From pixels (issue 27): push_cube 90%, and
  // pick_place 20 points over the pixel BC it starts from.
  const STATE_TARGET: Record<Task, number> = { push_cube: 0.95, peg_insert: 0.9, pick_place: 0.4 };
  const TARGET = (task: Task, bcRate: number): number =>
    !pixels ? STATE_TARGET[task] : task === "pick_place" ? Math.min(1, bcRate + 0.2) : task === "push_cube" ? 0.9 : STATE_TARGET[task];

  // Both learners: same demos, same seed, same UTD (learner default 2), gamma 0.99 and n-step 3 (residual_td3 defaults);
  // every package kept so the curve can evaluate what was live at episode k.
  const COMMON: Record<string, unknown> = { keep_packages: 100_000, seed: 1, ...(quick ? { learning_starts: 200, critic_warmup_updates: 200, publish_every: 200 } : {}) };
  /** The user's learner overrides, parsed once: they win over everything below. */
  const RES_SET = parseOverrides(args("--res-set"), "--res-set");
  const SAC_SET = parseOverrides(args("--sac-set"), "--sac-set");
  /** Learner config per method; ours also gets TASK_RESIDUAL[task] and then RES_SET (runMethod). */
  const METHOD_CONFIG: Record<string, Record<string, unknown>> = {
    residual: { ...COMMON, ...(chunkMode ? { chunk_critic: true } : {}) },
    // HIL-SERL/RLPD: 2 LayerNorm critics 256x256, actor 256x256, lr 3e-4, auto-entropy (target -|A|/2), 50/50 batches.
    sac: { ...COMMON, algorithm: "rlpd_sac", critic_hidden: 256, critic_layers: 2, actor_hidden: 256, actor_layers: 2, ...SAC_SET },
  };
  /**
   * Ours per task, under --res-set: the learner presets a user starts a session with (learner/presets/<task>.yaml, read
   * here so the bench measures exactly what ships). Both put a trust region around the base (actor_residual_penalty,
   * docs/residual.md): peg_insert's BC base already succeeds ~96% and plain TD3's bang-bang residual drops it to 0% within
   * 100 episodes, so it keeps w = 1, and it explores with exploration_std 0.02 (0.05 is ~7 mm at the tool per joint
   * against a 2 mm clearance: three runs at 0.02 kept BC's level on 500 held-out seeds, 96.2 / 94.0 / 96.4% against
   * 96.0%, where 0.05 gave 91.4% in the bench at 87caa21). push_cube's base misses a fifth of its episodes: w = 1 holds it
   * at BC's level (83%), plain TD3 dips to ~45% and ends at 88–93%, w = 0.1 learned without the dip. push_cube's scene is
   * mirror-symmetric in y, so ours also learns from every episode reflected (mirror_obs, learner/rlft_learner/buffers/mirror.py):
   * alone that leaves the one-sample success where it was, but it trains a critic that ranks the base's samples well
   * enough for critic best-of-16 to reach 95% in eleven runs of thirteen (docs/residual.md "What we learned").
   * `--res-set mirror_obs=` turns it off.
   */
  function preset(task: Task): Record<string, unknown> {
    // From pixels: learner/presets/so101_<task>_pixels.yaml, without the state-only keys a pixel base refuses.
    return learnerOverrides(fileURLToPath(new URL(`../learner/presets/${pixels ? `so101_${task}_pixels` : task}.yaml`, import.meta.url)));
  }
  const TASK_RESIDUAL = Object.fromEntries(tasks.map((t) => [t, preset(t)])) as Partial<Record<Task, Record<string, unknown>>>;
  const LABEL: Record<string, string> = {
    residual: steerMode ? `BC + residual RL + ${chunkMode ? "chunk-critic" : "critic"} best-of-${STEER.n} (ours)` : pixels ? "BC + residual RL from pixels (ours)" : "BC + residual RL (ours)",
    sac: pixels ? "RLPD-SAC from pixels + demos" : "RLPD-SAC from scratch + demos",
  };
  /** Ours with --session-best-of / --chunk-best-of: best-of-N base chunks ranked by the package's (chunk) critic. */
  const STEER_BEST_OF = steerMode ? { best_of: STEER.n, best_of_select: STEER.select } : {};
  /** Result files: from pixels learning-so101-pixels-*, so the state bench's learning-latest.* stays. */
  const NAME = pixels ? "learning-so101-pixels" : "learning";
  /** Work directory per task: demos, BC and sessions (cached between runs). */
  const taskDir = (task: Task) => join(WORK, (pixels ? `so101-${task}-pixels` : task) + (quick ? "-quick" : ""));

  /** What a run with these flags would do (`--plan`): budgets, seeds, BC, each learner's config, where it writes. */
  const plan = () => {
      return {
      robot, obs, launch: LAUNCH, quick, tasks, ...P, seeds: { demos: [0, P.demos - 1], heldOut: [P.evalSeed, P.evalSeed + P.finalEval - 1], session: [P.sessionSeed, P.sessionSeed + P.episodes - 1] },
      aux: Object.fromEntries(tasks.map((t) => [t, auxFor(t)])), ...(AUX_DATA.length ? { auxData: AUX_DATA } : {}), work: Object.fromEntries(tasks.map((t) => [t, taskDir(t)])), results: `bench/results/${NAME}-<date>.{json,md,png}, ${NAME}-latest.*`,
      learner: Object.fromEntries(tasks.map((t) => [t, Object.fromEntries(methods.map((m) => [m, { label: LABEL[m], ...METHOD_CONFIG[m], ...(m === "residual" ? { ...TASK_RESIDUAL[t], ...RES_SET } : {}) }]))])),
    };
  };
  return { quick, robot, obs, pixels, tasks, P, AUX, AUX_DATA, auxFor, STEER, steerMode, chunkMode, methods, LAUNCH, WORK, TARGET, RES_SET, SAC_SET, METHOD_CONFIG, TASK_RESIDUAL, LABEL, STEER_BEST_OF, NAME, taskDir, plan };
}
