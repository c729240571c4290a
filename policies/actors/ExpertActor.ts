/**
 * expert: the scripted expert as an actor (demonstration collection). It sees only /observation,
 * like a policy would, so the same node could drive a real arm with object poses from perception.
 */
import { createScriptedExpert, type TaskExpert } from "../../sim/createExpert.ts";
import type { Actor } from "./Actor.ts";
import type { SimRobotName, TaskName } from "../../sim/tasks.ts";

/** Options of the expert actor. */
export interface ExpertActorOptions {
  task: TaskName;
  quality: number;
  jointNames: readonly string[];
  /** The simulated robot (default rlft_arm5). */
  robot?: SimRobotName;
  /** Control ticks per second (default 10). */
  controlHz?: number;
}

/** Adapts the robot's scripted expert to the Actor interface. */
export class ExpertActor implements Actor {
  readonly jointNames: readonly string[];
  #expert: TaskExpert;

  constructor(opts: ExpertActorOptions) {
    this.jointNames = opts.jointNames;
    this.#expert = createScriptedExpert({ robot: opts.robot, task: opts.task, quality: opts.quality, seed: 0, controlHz: opts.controlHz });
  }

  reset(seed: number): void {
    this.#expert.reset(seed);
  }

  act(obs: { names: string[]; values: number[] }): number[] {
    return this.#expert.act(obs);
  }
}
