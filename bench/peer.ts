/**
 * `npm run bench:peer`: rlft on a benchmark nobody here wrote — gym-hil's PandaPickCube (the MuJoCo Franka task of
 * LeRobot's HIL-SERL, state observations), run as the robot through `driver.kind: gym` (launch/gym_hil.yaml) — and
 * LeRobot's own SAC / HIL-SERL next to it where it runs on this machine.
 *   - rlft: scripted demos → diffusion BC → an online session (BC + residual RL, the learner's defaults, the scripted
 *     operator of rlft_learner/gym_hil_scripts.py taking over when the episode stalls) → held-out success of the BC
 *     base and of the final residual package (Wilson 95%), learner updates/s, operator share of steps, wall time.
 *   - LeRobot's own SAC / HIL-SERL in its own venv (.venv-lerobot, bench/peer_lerobot.sh: the same 50 scripted demos
 *     as its offline dataset, the same online budget of --online episodes, its final policy on the same --eval
 *     held-out seeds): with --lerobot the bench runs bench/peer_lerobot.sh after rlft's side; with --lerobot-from DIR
 *     it reports a finished bench/peer_lerobot.sh run's results from DIR (summary.json, eval.json, run.json; the
 *     report says so). Either way it also tries to import LeRobot next to the project's torch (learner/peers-aside.txt,
 *     .venv/peers/ or $RLFT_LEROBOT_DIR) and records which import fails and why.
 * Writes bench/results/peer-<date>.{json,md,png} and peer-latest.*. Work (demos, BC, session) goes to bench/work/peer/.
 *
 * Usage: npm run bench:peer [-- --demos 50] [-- --bc-steps 2000] [-- --online 50] [-- --eval 200] [-- --quick]
 *                           [-- --lerobot | --lerobot-from bench/work/lerobot]
 * Needs gym-hil (scripts/setup-python.mjs installs it aside, learner/peers-aside.txt); MUJOCO_GL defaults to osmesa
 * (headless, CPU; egl is faster where a GPU driver is installed).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, copyFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { loadLaunch, type LaunchConfig } from "../launch/LaunchConfig.ts";
import { gitRevision } from "../launch/nodeFactory.ts";
import { mergeSummaries, runEpisodes, type EpisodeSummary } from "../app/runEpisodes.ts";
import { trainBc } from "../app/trainBc.ts";
import { REPO_ROOT, findPython, learnerEnv, withAsidePeer } from "../app/python.ts";
import { runSession } from "../app/session.ts";
import { percentile } from "../data/stats.ts";
import { benchArgs, resultJson } from "./args.ts";
import { rate, type Rate } from "./learningReport.ts";

const { flag, num, arg } = benchArgs();
if (flag("--help") || flag("-h")) {
  console.log(readFileSync(new URL(import.meta.url), "utf8").split("*/")[0]);
  process.exit(0);
}
const quick = flag("--quick");
const P = {
  demos: num("--demos", quick ? 10 : 50),
  bcSteps: num("--bc-steps", quick ? 300 : 2000),
  online: num("--online", quick ? 5 : 50),
  eval: num("--eval", quick ? 10 : 200),
  evalSeed: 100_000,
  sessionSeed: 2000,
};
const LAUNCH = join(REPO_ROOT, "launch", "gym_hil.yaml");
const lerobotRun = flag("--lerobot");
const lerobotFrom = arg("--lerobot-from", "");
if (lerobotRun && lerobotFrom) {
  console.error("bench:peer: --lerobot runs LeRobot's side now, --lerobot-from reports a finished run: give one of them");
  process.exit(1);
}
const WORK = join(REPO_ROOT, "bench", "work", "peer");
const RESULTS = join(REPO_ROOT, "bench", "results");
/** The learning curve: rolling success and operator share over the session's episodes, held-out levels as lines. */
const PLOT = String.raw`
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
r = json.load(open(sys.argv[1]))
c = r["rlft"]["curve"]
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot([p["episode"] for p in c], [100 * p["rollingSuccess"] for p in c], label="rlft BC + residual RL: success, last 20 online episodes")
ax.plot([p["episode"] for p in c], [100 * p["interventionRate"] for p in c], label="scripted operator's share of steps, last 20", ls="--")
lr = r["lerobot"].get("run")
if lr:
    ax.plot([p["episode"] for p in lr["curve"]], [100 * p["rollingSuccess"] for p in lr["curve"]], color="tab:red", label="LeRobot SAC / HIL-SERL (+ demos): success, last 20 online episodes")
    if lr.get("heldOut"):
        ax.axhline(100 * lr["heldOut"]["rate"], color="tab:red", ls=":", label="LeRobot final policy, held-out")
ax.axhline(100 * r["rlft"]["bc"]["heldOut"]["rate"], color="gray", ls=":", label="BC base, held-out")
if r["rlft"]["final"]:
    ax.axhline(100 * r["rlft"]["final"]["heldOut"]["rate"], color="green", ls=":", label="final residual package, held-out")
ax.set_xlabel("online episode"); ax.set_ylabel("%"); ax.set_ylim(-2, 102)
ax.set_title("gym-hil PandaPickCube: rlft (driver.kind gym) and LeRobot SAC / HIL-SERL" if lr else "gym-hil PandaPickCube through driver.kind gym (LeRobot SAC: did not run here)", fontsize=9)
ax.legend(fontsize=7, loc="lower right"); fig.tight_layout(); fig.savefig(sys.argv[2], dpi=110)
`;

const t0 = performance.now();
const log = (m: string) => console.log(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(5)} s] ${m}`);
const python = findPython();
// gym-hil as scripts/setup-python.mjs installs it (learner/peers-aside.txt), for every process this bench starts.
process.env.PYTHONPATH = withAsidePeer("gym-hil").PYTHONPATH;
process.env.MUJOCO_GL ??= "osmesa";
const env = learnerEnv();

const probe = spawnSync(python, ["-c", "import gym_hil, gymnasium; print(gymnasium.__version__)"], { env, encoding: "utf8" });
if (probe.status !== 0) {
  console.error(`bench:peer needs gym-hil in the learner's Python (${python}): run node scripts/setup-python.mjs (it installs gym-hil aside, learner/peers-aside.txt) (${probe.stderr.trim().split("\n").at(-1)})`);
  process.exit(1);
}

function launch(over: (c: LaunchConfig) => void): LaunchConfig {
  const c = loadLaunch(LAUNCH);
  c.camera.enabled = false;
  over(c);
  return c;
}

// ---------------------------------------------------------------------------------------------------------------------
// rlft: demos, BC, session, held-out evaluations.
mkdirSync(WORK, { recursive: true });
const demos = join(WORK, "demos");
rmSync(demos, { recursive: true, force: true });
log(`rlft: collecting ${P.demos} scripted-expert demonstrations`);
const demoRun = await runEpisodes(launch((c) => (c.actor = { ...c.actor, kind: "expert" })), { count: P.demos, seed: 0, label: "collect", recordTo: demos, metadata: { source: "scripted_expert" } });
const bcDir = join(WORK, "bc");
rmSync(bcDir, { recursive: true, force: true });
log(`rlft: training diffusion BC (${P.bcSteps} steps)`);
const bcT0 = performance.now();
const npz = join(bcDir, "demos.npz");
const bc = await trainBc({ data: demos, out: bcDir, steps: P.bcSteps, quiet: true, saveDataset: npz });
const bcSeconds = (performance.now() - bcT0) / 1000;

async function heldOut(label: string, pkg: string, residual?: string): Promise<EpisodeSummary> {
  log(`rlft: ${label} on ${P.eval} held-out seeds from ${P.evalSeed}`);
  const cfg = launch((c) => {
    c.actor = { ...c.actor, kind: "policy", package: pkg, residual };
    c.recorder.enabled = false;
  });
  // A run that stops early (an arm fault: e.g. the gym process did not answer within driver.step_timeout_sec on an
  // overloaded machine) is resumed on the seeds after the episodes it finished, in a fresh stack, twice at most; the
  // episode the fault ended counts as it ended (outcome abort).
  const parts: EpisodeSummary[] = [];
  for (let done = 0, attempt = 0; done < P.eval && attempt < 3; attempt++) {
    if (attempt > 0) log(`rlft: ${label}: the run stopped after ${done} of ${P.eval} episodes; resuming on seeds ${P.evalSeed + done}.. in a fresh stack`);
    const s = (await runEpisodes(cfg, { count: P.eval - done, seed: P.evalSeed + done, label })).summary;
    parts.push(s);
    done += s.episodes;
    if (s.episodes === 0) break;
  }
  return mergeSummaries(parts);
}
const bcEval = await heldOut("BC base", bc.packageDir);

log(`rlft: online session, ${P.online} episodes, BC + residual RL with the scripted operator`);
const sessionDir = join(WORK, "session");
rmSync(sessionDir, { recursive: true, force: true });
const curve: { episode: number; rollingSuccess: number; interventionRate: number; updates: number; updatesPerSec: number }[] = [];
const sT0 = performance.now();
const session = await runSession({
  config: launch((c) => {
    c.actor = { ...c.actor, kind: "policy", package: bc.packageDir };
    c.operator = { ...c.operator, enabled: true, kind: "scripted" };
  }),
  learner: true,
  episodes: P.online,
  seed: P.sessionSeed,
  out: sessionDir,
  pace: true,
  learnerConfig: { demo_dataset: npz, seed: 1, keep_packages: 100_000, ...(quick ? { learning_starts: 50, critic_warmup_updates: 50, publish_every: 50 } : {}) },
  onStatus: (s) => {
    curve.push({ episode: s.episode, rollingSuccess: s.rollingSuccess, interventionRate: s.interventionRate, updates: s.learnerUpdates, updatesPerSec: s.updatesPerSec });
    if (s.episode % 10 === 0 || s.episode === s.episodes) log(`rlft: session ${s.episode}/${s.episodes}, success(20) ${(100 * s.rollingSuccess).toFixed(0)}%, operator ${(100 * s.interventionRate).toFixed(0)}%, ${s.learnerUpdates} updates (${s.updatesPerSec.toFixed(0)}/s)`);
  },
});
const sessionSeconds = (performance.now() - sT0) / 1000;
const steps = session.episodes.reduce((a, e) => a + e.steps, 0);
const operatorSteps = session.episodes.reduce((a, e) => a + e.interventionSteps, 0);
const finalEval = session.finalPolicyDir ? await heldOut("BC + residual RL", bc.packageDir, session.finalPolicyDir) : null;
const ups = curve.map((c) => c.updatesPerSec).filter((v) => v > 0);

// ---------------------------------------------------------------------------------------------------------------------
// LeRobot: does its SAC / HIL-SERL pipeline load here?
const version = [...readFileSync(join(REPO_ROOT, "learner", "peers-aside.txt"), "utf8").matchAll(/^lerobot==(\S+)/gm)].map((m) => m[1])[0];
const lerobotDir = process.env.RLFT_LEROBOT_DIR ?? join(REPO_ROOT, ".venv", "peers", `lerobot-${version}`);
const modules = ["lerobot.policies.sac.modeling_sac", "lerobot.rl.gym_manipulator", "lerobot.rl.learner", "lerobot.rl.actor"];
const lerobot = modules.map((m) => {
  if (!existsSync(join(lerobotDir, "lerobot"))) return { module: m, ok: false, error: `LeRobot ${version} is not installed at ${lerobotDir} (node scripts/setup-python.mjs installs it; or set RLFT_LEROBOT_DIR)` };
  const r = spawnSync(python, ["-c", `import ${m}`], { env: { ...env, PYTHONPATH: [lerobotDir, env.PYTHONPATH].filter(Boolean).join(":") }, encoding: "utf8", timeout: 300_000 });
  return { module: m, ok: r.status === 0, error: r.status === 0 ? "" : (r.stderr.trim().split("\n").at(-1) ?? `exit ${r.status}`) };
});
log(`LeRobot ${version}: ${lerobot.map((l) => `${l.module} ${l.ok ? "imports" : `fails: ${l.error}`}`).join("; ")}`);

/** LeRobot's own run (bench/peer_lerobot.sh) in its own venv: its summary, held-out evaluation and run record. */
interface LeRobotRun {
  source: string;
  commit: string;
  date: string;
  demos: number;
  budget: number;
  episodes: number;
  envSteps: number;
  onlineSuccess: Rate;
  operatorShare: number;
  learnerUpdates: number;
  updatesPerSecMedian: number;
  updatesPerSecOverall: number;
  onlineSeconds: number;
  heldOut: Rate | null;
  heldOutFirstSeed: number;
  curve: { episode: number; rollingSuccess: number }[];
}
function readLeRobotRun(dir: string, source: string): LeRobotRun {
  const read = (f: string) => {
    const file = join(dir, f);
    if (!existsSync(file)) throw new Error(`bench:peer: ${file} is missing: run bench/peer_lerobot.sh first (or --lerobot)`);
    return JSON.parse(readFileSync(file, "utf8"));
  };
  const s = read("summary.json");
  const run = read("run.json");
  const ev = existsSync(join(dir, "eval.json")) ? read("eval.json") : null;
  const rewards: number[] = s.episode_rewards;
  const wins = rewards.map((r) => r > 0.5);
  return {
    source,
    commit: run.commit,
    date: run.date,
    demos: 50,
    budget: run.episode_budget,
    episodes: s.episodes,
    envSteps: s.env_steps,
    onlineSuccess: rate(s.successes, s.episodes),
    // LeRobot's gym_hil path takes interventions only from a keyboard or gamepad (InputsControlWrapper); none here.
    operatorShare: 0,
    learnerUpdates: s.learner_update_loops,
    updatesPerSecMedian: s.learner_update_hz_median,
    updatesPerSecOverall: s.learner_update_loops / run.online_seconds,
    onlineSeconds: run.online_seconds,
    heldOut: ev ? rate(ev.successes, ev.episodes) : null,
    heldOutFirstSeed: ev?.first_seed ?? 0,
    curve: wins.map((_, i) => ({ episode: i + 1, rollingSuccess: wins.slice(Math.max(0, i - 19), i + 1).filter(Boolean).length / Math.min(20, i + 1) })),
  };
}
let lerobotResult: LeRobotRun | null = null;
if (lerobotRun) {
  log(`LeRobot: bench/peer_lerobot.sh ${P.online} episodes, then ${P.eval} held-out episodes (its own venv)`);
  const r = spawnSync(join(REPO_ROOT, "bench", "peer_lerobot.sh"), [String(P.online), "2400", String(P.eval)], { cwd: REPO_ROOT, stdio: "inherit", env: process.env });
  if (r.status !== 0) console.error(`bench:peer: bench/peer_lerobot.sh exited ${r.status}; the report has no LeRobot run`);
  else lerobotResult = readLeRobotRun(join(REPO_ROOT, "bench", "work", "lerobot"), "this run (bench/peer_lerobot.sh)");
} else if (lerobotFrom) {
  lerobotResult = readLeRobotRun(lerobotFrom, `a separate bench/peer_lerobot.sh run (${lerobotFrom})`);
}

// ---------------------------------------------------------------------------------------------------------------------
// Report.
const toRate = (s: EpisodeSummary): Rate => rate(s.successes, s.episodes);
const result = {
  bench: "peer",
  commit: gitRevision(),
  date: new Date().toISOString(),
  command: `npm run bench:peer -- ${process.argv.slice(2).join(" ")}`.trim(),
  task: "gym_hil/PandaPickCube-v0 (gym-hil 0.1.14, state observations, random block position), launch/gym_hil.yaml",
  params: P,
  rlft: {
    demos: { episodes: demoRun.summary.episodes, successes: demoRun.summary.successes },
    bc: { steps: P.bcSteps, finalLoss: bc.finalLoss, seconds: bcSeconds, heldOut: toRate(bcEval), meanSteps: bcEval.meanSteps },
    session: {
      episodes: session.episodes.length,
      onlineSuccess: rate(session.episodes.filter((e) => e.outcome === "success").length, session.episodes.length),
      operatorShare: steps ? operatorSteps / steps : 0,
      learnerUpdates: session.learnerUpdates,
      updatesPerSecMedian: ups.length ? percentile(ups, 50) : 0,
      updatesPerSecOverall: session.learnerUpdates / sessionSeconds,
      wallSeconds: sessionSeconds,
      finalVersion: session.finalVersion,
      transitions: session.transitions,
    },
    final: finalEval ? { heldOut: toRate(finalEval), meanSteps: finalEval.meanSteps } : null,
    curve,
  },
  lerobot: { version, dir: lerobotDir, imports: lerobot, ran: lerobotResult !== null, run: lerobotResult },
  wallSeconds: (performance.now() - t0) / 1000,
};
const pct = (r: Rate) => `${(100 * r.rate).toFixed(1)}% [${(100 * r.lo).toFixed(1)}, ${(100 * r.hi).toFixed(1)}] (n=${r.n})`;
const md = [
  `# bench:peer — gym-hil PandaPickCube (commit ${result.commit})`,
  "",
  `\`${result.command}\`, ${result.date}. Task: ${result.task}.`,
  "",
  "| method | held-out success (Wilson 95%) | online success | operator share | learner updates/s (median / overall) | wall |",
  "|---|---|---|---|---|---|",
  `| rlft BC base (${P.demos} scripted demos, ${P.bcSteps} steps) | ${pct(result.rlft.bc.heldOut)} | — | — | — | BC ${bcSeconds.toFixed(0)} s |`,
  `| rlft BC + residual RL, ${P.online} online episodes, scripted operator | ${finalEval ? pct(result.rlft.final!.heldOut) : "no residual package was published"} | ${pct(result.rlft.session.onlineSuccess)} | ${(100 * result.rlft.session.operatorShare).toFixed(1)}% | ${result.rlft.session.updatesPerSecMedian.toFixed(0)} / ${result.rlft.session.updatesPerSecOverall.toFixed(0)} | session ${sessionSeconds.toFixed(0)} s |`,
  lerobotResult
    ? `| LeRobot ${version} SAC / HIL-SERL, ${lerobotResult.demos} demos offline + ${lerobotResult.episodes} online episodes, no operator | ${lerobotResult.heldOut ? pct(lerobotResult.heldOut) : "not evaluated"} | ${pct(lerobotResult.onlineSuccess)} | ${(100 * lerobotResult.operatorShare).toFixed(1)}% | ${lerobotResult.updatesPerSecMedian.toFixed(1)} / ${lerobotResult.updatesPerSecOverall.toFixed(1)} (${lerobotResult.learnerUpdates} updates) | online ${lerobotResult.onlineSeconds.toFixed(0)} s |`
    : `| LeRobot ${version} SAC / HIL-SERL | did not run (below) | — | — | — | — |`,
  "",
  ...(lerobotResult
    ? [`LeRobot's row: ${lerobotResult.source}, commit ${lerobotResult.commit}, ${lerobotResult.date}; its own venv (bench/peer/lerobot-requirements.txt), state-only env without rendering (bench/peer_lerobot.py), ${lerobotResult.envSteps} env steps; held-out seeds from ${lerobotResult.heldOutFirstSeed}.`, ""]
    : []),
  `LeRobot ${version} on this machine: ${lerobot.map((l) => `\`import ${l.module}\` ${l.ok ? "works" : `fails: \`${l.error}\``}`).join("; ")}.`,
  "",
].join("\n");
mkdirSync(RESULTS, { recursive: true });
const stamp = result.date.slice(0, 19).replace(/[:T]/g, "-");
const base = join(RESULTS, `peer-${stamp}`);
writeFileSync(`${base}.json`, resultJson(result));
writeFileSync(`${base}.md`, md);
const plot = spawnSync(python, ["-c", PLOT, `${base}.json`, `${base}.png`], { env, encoding: "utf8" });
if (plot.status !== 0) console.error(`plot failed: ${plot.stderr.trim().split("\n").at(-1)}`);
for (const ext of ["json", "md", "png"]) if (existsSync(`${base}.${ext}`)) copyFileSync(`${base}.${ext}`, join(RESULTS, `peer-latest.${ext}`));
console.log(md);
log(`wrote ${base}.{json,md,png} and peer-latest.*`);

