/**
 * expert: the scripted expert as an actor (demonstration collection). It sees only /observation,
 * like a policy would, so the same node could drive a real arm with object poses from perception.
 */
import { ScriptedExpert } from "../../sim/ScriptedExpert.ts";
import type { Actor } from "./Actor.ts";
import type { TaskName } from "../../sim/tasks.ts";

/** Options of the expert actor. */
export interface ExpertActorOptions {
  task: TaskName;
  quality: number;
  jointNames: readonly string[];
}

/** Adapts ScriptedExpert to the Actor interface. */
export class ExpertActor implements Actor {
  readonly jointNames: readonly string[];
  #expert: ScriptedExpert;

  constructor(opts: ExpertActorOptions) {
    this.jointNames = opts.jointNames;
    this.#expert = new ScriptedExpert({ task: opts.task, quality: opts.quality, seed: 0 });
  }

  reset(seed: number): void {
    this.#expert.reset(seed);
  }

  act(obs: { names: string[]; values: number[] }): number[] {
    return this.#expert.act(obs);
  }
}
