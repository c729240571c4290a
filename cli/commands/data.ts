/** `rlft replay`, `rlft train-bc`, `rlft inspect`: episode logs as data. */
import type { Command } from "commander";
import { integer } from "../numberOption.ts";
import { resolve } from "node:path";
import { trainBc } from "../../app/trainBc.ts";
import { parseOverrides } from "../../app/learnerOverrides.ts";
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
    .option("--cameras <names>", "a policy that sees these cameras (comma-separated, e.g. front,wrist): their recorded frames are trained on")
    .option("--state <names>", "observation columns the policy sees: comma-separated names, or 'joints' (every q.<joint>, what a real arm measures); default: all of /observation")
    .option("--aux <names>", "training-only targets (comma-separated, e.g. cube.x,cube.y,target.x,target.y): recorded columns only a simulator knows, which the camera encoders learn to estimate as an auxiliary loss; the policy never receives them (needs --cameras and --state)")
    .option("--aux-data <dirs>", "more episode dirs (comma-separated: noisy demos, the policy's own rollouts) whose frames train only the --aux position head, never imitated")
    .option("--learner-set <key=value...>", "learner train-bc settings on top of its defaults, e.g. batch_size=64 image_shift=4")
    .addHelpText("after", "\nExample:\n  rlft train-bc --data runs/demos --out runs/bc\n  rlft train-bc --data runs/so101_push --out runs/pix --cameras front,wrist --state joints --steps 6000\n  rlft train-bc --data runs/so101_push --out runs/pix --cameras front,wrist --state joints --aux cube.x,cube.y,target.x,target.y\n")
    .action(async (o) => {
      const list = (v: string | undefined) => (v === undefined ? undefined : v.split(",").map((s) => s.trim()).filter(Boolean));
      const state = o.state === "joints" ? "joints" : list(o.state);
      const r = await trainBc({ data: o.data, out: o.out, steps: o.steps, includeFailures: o.includeFailures, cameras: list(o.cameras), state, aux: list(o.aux), auxData: list(o.auxData), learner: parseOverrides(o.learnerSet, "--learner-set") });
      console.log(`trained on ${r.episodes} episodes, final loss ${r.finalLoss.toFixed(4)}`);
      console.log(`policy package: ${resolve(r.packageDir)}`);
    });
  registerReplayCommand(program);
  registerInspectCommand(program);
}
