/**
 * control_loop_monitor: watches the control loop from the outside, on the topics every stack has, and reports to
 * telemetry once per `windowSec` of wall time: tick period and jitter (wall ms between /observation messages),
 * decision latency (observation → proposed command, wall ms: inference plus queueing) and deadline misses (an
 * observation whose command had not arrived when the next observation came). Subscription callbacks only; never
 * blocks the loop it measures.
 */
import type { NodeHandle } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import { TOPICS } from "../contracts/topics.ts";
import { sameTime, type EpisodeEventMsg, type JointStateMsg, type ObservationMsg } from "../contracts/msgs.ts";
import type { Time } from "../runtime/Runtime.ts";
import type { MetricSink } from "../telemetry/Telemetry.ts";

/** Totals since start, for tests, benches and the fault table. */
export interface LoopTotals {
  ticks: number;
  deadlineMisses: number;
}

/** Options of the monitor. */
export interface ControlLoopMonitorOptions {
  telemetry?: MetricSink;
  /** Wall seconds between reports. Default 1. */
  windowSec?: number;
  /** Injectable wall clock (ms), for tests. */
  nowMs?: () => number;
  /** Also keep every decision latency since start in {@link ControlLoopMonitor.latencyMs} (benches). Default false. */
  keepLatencies?: boolean;
}

/** The control-loop monitor node. */
export class ControlLoopMonitor extends NodeBase {
  #o: Required<Omit<ControlLoopMonitorOptions, "telemetry">> & { telemetry?: MetricSink };
  #last: { stamp: Time; at: number; answered: boolean } | null = null;
  #periods: number[] = [];
  #latencies: number[] = [];
  #misses = 0;
  #windowStart: number;
  #report: ReturnType<typeof setInterval> | undefined;
  readonly totals: LoopTotals = { ticks: 0, deadlineMisses: 0 };
  /** Every decision latency (wall ms) since start, with `keepLatencies` (capped at 1e6 samples). */
  readonly latencyMs: number[] = [];

  constructor(node: NodeHandle, opts: ControlLoopMonitorOptions = {}) {
    super(node);
    this.#o = { windowSec: 1, nowMs: () => performance.now(), keepLatencies: false, ...opts };
    this.#windowStart = this.#o.nowMs();
  }

  override async configure(): Promise<void> {
    this.subscribe<ObservationMsg>(TOPICS.observation, (m) => this.onObservation(m.header.stamp));
    this.subscribe<JointStateMsg>(TOPICS.proposedCommand, (m) => this.onCommand(m.header.stamp));
    // An episode's last observation and the reset's observation are never acted on: not misses.
    this.subscribe<EpisodeEventMsg>(TOPICS.episodeEvent, (e) => {
      if (e.event === "start") this.#last = null;
    });
  }

  override async activate(): Promise<void> {
    this.#report = setInterval(() => this.report(), this.#o.windowSec * 1000);
    this.#report.unref();
  }

  override async deactivate(): Promise<void> {
    clearInterval(this.#report);
    this.report();
    await super.deactivate();
  }

  /** An observation (a control tick) was published. */
  onObservation(stamp: Time): void {
    const now = this.#o.nowMs();
    const last = this.#last;
    if (last !== null) {
      this.#periods.push(now - last.at);
      if (!last.answered) {
        this.#misses++;
        this.totals.deadlineMisses++;
      }
    }
    this.totals.ticks++;
    this.#last = { stamp, at: now, answered: false };
  }

  /** A proposed command for the observation stamped `stamp` arrived. */
  onCommand(stamp: Time): void {
    const last = this.#last;
    if (last === null || last.answered || !sameTime(stamp, last.stamp)) return;
    last.answered = true;
    const ms = this.#o.nowMs() - last.at;
    this.#latencies.push(ms);
    if (this.#o.keepLatencies && this.latencyMs.length < 1_000_000) this.latencyMs.push(ms);
  }

  /** Writes one `rlft_loop` point for the window and starts the next; no point for an empty window. */
  report(): void {
    const periods = this.#periods;
    const lat = this.#latencies;
    const now = this.#o.nowMs();
    const misses = this.#misses;
    this.#periods = [];
    this.#latencies = [];
    this.#misses = 0;
    const windowSec = (now - this.#windowStart) / 1000;
    this.#windowStart = now;
    if (periods.length === 0 || !this.#o.telemetry) return;
    const mean = periods.reduce((a, b) => a + b, 0) / periods.length;
    const jitter = Math.sqrt(periods.reduce((a, b) => a + (b - mean) ** 2, 0) / periods.length);
    const sorted = [...lat].sort((a, b) => a - b);
    const q = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN);
    this.#o.telemetry.point("rlft_loop", {
      period_ms: mean, jitter_ms: jitter, ticks: periods.length, ticks_per_s: periods.length / Math.max(windowSec, 1e-9),
      deadline_misses: misses, latency_p50_ms: q(0.5), latency_p99_ms: q(0.99), latency_max_ms: sorted.at(-1) ?? NaN,
    }, { clock: this.node.clock.kind });
  }
}
