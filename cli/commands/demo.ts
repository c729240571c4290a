/**
 * `rlft demo`: the main job on a fresh machine. Collect scripted demonstrations in simulation, train a
 * diffusion BC policy with the Python learner, evaluate it on unseen seeds, print a summary table.
 */
import type { Command } from "commander";
import { mkdirSync, writeFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadLaunch } from "../../launch/LaunchConfig.ts";
import { findPython, tryPipInstall, PythonNotFoundError, APT_LINE } from "../python.ts";
import { runEpisodes, formatRate, type EpisodeSummary } from "../runEpisodes.ts";
import { trainBc } from "../trainBc.ts";
import { DEFAULT_LAUNCH } from "./episodes.ts";

function ensurePython(): string {
  try {
    return findPython();
  } catch (e) {
    if (!(e instanceof PythonNotFoundError)) throw e;
    console.error("The learner's Python modules are missing; trying pip install --user ...");
    if (tryPipInstall()) return findPython();
    throw new PythonNotFoundError(`${e.message}\npip could not install them (offline or no pip). On Debian/Ubuntu run:\n  ${APT_LINE}\nthen run npm run demo again.`);
  }
}

/** Registers demo on `program`. */
export function registerDemoCommand(program: Command): void {
  program
    .command("demo")
    .description("Collect demonstrations → train a diffusion BC policy → evaluate it, all in simulation on the embedded runtime")
    .option("--out <dir>", "run directory (demos, package, eval episodes, summary.json)", "runs/demo")
    .option("--demos <n>", "demonstration episodes (seeds 0..n-1)", Number, 50)
    .option("--eval-episodes <n>", "evaluation episodes (seeds from --eval-seed, disjoint from training)", Number, 50)
    .option("--eval-seed <n>", "first evaluation seed", Number, 1000)
    .option("--quality <q>", "scripted expert quality in [0,1]", Number, 0.7)
    .option("--steps <n>", "BC gradient steps (learner default when omitted)", Number)
    .option("--launch <file>", "launch file", DEFAULT_LAUNCH)
    .addHelpText("after", "\nExample:\n  rlft demo                    # or: npm run demo\n  rlft demo --demos 20 --eval-episodes 20 --out runs/quick\n")
    .action(async (o) => {
      const t0 = performance.now();
      const py = ensurePython();
      const out = resolve(o.out);
      const demos = join(out, "demos");
      rmSync(demos, { recursive: true, force: true });
      mkdirSync(out, { recursive: true });
      console.log(`rlft demo → ${out}  (learner: ${py})`);

      console.log(`\n[1/3] collecting ${o.demos} scripted demonstrations (push_cube, expert quality ${o.quality})`);
      const cfg = loadLaunch(o.launch);
      cfg.task = "push_cube";
      cfg.actor = { ...cfg.actor, kind: "expert", expert_quality: o.quality };
      const collect = await runEpisodes(cfg, { count: o.demos, seed: 0, label: "collect", recordTo: demos, metadata: { source: "scripted_expert" } });
      console.log(`      expert success ${formatRate(collect.summary)}`);

      console.log(`\n[2/3] training a diffusion policy on the successful demonstrations`);
      const t1 = performance.now();
      const bc = await trainBc({ data: demos, out });
      const trainSec = (performance.now() - t1) / 1000;
      console.log(`      final loss ${bc.finalLoss.toFixed(4)} after ${bc.steps} steps on ${bc.episodes} episodes (${trainSec.toFixed(0)} s)`);

      console.log(`\n[3/3] evaluating on ${o.evalEpisodes} unseen seeds (${o.evalSeed}..${o.evalSeed + o.evalEpisodes - 1})`);
      const ecfg = loadLaunch(o.launch);
      ecfg.task = "push_cube";
      ecfg.actor = { ...ecfg.actor, kind: "policy", package: bc.packageDir };
      ecfg.camera.enabled = false;
      const evalDir = join(out, "eval");
      rmSync(evalDir, { recursive: true, force: true });
      const ev = await runEpisodes(ecfg, { count: o.evalEpisodes, seed: o.evalSeed, label: "eval", recordTo: evalDir });

      const total = (performance.now() - t0) / 1000;
      printTable({ collect: collect.summary, evaluation: ev.summary, bc, demos, evalDir, total });
      writeFileSync(
        join(out, "summary.json"),
        JSON.stringify({ collect: collect.summary, train: { final_loss: bc.finalLoss, steps: bc.steps, episodes: bc.episodes, seconds: trainSec, package: bc.packageDir }, eval: ev.summary, total_seconds: total }, null, 2),
      );
    });
}

function printTable(r: { collect: EpisodeSummary; evaluation: EpisodeSummary; bc: Awaited<ReturnType<typeof trainBc>>; demos: string; evalDir: string; total: number }): void {
  const rows: [string, string][] = [
    ["demonstrations", `${r.collect.episodes} episodes, expert success ${(100 * r.collect.rate).toFixed(0)}%, ${r.bc.episodes} used for training`],
    ["training", `${r.bc.steps} steps, final loss ${r.bc.finalLoss.toFixed(4)}`],
    ["BC success rate", formatRate(r.evaluation)],
    ["eval outcomes", Object.entries(r.evaluation.outcomes).map(([k, v]) => `${k} ${v}`).join(", ")],
    ["demo episodes", r.demos],
    ["eval episodes", r.evalDir],
    ["policy package", resolve(r.bc.packageDir)],
    ["total time", `${(r.total / 60).toFixed(1)} min`],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  const a = "─".repeat(w + 2);
  const b = "─".repeat(Math.max(...rows.map(([, v]) => v.length)) + 2);
  console.log(`\n┌${a}┬${b}┐`);
  for (const [k, v] of rows) console.log(`│ ${k.padEnd(w)} │ ${v.padEnd(b.length - 2)} │`);
  console.log(`└${a}┴${b}┘`);
}
