/**
 * policy: a diffusion policy package as an actor. The package is verified and checked against the
 * robot's observation and action names at load (a mismatch is refused there, never at run time);
 * inference runs in a worker thread; actions come from chunks (predict H, execute K).
 */
import { DiffusionPolicy } from "../policies/DiffusionPolicy.ts";
import { assertCompatible } from "../policies/PolicyPackage.ts";
import { ActionChunker } from "../policies/ActionChunker.ts";
import type { Actor, ActionInfo } from "./ActorNode.ts";

/** Options of the policy actor. */
export interface PolicyActorOptions {
  jointNames: readonly string[];
  observationNames: readonly string[];
  providers?: readonly string[];
  mode?: "graph" | "ts";
  threads?: number;
}

/** Adapts DiffusionPolicy + ActionChunker to the Actor interface. */
export class PolicyActor implements Actor {
  readonly jointNames: readonly string[];
  readonly policy: DiffusionPolicy;
  #chunker: ActionChunker;
  /** Latency of each chunk (ms), for status and bench. */
  readonly chunkMs: number[] = [];
  #last: ActionInfo | null = null;

  private constructor(policy: DiffusionPolicy, jointNames: readonly string[]) {
    this.policy = policy;
    this.jointNames = jointNames;
    const j = policy.package.json;
    const source = {
      sampleChunk: async (h: number[][]) => {
        const c = await policy.sampleChunk(h);
        if (this.chunkMs.length < 100_000) this.chunkMs.push(c.inferenceMs);
        return c;
      },
    };
    this.#chunker = new ActionChunker(source, { history: j.observation.history, horizon: j.action.horizon, executeSteps: j.action.execute_steps });
  }

  /** Loads, verifies and checks the package in `dir` against the robot. */
  static async create(dir: string, opts: PolicyActorOptions): Promise<PolicyActor> {
    const policy = await DiffusionPolicy.create(dir, { providers: opts.providers, mode: opts.mode, threads: opts.threads });
    try {
      assertCompatible(policy.package, { observationNames: opts.observationNames, actionNames: opts.jointNames });
    } catch (e) {
      await policy.close();
      throw e;
    }
    return new PolicyActor(policy, opts.jointNames);
  }

  /** The package's version string. */
  get version(): string {
    return this.policy.package.json.version;
  }

  reset(_seed: number): void {
    this.#chunker.reset();
  }

  async act(obs: { names: string[]; values: number[] }): Promise<number[]> {
    const action = await this.#chunker.next(obs.values);
    const base = normaliseAction(this.policy.package.json.action, action);
    this.#last = { version: this.version, base, residual: base.map(() => 0), action: base };
    return action;
  }

  lastAction(): ActionInfo | null {
    return this.#last;
  }

  /** Stops the inference worker. */
  close(): Promise<void> {
    return this.policy.close();
  }
}

/** Raw joint targets → [-1, 1] with the package's action min/max (the inverse of the sampler's unnormalisation). */
export function normaliseAction(spec: { min: readonly number[]; max: readonly number[] }, raw: readonly number[]): number[] {
  return raw.map((a, i) => {
    const span = spec.max[i] - spec.min[i];
    return span > 0 ? (2 * (a - spec.min[i])) / span - 1 : 0;
  });
}
