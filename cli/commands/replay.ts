/** `rlft replay`: list episodes, replay them in sim, open-loop against a policy, through the node graph, or to a learner. */
import { mkdirSync, existsSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { Command } from "commander";
import { decimal } from "../numberOption.ts";
import { episodeFiles, readEpisodeArrays } from "../../app/dataset.ts";
import { streamEpisodes } from "../../app/trainBc.ts";
import { progress } from "../../app/progress.ts";
import { replayInSim, formatDivergenceTable, plotSimReplay } from "../../data/SimReplay.ts";
import { openLoopEval, formatOpenLoop, plotOpenLoop } from "../../data/OpenLoopEval.ts";
import { writeLinePlot } from "../../data/linePlot.ts";
import { playLogs } from "../../data/LogPlayer.ts";
import { labelEpisode, replayTransitions } from "../../app/learnerReplay.ts";
import { EmbeddedRuntime } from "../../runtime/embedded/EmbeddedRuntime.ts";
import { RecorderNode } from "../../nodes/RecorderNode.ts";
import { ActorNode } from "../../nodes/ActorNode.ts";
import { PolicyActor } from "../../policies/actors/PolicyActor.ts";
import { TOPICS } from "../../contracts/topics.ts";
import { readEpisodeTrace } from "../../data/EpisodeTrace.ts";
import { PolicyPackage } from "../../policies/PolicyPackage.ts";
import { ExperienceBridge } from "../../bridge/ExperienceBridge.ts";

const warn = (m: string) => m && console.warn(`warning: ${m}`);

/** Where plots go: --plot-dir, else beside the episode. */
function plotPath(file: string, dir: string | undefined, suffix: string): string {
  const d = dir ?? resolve(file, "..");
  mkdirSync(d, { recursive: true });
  return join(d, `${basename(file, ".mcap")}.${suffix}.png`);
}

async function sim(files: string[], o: { tolerance: number; plotDir?: string; plot: boolean }): Promise<void> {
  let bad = 0;
  for (const f of files) {
    const r = await replayInSim(f);
    console.log(`\n${f}: replayed ${r.rows.length} joint states, ${r.commands} commands (start from ${r.startFrom})`);
    console.log(formatDivergenceTable(r));
    const ok = r.maxDivergence <= o.tolerance;
    console.log(`max joint divergence ${r.maxDivergence.toExponential(2)} ${ok ? "≤" : ">"} tolerance ${o.tolerance}; recorded ${r.recordedOutcome}${r.recordedSuccess ? " (success)" : ""}, sim ${r.simSuccess ? `success at ${r.simSuccessAt!.toFixed(2)} s` : "no success"}`);
    if (!ok || r.recordedSuccess !== r.simSuccess) bad++;
    if (o.plot) {
      const p = plotPath(f, o.plotDir, "sim");
      await writeLinePlot(plotSimReplay(r, o.tolerance), p);
      console.log(`plot: ${p}`);
    }
  }
  if (files.length > 1) console.log(`\n${files.length - bad}/${files.length} episodes within tolerance with the recorded outcome`);
  if (bad) process.exitCode = 2;
}

async function policy(files: string[], o: { policy: string; residual?: string; sampler?: "graph" | "ts"; plotDir?: string; plot: boolean }): Promise<void> {
  for (const f of files) {
    const r = await openLoopEval(f, { policy: o.policy, residual: o.residual, sampler: o.sampler });
    console.log(`\n${f}`);
    console.log(formatOpenLoop(r));
    if (o.plot) {
      const p = plotPath(f, o.plotDir, "openloop");
      await writeLinePlot(plotOpenLoop(r), p);
      console.log(`plot: ${p}`);
    }
  }
}

async function throughNodes(files: string[], o: { recordTo?: string; policy?: string; topics?: string }): Promise<void> {
  const runtime = await EmbeddedRuntime.create({ clock: "sim", logLevel: "warn" });
  const nodes: { configure(): Promise<void>; activate(): Promise<void>; shutdown(): Promise<void> }[] = [];
  const exclude: string[] = [];
  let recorder: RecorderNode | null = null;
  let actor: PolicyActor | null = null;
  try {
    const first = await readEpisodeTrace(files[0]);
    if (o.recordTo) {
      recorder = new RecorderNode(runtime.createNode("recorder"), { outDir: o.recordTo, chunkBytes: 1 << 20, metadata: { ...first.info, source: `replay --through-nodes of ${files.length} episodes` } });
      nodes.push(recorder);
    }
    if (o.policy) {
      // Shadow mode: the policy answers the recorded observations; its proposals replace the recorded ones.
      actor = await PolicyActor.create(o.policy, { jointNames: first.jointNames, observationNames: first.obsNames, mode: first.info.sampler === "ts" ? "ts" : "graph" });
      nodes.push(new ActorNode(runtime.createNode("policy"), actor, { controlHz: Number(first.info.control_hz ?? 10) }));
      exclude.push(TOPICS.proposedCommand.topic, TOPICS.policyAction.topic);
    }
    for (const n of nodes) await n.configure();
    for (const n of nodes) await n.activate();
    const bar = progress("replay", files.length, { unit: "episodes" });
    let done = 0;
    const r = await playLogs(runtime, files, { exclude, topics: o.topics?.split(","), warn, onEpisode: () => bar.update(++done) });
    bar.stop();
    await recorder?.flush();
    console.log(`republished ${r.messages} messages of ${r.episodes} episodes on the embedded runtime (sim clock = recorded time):`);
    for (const [t, n] of [...r.perTopic].sort()) console.log(`  ${t.padEnd(26)} ${n}`);
    if (o.recordTo) console.log(`the graph's topics were recorded again in ${resolve(o.recordTo)}${o.policy ? ` (with ${actor!.version}'s proposals in shadow mode)` : ""}`);
  } finally {
    for (const n of [...nodes].reverse()) await n.shutdown();
    await actor?.close();
    await runtime.shutdown();
  }
}

async function toLearner(dir: string, files: string[], o: { toLearner: string; learnerKind: string; includeFailures?: boolean; policy?: string; spool?: string }): Promise<void> {
  const labels = [];
  for (const f of files) labels.push(await labelEpisode(f));
  const demos = labels.filter((l) => l.label === "demo");
  const online = labels.filter((l) => l.label === "online");
  console.log(`${files.length} episodes: ${demos.length} demonstrations, ${online.length} online (${online.filter((l) => l.interventionTicks).length} with interventions, ${online.reduce((a, l) => a + l.interventionTicks, 0)} intervention ticks)`);
  if (o.learnerKind === "bc") {
    const { sent, skipped } = await streamEpisodes(dir, o.toLearner, { includeFailures: o.includeFailures });
    console.log(`sent ${sent} episodes to the BC learner at ${o.toLearner} (${skipped} skipped)`);
    return;
  }
  if (!online.length) throw new Error(`${dir} holds no online episodes (none recorded /policy/action); demonstrations reach the online learner as its demo dataset (rlft train-bc --save-dataset, serve --demo_dataset)`);
  const trace = await readEpisodeTrace(online[0].file);
  const pkgDir = o.policy ?? trace.info.policy_package;
  if (!pkgDir || !existsSync(pkgDir)) throw new Error(`--policy <base package> is needed to normalise the executed actions as the robot did (the log names ${trace.info.policy_package || "none"})`);
  const base = await PolicyPackage.load(pkgDir);
  const bridge = await ExperienceBridge.open({
    endpoint: o.toLearner,
    spoolDir: o.spool ?? join(dir, ".replay-spool"),
    robotId: `replay-${basename(resolve(dir))}`,
    configHash: "replay",
    obsNames: base.json.observation.names,
    actionNames: base.json.action.names,
    task: trace.info.task ?? "unknown",
    basePolicyVersion: base.json.version,
    logger: { warn, info: () => undefined },
  });
  try {
    const r = await replayTransitions(online.map((l) => l.file), bridge, base.json.action, { warn });
    const flushed = await bridge.flush({ timeoutMs: 60_000 });
    console.log(`sent ${r.transitions} transitions of ${r.episodes} online episodes (${r.interventions} interventions: ${Object.entries(r.bySource).map(([k, v]) => `${k} ${v}`).join(", ") || "none"}; policy versions ${r.policyVersions.join(", ")}) to ${o.toLearner}; ${flushed ? "all acknowledged" : "not all acknowledged yet (they stay in the spool)"}`);
    if (demos.length) console.log(`${demos.length} demonstrations were not sent: the online learner takes demos as its demo dataset`);
  } finally {
    await bridge.close();
  }
}

/** Registers `replay` on `program`. */
export function registerReplayCommand(program: Command): void {
  program
    .command("replay")
    .description("Replay recorded episodes: list them, in simulation (--sim), open-loop against a policy (--policy), through the node graph (--through-nodes), or to a learner (--to-learner)")
    .argument("<episodes>", "an .mcap episode or a directory of them")
    .option("--sim", "replay in MuJoCo from the recorded start state with the recorded commands; report joint divergence (table + PNG)")
    .option("--tolerance <rad>", "--sim: joint divergence tolerated (rad); exit code 2 when exceeded or the outcome differs", decimal({ min: 0 }), 0.01)
    .option("--policy <dir>", "open-loop evaluation of this policy package on the recorded observations (with --through-nodes: shadow mode; with --to-learner: the base package)")
    .option("--residual <dir>", "--policy: residual package on top")
    .option("--sampler <mode>", "--policy: graph | ts (default: as recorded)")
    .option("--through-nodes", "republish the recorded topics on the embedded runtime with the recorded timestamps")
    .option("--record-to <dir>", "--through-nodes: record the graph's topics again (MCAP)")
    .option("--topics <list>", "--through-nodes: comma-separated topics to republish (default all)")
    .option("--to-learner <endpoint>", "rebuild a learner's buffers from the logs, e.g. tcp://127.0.0.1:5555")
    .option("--learner-kind <kind>", "--to-learner: bc (episodes to train-bc) | online (labelled transitions to serve)", "bc")
    .option("--include-failures", "--to-learner bc: also send failed episodes")
    .option("--no-plot", "skip the PNG plots")
    .option("--plot-dir <dir>", "where plots go (default: beside each episode)")
    .addHelpText(
      "after",
      `
Examples:
  rlft replay runs/demos                                            # list the episodes
  rlft replay runs/demos/episode_000003.mcap --sim                  # divergence table + episode_000003.sim.png
  rlft replay runs/sessions/episode_000010.mcap --policy runs/bc/package
  rlft replay runs/sessions --through-nodes --record-to /tmp/rerecorded
  rlft replay runs/demos --to-learner tcp://127.0.0.1:5555          # to python3 -m rlft_learner train-bc
  rlft replay runs/demo/session/episodes --to-learner tcp://127.0.0.1:5555 --learner-kind online --policy runs/demo/package
`,
    )
    .action(async (dir: string, o) => {
      const files = episodeFiles(dir);
      if (o.toLearner) return toLearner(dir, files, o);
      if (o.throughNodes) return throughNodes(files, o);
      if (o.sim) return sim(files, o);
      if (o.policy) return policy(files, o);
      const rows: string[] = [];
      for (const f of files) {
        const ep = await readEpisodeArrays(f);
        rows.push(`${f}  seed ${ep.seed}  ${ep.outcome.padEnd(8)} ${String(ep.obs.length).padStart(4)} steps${ep.recovered ? "  (recovered after a crash)" : ""}`);
      }
      console.log(rows.join("\n"));
      console.log(`${rows.length} episodes`);
    });
}
