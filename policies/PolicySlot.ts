/**
 * Hot swap of a policy (ARCHITECTURE.md §5): `offer(dir)` loads and verifies a new policy off the control path
 * (create + warm-up); the policy node calls `swapPoint()` at a chunk boundary, where a ready policy replaces the
 * current one atomically. A policy that fails to load is reported and the current one stays. The replaced policy's
 * session is closed after the swap.
 *
 * Warm-up requires finite outputs (issue 24 item 2: a diverged learner published all-NaN residuals, signed, and a
 * robot swapped one in): the inference worker refuses a model whose warm-up output holds NaN or Inf
 * (`non_finite_output`), and `probe`, when given, runs the loaded policy on probe inputs; any non-finite value refuses
 * it. Either way the current policy stays.
 */

/** What a slot holds: anything with a version and a session to close. */
export interface SwappablePolicy {
  readonly version: string;
  close(): Promise<void>;
}

/** Result of {@link PolicySlot.offer}. */
export type OfferResult = { ok: true; version: string } | { ok: false; reason: string };

/** Options of {@link PolicySlot}. */
export interface PolicySlotOptions<P extends SwappablePolicy> {
  /** Loads and verifies the policy in a directory (e.g. `(dir) => ResidualPolicy.create(dir, {...})`). */
  load(dir: string): Promise<P>;
  /** The policy running now, if any. */
  initial?: P;
  /** Runs a loaded policy on probe inputs (no side effects); a NaN or Inf among the values refuses it. */
  probe?: (policy: P) => Promise<ArrayLike<number>>;
  logger?: { warn(msg: string): void; info(msg: string): void };
}

/** Holds the current policy and at most one staged replacement. */
export class PolicySlot<P extends SwappablePolicy> {
  #current: P | undefined;
  #staged: P | undefined;
  #opts: PolicySlotOptions<P>;
  #closed = false;
  /** Last load failure, for status displays. */
  lastError: string | null = null;

  constructor(options: PolicySlotOptions<P>) {
    this.#opts = options;
    this.#current = options.initial;
  }

  /** The policy to run this tick. */
  get current(): P | undefined {
    return this.#current;
  }

  /** Version staged for the next swap point, if any. */
  get stagedVersion(): string | undefined {
    return this.#staged?.version;
  }

  /** Loads the policy in `dir` without touching the current one; on success it waits for the next {@link swapPoint}. */
  async offer(dir: string): Promise<OfferResult> {
    const logger = this.#opts.logger ?? console;
    let next: P;
    try {
      next = await this.#opts.load(dir);
      const probe = this.#opts.probe;
      if (probe) {
        let values: ArrayLike<number>;
        try {
          values = await probe(next);
        } catch (e) {
          await next.close().catch(() => undefined);
          throw new Error(`its probe run failed: ${(e as Error).message}`);
        }
        const bad = Array.from(values).filter((x) => !Number.isFinite(x)).length;
        if (bad > 0) {
          await next.close().catch(() => undefined);
          throw new Error(`${bad} of ${values.length} outputs on probe inputs are NaN or infinite — the network's weights are not finite (a diverged training run?)`);
        }
      }
    } catch (e) {
      const reason = `policy in ${dir} rejected, keeping ${this.#current?.version ?? "no policy"}: ${(e as Error).message}`;
      this.lastError = reason;
      logger.warn(`PolicySlot: ${reason}`);
      return { ok: false, reason };
    }
    if (this.#closed) {
      await next.close();
      return { ok: false, reason: "the slot is closed" };
    }
    const replaced = this.#staged;
    this.#staged = next;
    // A newer offer replaces one that never reached a swap point.
    if (replaced !== undefined) void replaced.close().catch((e: Error) => logger.warn(`PolicySlot: closing superseded ${replaced.version}: ${e.message}`));
    logger.info(`PolicySlot: ${next.version} ready; swapping at the next chunk boundary`);
    return { ok: true, version: next.version };
  }

  /** Called at a chunk boundary: swaps in the staged policy, if any; returns true when it did. Never blocks. */
  swapPoint(): boolean {
    const next = this.#staged;
    if (next === undefined) return false;
    const old = this.#current;
    this.#current = next;
    this.#staged = undefined;
    if (old !== undefined) void old.close().catch((e: Error) => (this.#opts.logger ?? console).warn(`PolicySlot: closing ${old.version}: ${e.message}`));
    return true;
  }

  /** Closes the current and staged policies. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [this.#current, this.#staged].filter((p): p is P => p !== undefined);
    this.#current = this.#staged = undefined;
    await Promise.all(all.map((p) => p.close()));
  }
}
