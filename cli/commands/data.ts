/** `rlft replay`, `rlft train-bc`, `rlft inspect`: episode logs as data. */
import type { Command } from "commander";
import { integer } from "../numberOption.ts";
import { resolve } from "node:path";
import { trainBc } from "../../app/trainBc.ts";
import { registerReplayCommand } from "./replay.ts";
import { registerInspectCommand } from "./inspect.ts";

/** Registers replay, train-bc and inspect on `program`. */
export function registerDataCommands(program: Command): void {
  program
    .command("train-bc")
    .description("Train a diffusion BC policy on recorded demonstrations (starts the Python learner, streams the episodes to it)")
    .requiredOption("--data <dir>", "directory of .mcap demonstrations")
    .requiredOption("--out <dir>", "run directory; the policy package goes to OUT/package")
    .option("--steps <n>", "gradient steps (learner default 20000 when omitted)", integer({ min: 1 }))
    .option("--include-failures", "also train on failed episodes")
    .addHelpText("after", "\nExample:\n  rlft train-bc --data data/demos --out runs/bc\n")
    .action(async (o) => {
      const r = await trainBc({ data: o.data, out: o.out, steps: o.steps, includeFailures: o.includeFailures });
      console.log(`trained on ${r.episodes} episodes, final loss ${r.finalLoss.toFixed(4)}`);
      console.log(`policy package: ${resolve(r.packageDir)}`);
    });
  registerReplayCommand(program);
  registerInspectCommand(program);
}
