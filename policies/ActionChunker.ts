/**
 * Action chunking (Zhao et al., "ACT", 2023; Chi et al., "Diffusion Policy", 2023): predict H actions,
 * execute K of them, re-plan. Optionally the next chunk is requested `prefetchTicks` ticks before the current one
 * runs out (async inference, as LeRobot's policy server does); its first `prefetchTicks` actions belong to ticks
 * that have already passed and are skipped. The prefetched chunk is always awaited at the boundary, so a
 * lock-stepped simulation gets the same actions on every run.
 */

/** Anything that turns an observation history into an action chunk (DiffusionPolicy, or a stub in tests). */
export interface ChunkSource {
  sampleChunk(obsHistory: number[][]): Promise<{ actions: number[][] }>;
}

/** Options of {@link ActionChunker}. */
export interface ActionChunkerOptions {
  /** Observations per policy input (policy.json observation.history). */
  history: number;
  /** H: actions per chunk (policy.json action.horizon). */
  horizon: number;
  /** K: actions executed per chunk (policy.json action.execute_steps). */
  executeSteps: number;
  /** Start the next chunk this many ticks before the boundary (0 = re-plan at the boundary). Needs prefetchTicks + K ≤ H. */
  prefetchTicks?: number;
}

interface Pending {
  promise: Promise<{ actions: number[][] }>;
  /** reset() generation it was requested in; a result from an older episode is dropped. */
  generation: number;
}

/** Turns a per-tick observation stream into per-tick actions from chunks. */
export class ActionChunker {
  readonly #source: ChunkSource;
  readonly #history: number;
  readonly #horizon: number;
  readonly #k: number;
  readonly #prefetch: number;
  #obs: number[][] = [];
  #chunk: number[][] | undefined;
  /** Index into #chunk of the action for the next tick. */
  #index = 0;
  /** Actions of #chunk executed so far. */
  #used = 0;
  #pending: Pending | undefined;
  #generation = 0;

  constructor(source: ChunkSource, options: ActionChunkerOptions) {
    const { history, horizon, executeSteps, prefetchTicks = 0 } = options;
    if (!(Number.isInteger(history) && history >= 1)) throw new RangeError(`ActionChunker: history must be an integer ≥ 1, found ${history}`);
    if (!(Number.isInteger(executeSteps) && executeSteps >= 1 && executeSteps <= horizon)) throw new RangeError(`ActionChunker: executeSteps must be in [1, horizon ${horizon}], found ${executeSteps}`);
    if (!(Number.isInteger(prefetchTicks) && prefetchTicks >= 0 && prefetchTicks < executeSteps && prefetchTicks + executeSteps <= horizon)) {
      throw new RangeError(`ActionChunker: prefetchTicks must be an integer in [0, executeSteps) with prefetchTicks + executeSteps ≤ horizon (${horizon}), found ${prefetchTicks}`);
    }
    this.#source = source;
    this.#history = history;
    this.#horizon = horizon;
    this.#k = executeSteps;
    this.#prefetch = prefetchTicks;
  }

  /** Forgets the history and the current chunk; an in-flight prediction is dropped when it arrives. Call at episode start. */
  reset(): void {
    this.#obs = [];
    this.#chunk = undefined;
    this.#index = 0;
    this.#used = 0;
    this.#pending = undefined;
    this.#generation++;
  }

  /** The action for this tick, given this tick's observation. Rejects if the policy fails (the caller holds the robot). */
  async next(obs: readonly number[]): Promise<number[]> {
    this.#push(obs);
    const generation = this.#generation;
    if (this.#chunk === undefined || this.#used >= this.#k) {
      let chunk: number[][];
      let offset = 0;
      const pending = this.#pending;
      this.#pending = undefined;
      if (pending !== undefined && pending.generation === generation) {
        chunk = (await pending.promise).actions;
        offset = this.#prefetch;
      } else {
        chunk = (await this.#source.sampleChunk(this.#snapshot())).actions;
      }
      if (generation !== this.#generation) throw new Error("ActionChunker: reset() during next(); this tick's action was dropped");
      if (chunk.length < this.#horizon) throw new RangeError(`ActionChunker: expected a chunk of ${this.#horizon} actions, found ${chunk.length}`);
      this.#chunk = chunk;
      this.#index = offset;
      this.#used = 0;
    }
    if (this.#prefetch > 0 && this.#used === this.#k - this.#prefetch && this.#pending === undefined) {
      // Request the next chunk from the history up to this tick; its action[0] is for this tick, so at the
      // boundary `prefetch` ticks later the chunk is entered at index `prefetch`.
      const promise = this.#source.sampleChunk(this.#snapshot());
      promise.catch(() => undefined); // surfaced when awaited at the boundary; dropped if reset() came first
      this.#pending = { promise, generation };
    }
    const action = [...this.#chunk[this.#index]];
    this.#index++;
    this.#used++;
    return action;
  }

  #push(obs: readonly number[]): void {
    if (this.#obs.length === 0) {
      // Episode start: pad the history with copies of the first observation.
      for (let i = 0; i < this.#history; i++) this.#obs.push([...obs]);
    } else {
      this.#obs.push([...obs]);
      while (this.#obs.length > this.#history) this.#obs.shift();
    }
  }

  #snapshot(): number[][] {
    return this.#obs.map((o) => [...o]);
  }
}
