/** The scripted demonstrator of a simulated robot's task: rlft_arm5's ScriptedExpert or the SO-101's So101Expert. */
import { ScriptedExpert } from "./ScriptedExpert.ts";
import { So101Expert } from "./so101/So101Expert.ts";
import { taskSpec, type SimRobotName, type So101TaskName, type TaskName } from "./tasks.ts";

/** What the actor and the scripted operator need of a demonstrator. */
export interface TaskExpert {
  reset(seed: number): void;
  /** Absolute joint targets (the robot's joint order) for this tick's observation. */
  act(obs: { names: readonly string[]; values: readonly number[] }): number[];
}

/** Options of {@link createScriptedExpert}. */
export interface TaskExpertOptions {
  /** Default rlft_arm5. */
  robot?: SimRobotName;
  task: TaskName;
  /** In [0, 1]; default 0.7. */
  quality?: number;
  seed?: number;
  /** Control ticks per second (the SO-101 expert plans in SI speeds; rlft_arm5's is tuned for 10 Hz). Default 10. */
  controlHz?: number;
}

/** The expert for `opts.robot`'s `opts.task`; an unknown robot or task is one clear error. */
export function createScriptedExpert(opts: TaskExpertOptions): TaskExpert {
  const spec = taskSpec(opts.robot, opts.task);
  if (spec.robot === "so101") return new So101Expert({ task: opts.task as So101TaskName, quality: opts.quality, seed: opts.seed, controlHz: opts.controlHz });
  return new ScriptedExpert({ task: opts.task, quality: opts.quality, seed: opts.seed });
}
