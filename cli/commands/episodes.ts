/** `rlft collect`, `rlft eval` and `rlft launch`: run episodes of the stack with different actors. */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { decimal, integer } from "../numberOption.ts";
import { loadLaunch, setTask, type LaunchConfig } from "../../launch/LaunchConfig.ts";
import { runEpisodes, formatRate, type EpisodeSummary } from "../../app/runEpisodes.ts";
import { fitCameraToPolicy } from "../../app/policyCamera.ts";
import { packageCameras } from "../../policies/PolicyPackage.ts";
import { noiseScaleProblem } from "../../policies/gaussian.ts";

/** The launch file collect and eval start from when none is given. */
export const DEFAULT_LAUNCH = "launch/sim_push.yaml";

function baseConfig(file: string | undefined): LaunchConfig {
  const path = file ?? DEFAULT_LAUNCH;
  if (!existsSync(path)) throw new Error(`Launch file ${path} not found (run from the repository root, or pass --launch FILE)`);
  return loadLaunch(path);
}

function printSummary(s: EpisodeSummary, json: boolean): void {
  if (json) {
    console.log(JSON.stringify(s));
    return;
  }
  console.log(`success rate: ${formatRate(s)}`);
  console.log(`outcomes: ${Object.entries(s.outcomes).map(([k, v]) => `${k} ${v}`).join(", ")}; mean steps ${s.meanSteps.toFixed(1)}`);
  console.log(`sim time ${s.simSeconds.toFixed(1)} s in ${s.wallSeconds.toFixed(1)} s wall (${(s.simSeconds / s.wallSeconds).toFixed(1)}× real time)`);
  const safety = Object.entries(s.safetyEvents);
  if (safety.length) console.log(`safety events: ${safety.map(([k, v]) => `${k} ${v}`).join(", ")}`);
  if (s.actorErrors) console.log(`actor errors (arm held): ${s.actorErrors}`);
}

/** Registers collect, eval and launch on `program`. */
export function registerEpisodeCommands(program: Command): void {
  program
    .command("collect")
    .description("Record scripted-expert demonstrations in simulation, one MCAP file per episode")
    .requiredOption("--out <dir>", "where the MCAP episodes and index.json go")
    .option("--task <task>", "rlft_arm5: reach | push_cube | peg_insert | multi_push; so101 (--launch launch/sim_so101.yaml): reach | push_cube | pick_place | multi_push; a gym launch file: the env's task name (default: the launch file's task)")
    .option("--episodes <n>", "number of episodes", integer({ min: 1 }), 50)
    .option("--seed <n>", "first seed (episode i of --out uses seed+i; a directory with episodes is resumed after them)", integer({ min: 0 }), 0)
    .option("--quality <q>", "expert quality in [0,1]: lower is noisier, hesitant, sometimes failing", decimal({ min: 0, max: 1 }), 0.7)
    .option("--no-camera", "skip the ray-cast camera (faster)")
    .option("--launch <file>", "launch file to start from", DEFAULT_LAUNCH)
    .option("--json", "print the summary as JSON")
    .addHelpText("after", "\nExamples:\n  rlft collect --task push_cube --episodes 50 --out runs/demos\n  rlft collect --task multi_push --episodes 200 --quality 1 --out runs/multi   # with a camera frame every tick, for train-vla\n  rlft collect --launch launch/sim_so101.yaml --task pick_place --episodes 50 --out runs/so101_pick   # the SO-101\n")
    .action(async (o) => {
      const cfg = baseConfig(o.launch);
      if (o.task !== undefined) setTask(cfg, o.task);
      cfg.actor = { ...cfg.actor, kind: "expert", expert_quality: o.quality };
      cfg.camera.enabled = o.camera;
      // multi_push demos train a VLA: a frame every control tick, so every recorded action has its image.
      if (cfg.task === "multi_push" && cfg.driver.kind === "sim") cfg.camera.rate_hz = cfg.control_hz;
      cfg.recorder.enabled = true;
      const { summary } = await runEpisodes(cfg, { count: o.episodes, seed: o.seed, label: "collect", recordTo: o.out, metadata: { source: "scripted_expert" }, continueSeeds: true });
      printSummary(summary, o.json);
      if (!o.json) console.log(`episodes written to ${resolve(o.out)}`);
    });

  program
    .command("eval")
    .description("Evaluate a policy package in simulation and print its success rate with a Wilson 95% interval")
    .requiredOption("--policy <dir>", "policy package directory (the BC base)")
    .option("--residual <dir>", "residual package trained on that base by rlft session")
    .option("--task <task>", "rlft_arm5: reach | push_cube | peg_insert | multi_push; so101 (--launch launch/sim_so101.yaml): reach | push_cube | pick_place | multi_push; a gym launch file: the env's task name (default: the launch file's task)")
    .option("--instruction <text>", "multi_push: the instruction of every episode (the VLA reads it; the goal is taken from its colour and side words). Default: each seed's own")
    .option("--episodes <n>", "number of episodes", integer({ min: 1 }), 50)
    .option("--seed <n>", "first seed; keep evaluation seeds disjoint from training seeds", integer({ min: 0 }), 1000)
    .option("--sampler <mode>", "graph (whole DDIM loop in one ONNX graph) | ts (TS scheduler)", "graph")
    .option("--record-to <dir>", "record the evaluation episodes as MCAP here")
    .option("--no-camera", "skip the ray-cast camera (faster)")
    .option("--launch <file>", "launch file to start from", DEFAULT_LAUNCH)
    .option("--best-of <n>", "sample n base chunks per re-plan and run one (actor.best_of)", integer({ min: 1, max: 64 }), 1)
    .option("--best-of-select <how>", "critic (the residual package's critic ranks their first action) | chunk_critic (its chunk critic ranks their executed steps) | critics (both critics vote: standardised scores summed) | consensus (the medoid chunk)", "critic")
    .option("--cfg-beta <beta>", "RECAP package: classifier-free guidance weight instead of the package's (actor.cfg_beta)", decimal({ min: 0, max: 10 }))
    .option("--noise-scale <s>", "sampling temperature of the base policy: its initial noise × s, in [0, 2] (actor.noise_scale)", decimal())
    .option("--json", "print the summary as JSON")
    .addHelpText("after", "\nExamples:\n  rlft eval --policy runs/demo/package --task push_cube --episodes 50 --seed 1000\n  rlft eval --policy runs/demo/package --residual runs/demo/session/policies/<version> --best-of 8 --best-of-select critic\n  rlft eval --policy runs/recap/iter_1/learner/package --task peg_insert --cfg-beta 2 --noise-scale 0.25\n  rlft eval --policy runs/vla/package --task multi_push --instruction \"push the blue cube to the left target\" --episodes 20\n  rlft eval --policy runs/demo/package --residual runs/demo/session/policies/<version> --episodes 50\n")
    .action(async (o) => {
      const cfg = baseConfig(o.launch);
      if (o.task !== undefined) setTask(cfg, o.task);
      if (!["critic", "chunk_critic", "critics", "consensus"].includes(o.bestOfSelect)) throw new Error(`--best-of-select: critic, chunk_critic, critics or consensus; got ${o.bestOfSelect}`);
      if (o.cfgBeta !== undefined && !(Number.isFinite(o.cfgBeta) && o.cfgBeta >= 0 && o.cfgBeta <= 10)) throw new Error(`--cfg-beta: a guidance weight in [0, 10]; got ${o.cfgBeta}`);
      const badScale = o.noiseScale !== undefined ? noiseScaleProblem(o.noiseScale) : null;
      if (badScale) throw new Error(`--noise-scale: ${badScale}`);
      cfg.actor = { ...cfg.actor, kind: "policy", package: o.policy, residual: o.residual, sampler: o.sampler, best_of: o.bestOf, best_of_select: o.bestOfSelect, cfg_beta: o.cfgBeta, ...(o.noiseScale !== undefined ? { noise_scale: o.noiseScale } : {}) };
      cfg.camera.enabled = o.camera && !!o.recordTo;
      cfg.recorder.enabled = !!o.recordTo;
      if (o.instruction) cfg.instruction = o.instruction;
      // A pixel policy sees the launch file's cameras: they render (or capture) whether or not the episodes are recorded.
      if ((await packageCameras(o.policy)).length > 0) cfg.camera.enabled = o.camera;
      await fitCameraToPolicy(cfg); // a VLA: a frame every control tick, as in its training data
      const { summary } = await runEpisodes(cfg, { count: o.episodes, seed: o.seed, label: "eval", recordTo: o.recordTo });
      printSummary(summary, o.json);
    });

  program
    .command("launch")
    .description("Start the whole stack from a launch file and run its episodes")
    .argument("<file>", "launch YAML file")
    .option("--policy <dir>", "policy package (overrides actor.package)")
    .option("--episodes <n>", "number of episodes (overrides episodes.count)", integer({ min: 1 }))
    .option("--seed <n>", "first seed (overrides episodes.seed)", integer({ min: 0 }))
    .option("--port <path>", "serial port of a servo-bus arm (overrides driver.port)")
    .option("--max-steps <n>", "episode length limit in control ticks (overrides episodes.max_steps)", integer({ min: 1 }))
    .option("--record-to <dir>", "where MCAP episodes go (overrides recorder.out)")
    .option("--json", "print the summary as JSON")
    .addHelpText("after", "\nExamples:\n  rlft launch launch/sim_push.yaml --policy runs/demo/package --episodes 5\n  rlft launch launch/so100.yaml --port /dev/ttyACM0 --policy runs/so100/package\n")
    .action(async (file: string, o) => {
      const cfg = loadLaunch(file);
      if (o.policy) cfg.actor = { ...cfg.actor, kind: "policy", package: o.policy };
      if (await fitCameraToPolicy(cfg)) console.error(`note: ${cfg.actor.package} is a VLA: the camera runs at the control rate (${cfg.control_hz} Hz), as in its training data`);
      if (o.port) {
        if (cfg.driver.kind !== "feetech" && cfg.driver.kind !== "dynamixel") throw new Error(`--port: ${file} uses driver.kind ${cfg.driver.kind}, which has no serial port (only feetech and dynamixel do)`);
        cfg.driver.port = o.port;
      }
      if (o.maxSteps) cfg.episodes.max_steps = o.maxSteps;
      if (o.recordTo) cfg.recorder.out = o.recordTo;
      // Ctrl-C on a real arm: end the episode as aborted, then the drivers deactivate (hold or torque off as configured).
      const stop = new AbortController();
      const onSigint = () => {
        console.error("\nstopping: aborting the episode, deactivating the arm, closing the recording ...");
        stop.abort();
      };
      process.once("SIGINT", onSigint);
      const { summary } = await runEpisodes(cfg, { count: o.episodes ?? cfg.episodes.count, seed: o.seed ?? cfg.episodes.seed, label: "episodes", signal: stop.signal }).finally(() => process.off("SIGINT", onSigint));
      printSummary(summary, o.json);
      if (cfg.recorder.enabled && !o.json) console.log(`episodes recorded in ${resolve(cfg.recorder.out)}`);
    });
}
