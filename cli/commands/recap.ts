/** `rlft recap`: RECAP iterations (collect → value → advantages → policy → evaluate) with a report per iteration. */
import type { Command } from "commander";
import { decimal, integer } from "../numberOption.ts";
import { resolve } from "node:path";
import { loadLaunch, setTask } from "../../launch/LaunchConfig.ts";
import { reportMarkdown, runRecap } from "../../app/recap.ts";
import { parseOverrides } from "../../app/learnerOverrides.ts";

/** Registers recap on `program`. */
export function registerRecapCommand(program: Command): void {
  program
    .command("recap")
    .description("RECAP (π*0.6): collect with the operator → value on all data → advantage indicators → conditioned policy → evaluate; a report per iteration")
    .argument("<launch>", "launch file (task, control rate, operator timing)")
    .option("--iterations <n>", "RECAP iterations", integer({ min: 1 }), 2)
    .option("--episodes-per-iteration <n>", "episodes collected per iteration (policy + scripted operator)", integer({ min: 1 }), 50)
    .option("--eval-episodes <n>", "held-out evaluation episodes per policy", integer({ min: 1 }), 50)
    .option("--eval-seed <n>", "first evaluation seed (disjoint from demo and collection seeds)", integer({ min: 0 }), 1000)
    .option("--collect-seed <n>", "first collection seed", integer({ min: 0 }), 3000)
    .option("--task <task>", "reach | push_cube | peg_insert (overrides the launch file)")
    .option("--demos <dir>", "demonstration episodes (MCAP); collected with the scripted expert when omitted")
    .option("--demo-episodes <n>", "demonstrations to collect when --demos is omitted", integer({ min: 1 }), 30)
    .option("--quality <q>", "scripted expert quality of collected demonstrations", decimal({ min: 0, max: 1 }), 0.7)
    .option("--pretrained <dir>", "pre-trained BC package every iteration fine-tunes from; trained on the demos when omitted")
    .option("--bc-steps <n>", "BC pre-training steps when --pretrained is omitted", integer({ min: 1 }))
    .option("--no-operator", "collect without the scripted operator (no interventions)")
    .option("--learner-set <key=value...>", "learner recap overrides, e.g. n_step=0 positive_fraction=0.4 cfg_beta=1.5 steps=1000")
    .option("--out <dir>", "run directory (demos, iter_N/{episodes,learner,eval}, report.md, report.json)", "runs/recap")
    .addHelpText(
      "after",
      "\nExamples:\n  rlft recap launch/sim_push.yaml --iterations 2 --episodes-per-iteration 50\n  rlft recap launch/sim_push.yaml --task peg_insert --pretrained runs/bc/package --demos runs/demos --learner-set cfg_beta=1.5\n\nEach iteration writes OUT/iter_N/report.json and the learner's value calibration plot; OUT/report.md has the table.\n",
    )
    .action(async (file: string, o) => {
      const cfg = loadLaunch(file);
      if (o.task) setTask(cfg, o.task);
      const report = await runRecap({
        config: cfg,
        out: o.out,
        iterations: o.iterations,
        episodesPerIteration: o.episodesPerIteration,
        evalEpisodes: o.evalEpisodes,
        evalSeed: o.evalSeed,
        collectSeed: o.collectSeed,
        demos: o.demos,
        demoEpisodes: o.demoEpisodes,
        expertQuality: o.quality,
        pretrained: o.pretrained,
        bcSteps: o.bcSteps,
        learner: parseOverrides(o.learnerSet, "--learner-set"),
        operator: o.operator,
      });
      console.log("\n" + reportMarkdown(report));
      console.log(`report: ${resolve(o.out, "report.md")}`);
    });
}
