/** The `rlft` command tree: each subcommand lives in cli/commands/ and has --help with an example. */
import { Command } from "commander";
import { registerEpisodeCommands } from "./commands/episodes.ts";
import { registerDataCommands } from "./commands/data.ts";
import { registerDemoCommand } from "./commands/demo.ts";
import { registerSessionCommand } from "./commands/session.ts";
import { registerTrainVlaCommand } from "./commands/trainVla.ts";
import { registerCalibrateCommand } from "./commands/calibrate.ts";
import { registerNodeCommand } from "./commands/node.ts";
import { registerLabelCommand } from "./commands/label.ts";
import { registerDatasetCommand } from "./commands/dataset.ts";
import { registerKeysCommand } from "./commands/keys.ts";
import { registerRecapCommand } from "./commands/recap.ts";
import { registerInspectEpisodeCommand } from "./commands/inspectEpisode.ts";
import { registerServoCommands } from "./commands/servo.ts";
import { registerUrSimCommand } from "./commands/urSim.ts";

/** The `rlft` program with every subcommand registered (rlft.ts runs it; tests walk its options). */
export function buildProgram(): Command {
  const program = new Command();
  program
    .name("rlft")
    .description("Fine-tune robot policies in the real world: launch a policy, collect and replay episodes, train and evaluate.")
    .version("0.1.0")
    .showHelpAfterError()
    .addHelpText(
      "after",
      `
Examples:
  rlft demo                                                   # collect → train → eval in simulation
  rlft collect --task push_cube --episodes 50 --out runs/demos
  rlft train-bc --data runs/demos --out runs/bc/policy
  rlft eval --policy runs/bc/policy --task push_cube --episodes 50 --seed 1000
  rlft launch launch/sim_push.yaml --policy runs/bc/policy
  rlft replay runs/demos --to-learner tcp://127.0.0.1:5555
  rlft inspect runs/demos/episode_000000.mcap
  rlft session launch/sim_push.yaml --learner --operator ui   # a person supervises in the web UI
  rlft label runs/session/episodes --out runs/labels          # frames for the success classifier
  rlft replay runs/demos/episode_000000.mcap --sim
  rlft dataset export runs/demos --format lerobot --out exports/demos
  rlft recap launch/sim_push.yaml --iterations 2 --episodes-per-iteration 50
  rlft inspect-episode runs/recap/iter_1/episodes/episode_000000.mcap --value runs/recap/iter_1/learner/package
`,
    );

  registerEpisodeCommands(program);
  registerDataCommands(program);
  registerSessionCommand(program);
  registerDemoCommand(program);
  registerTrainVlaCommand(program);
  registerCalibrateCommand(program);
  registerNodeCommand(program);
  registerLabelCommand(program);
  registerDatasetCommand(program);
  registerKeysCommand(program);
  registerRecapCommand(program);
  registerInspectEpisodeCommand(program);
  registerServoCommands(program);
  registerUrSimCommand(program);
  return program;
}
