/**
 * bench:recap's flags (bench/recap.ts), read and checked in one place: which robot and observations, tasks, budgets,
 * seeds, the sampler sweeps, the learner's recap config and where the results go. Kept apart from the bench so the
 * checks (and `--plan`) run without loading the robot stack.
 */
import { join, resolve } from "node:path";
import { parseOverrides } from "../app/learnerOverrides.ts";
import { taskSpec } from "../sim/tasks.ts";
import { noiseScaleProblem } from "../policies/gaussian.ts";
import { benchArgs } from "./args.ts";
import { SO101_PIXELS_LAUNCH, robotAndObs } from "./learningArgs.ts";

export type RecapTask = "peg_insert" | "push_cube" | "pick_place";

/** Every setting of a bench:recap run, from its command line; throws a one-line error naming the fix for bad flags. */
export function recapSettings(argv: string[] = process.argv.slice(2)) {
  const { flag, arg, args, num } = benchArgs(argv);
  const quick = flag("--quick");
  const { robot, obs } = robotAndObs(arg); // as bench:learning
  const pixels = obs === "pixels";
  const ALL: readonly RecapTask[] = pixels ? ["push_cube", "pick_place"] : ["peg_insert", "push_cube"];
  const taskArg = arg("--task", ALL[0]);
  if (taskArg !== "all" && !ALL.includes(taskArg as RecapTask)) throw new Error(`--task: ${ALL.join(", ")} or all for --robot ${robot}; got ${taskArg}`);
  const tasks: RecapTask[] = taskArg === "all" ? [...ALL] : [taskArg as RecapTask];
  // From pixels every episode renders both cameras and runs the pixel sampler per chunk: budgets sized for hours, not a day.
  const P = {
    // Pixels: bench:pixels' demos (100 at quality 1) and pixel BC budget; the mixed quality comes from the BC policy's
    // own episodes with the operator.
    demos: num("--demos", quick ? (pixels ? 4 : 10) : pixels ? 100 : 40),
    quality: num("--quality", pixels ? 1 : 0.5),
    bcSteps: num("--bc-steps", quick ? (pixels ? 60 : 300) : 3000),
    mixed: num("--mixed", quick ? (pixels ? 4 : 10) : 150),
    mixedSeed: num("--mixed-seed", 3000),
    evalEpisodes: num("--eval", quick ? (pixels ? 4 : 10) : pixels ? 100 : 300),
    evalSeed: num("--eval-seed", 1000),
    fineTuneSteps: num("--steps", quick ? (pixels ? 30 : 200) : pixels ? 3000 : 6000),
    valueSteps: num("--value-steps", quick ? (pixels ? 30 : 200) : 2000),
    cfgBeta: num("--cfg-beta", 2.5),
    sweepSeed: num("--sweep-seed", 5000),
    sweepEpisodes: num("--sweep-episodes", quick ? 5 : pixels ? 30 : 100),
    iterations: num("--iterations", 1),
  };
  if (!(Number.isInteger(P.iterations) && P.iterations >= 1)) throw new Error(`--iterations: an integer >= 1; got ${P.iterations}`);
  for (const [f, v] of [["--demos", P.demos], ["--mixed", P.mixed], ["--eval", P.evalEpisodes], ["--sweep-episodes", P.sweepEpisodes]] as const)
    if (!(Number.isInteger(v) && v >= 1)) throw new Error(`${f}: an integer >= 1; got ${v}`);
  // Guidance weights tried on validation seeds (--sweep-seed.., disjoint from the eval seeds); the best one is then
  // evaluated on the held-out eval seeds. A single value skips the sweep.
  const BETAS = arg("--beta-sweep", quick ? "" : pixels ? "1,2.5" : "1,1.5,2,2.5,3").split(",").filter(Boolean).map(Number);
  if (BETAS.some((b) => !Number.isFinite(b) || b < 0 || b > 10)) throw new Error(`--beta-sweep: comma-separated guidance weights in [0, 10]; got ${arg("--beta-sweep", "")}`);
  // Sampling temperatures tried on the same validation seeds, for every policy alike.
  const TEMPS = arg("--temperature-sweep", quick ? "" : pixels ? "1,0.5" : "1,0.75,0.5,0.25").split(",").filter(Boolean).map(Number);
  const badTemperature = TEMPS.map(noiseScaleProblem).find((p) => p !== null);
  if (badTemperature) throw new Error(`--temperature-sweep: comma-separated sampling temperatures; ${badTemperature}`);
  if (!TEMPS.length) TEMPS.push(1);
  /** Pixel BC's training-only position-head targets (trainSo101Bc aux): the task's sim-only names, or none. */
  const AUX = arg("--aux", pixels ? "task" : "none");
  if (AUX !== "task" && AUX !== "none") throw new Error(`--aux: task (the task's sim-only cube/target names as BC's training-only targets) or none; got ${AUX}`);
  if (!pixels && AUX !== "none") throw new Error("--aux: training-only targets for the pixel BC's camera encoders; it needs --robot so101 --obs pixels");
  const auxFor = (task: RecapTask): string[] => (pixels && AUX === "task" ? [...taskSpec("so101", task).privileged] : []);
  // Demo, mixed (every iteration's), validation and held-out seeds never overlap: what a policy is evaluated on, it
  // was not trained or tuned on.
  {
    const ranges: [string, number, number][] = [["demo", 0, P.demos], ["held-out (--eval-seed)", P.evalSeed, P.evalEpisodes], ["validation (--sweep-seed)", P.sweepSeed, P.sweepEpisodes]];
    for (let it = 1; it <= P.iterations; it++) ranges.push([`iteration ${it} collection (--mixed-seed)`, P.mixedSeed + 1000 * (it - 1), P.mixed]);
    for (let i = 0; i < ranges.length; i++) for (let j = i + 1; j < ranges.length; j++) {
      const [a, a0, an] = ranges[i], [b, b0, bn] = ranges[j];
      if (a0 < b0 + bn && b0 < a0 + an) throw new Error(`the ${a} seeds ${a0}..${a0 + an - 1} overlap the ${b} seeds ${b0}..${b0 + bn - 1}: move --eval-seed, --sweep-seed or --mixed-seed`);
    }
  }
  // The bench's demos are the scripted expert's: their successful episodes are forced positive like operator corrections
  // (learner positive_sources; π*0.6 labels demos by their advantage instead: --recap-set positive_sources= ).
  // Quick from pixels: small batches, so the encoders' fine-tune finishes in minutes on a CPU.
  const recapSet: Record<string, unknown> = { positive_sources: "scripted_expert", ...(quick && pixels ? { batch_size: 32 } : {}), ...parseOverrides(args("--recap-set"), "--recap-set") };
  const LAUNCH = pixels ? SO101_PIXELS_LAUNCH : "launch/sim_push.yaml";
  const WORK = resolve(arg("--work", "bench/work"));
  /** Targets: π*0.6's headline on the state bench (≤ 0.5× the failures); issue 27's from pixels (≤ 0.6×). */
  const TARGET = { throughput: 1.5, failure: pixels ? 0.6 : 0.5 };
  /** Result files: from pixels recap-so101-pixels-*, so the state bench's recap-latest.* stays. */
  const NAME = pixels ? "recap-so101-pixels" : "recap";
  /** Work directory per task: demos, BC, mixed data and the fine-tunes (cached between runs). */
  const taskDir = (task: RecapTask) => join(WORK, (pixels ? `so101-${task}-pixels-recap` : `recap-${task}`) + (quick ? "-quick" : ""));
  /** What a run with these flags would do (`--plan`): budgets, seeds, sweeps, the learner config, where it writes. */
  const plan = () => ({
    robot, obs, launch: LAUNCH, quick, tasks, ...P, betas: BETAS, temperatures: TEMPS,
    seeds: {
      demos: [0, P.demos - 1], heldOut: [P.evalSeed, P.evalSeed + P.evalEpisodes - 1], validation: [P.sweepSeed, P.sweepSeed + P.sweepEpisodes - 1],
      collection: Array.from({ length: P.iterations }, (_, i) => [P.mixedSeed + 1000 * i, P.mixedSeed + 1000 * i + P.mixed - 1]),
    },
    aux: Object.fromEntries(tasks.map((t) => [t, auxFor(t)])), work: Object.fromEntries(tasks.map((t) => [t, taskDir(t)])),
    learner: { steps: P.fineTuneSteps, value_steps: P.valueSteps, ...recapSet }, targets: TARGET,
    results: `bench/results/${NAME}-<date>.{json,md,png}, ${NAME}-latest.*`,
  });
  return { flag, quick, robot, obs, pixels, tasks, P, BETAS, TEMPS, AUX, auxFor, recapSet, LAUNCH, WORK, TARGET, NAME, taskDir, plan };
}
