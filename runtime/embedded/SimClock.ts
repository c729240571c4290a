/**
 * Stepped simulation clock: time moves only when the simulation calls advance()/runUntil(),
 * so a run is deterministic and as fast as the CPU allows. Timers fire in due-time order
 * (ties: creation order) and async callbacks are awaited before time moves on.
 */
import type { SteppableClock, Time, Timer } from "../Runtime.ts";

/** A timer callback; a returned promise holds sim time until it settles. */
export type TimerCallback = () => void | Promise<void>;

/** A clock that can host timers (both embedded clocks implement it). */
export interface TimerHost {
  createTimer(periodSec: number, cb: TimerCallback, label?: string): Timer;
}

/** Checks a timer period and returns it in integer nanoseconds. */
export function periodToNs(periodSec: number, label = "timer"): number {
  if (!Number.isFinite(periodSec) || periodSec <= 0) {
    throw new Error(`Invalid period for ${label}: expected a positive number of seconds, got ${periodSec}`);
  }
  const ns = Math.round(periodSec * 1e9);
  if (ns < 1) throw new Error(`Invalid period for ${label}: ${periodSec} s is shorter than 1 ns`);
  return ns;
}

/** Nanoseconds → ROS 2 stamp. */
export function nsToStamp(ns: number): Time {
  const sec = Math.floor(ns / 1e9);
  return { sec, nanosec: Math.round(ns - sec * 1e9) };
}

interface SimTimer {
  id: number;
  periodNs: number;
  dueNs: number;
  cb: TimerCallback;
  label: string;
  cancelled: boolean;
}

/** Options of a SimClock. */
export interface SimClockOptions {
  /** Start time in seconds (default 0). */
  startSec?: number;
}

/** The stepped sim clock. */
export class SimClock implements SteppableClock, TimerHost {
  readonly kind = "sim" as const;
  #nowNs: number;
  #timers: SimTimer[] = [];
  #nextId = 0;
  #chain: Promise<void> = Promise.resolve();

  constructor(opts: SimClockOptions = {}) {
    this.#nowNs = Math.round((opts.startSec ?? 0) * 1e9);
  }

  /** Now, in seconds. */
  now(): number {
    return this.#nowNs / 1e9;
  }

  /** Now, in integer nanoseconds. */
  nowNs(): number {
    return this.#nowNs;
  }

  /** Now as a ROS 2 stamp. */
  stamp(): Time {
    return nsToStamp(this.#nowNs);
  }

  /** A periodic timer; first fires one period from now. */
  createTimer(periodSec: number, cb: TimerCallback, label = "timer"): Timer {
    const periodNs = periodToNs(periodSec, label);
    const t: SimTimer = { id: this.#nextId++, periodNs, dueNs: this.#nowNs + periodNs, cb, label, cancelled: false };
    this.#timers.push(t);
    return {
      periodSec,
      cancel: () => {
        t.cancelled = true;
        this.#timers = this.#timers.filter((x) => x !== t);
      },
    };
  }

  /** Moves time forward by dtSec, firing due timers in order. Calls are queued, never interleaved. */
  advance(dtSec: number): Promise<void> {
    if (!Number.isFinite(dtSec) || dtSec < 0) {
      return Promise.reject(new Error(`SimClock.advance: expected a non-negative number of seconds, got ${dtSec}`));
    }
    return this.#enqueue(() => this.#nowNs + Math.round(dtSec * 1e9));
  }

  /** Moves time forward to tSec. */
  runUntil(tSec: number): Promise<void> {
    if (!Number.isFinite(tSec)) return Promise.reject(new Error(`SimClock.runUntil: expected a time in seconds, got ${tSec}`));
    return this.#enqueue(() => Math.max(this.#nowNs, Math.round(tSec * 1e9)));
  }

  #enqueue(target: () => number): Promise<void> {
    const run = this.#chain.then(() => this.#runTo(target()));
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #runTo(targetNs: number): Promise<void> {
    for (;;) {
      let next: SimTimer | undefined;
      for (const t of this.#timers) {
        if (t.dueNs > targetNs) continue;
        if (!next || t.dueNs < next.dueNs || (t.dueNs === next.dueNs && t.id < next.id)) next = t;
      }
      if (!next) break;
      this.#nowNs = next.dueNs;
      next.dueNs += next.periodNs;
      try {
        const r = next.cb();
        if (r !== undefined && typeof (r as Promise<void>).then === "function") await r;
      } catch (err) {
        throw new Error(`${next.label} failed at sim time ${this.now().toFixed(9)} s: ${(err as Error)?.message ?? String(err)}`, {
          cause: err,
        });
      }
    }
    this.#nowNs = targetNs;
  }
}
