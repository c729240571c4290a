/**
 * Metrics to InfluxDB (or anything that speaks its v2 write API, e.g. victoria-metrics) through
 * `@influxdata/influxdb-client`. `point()` is synchronous and never throws or waits: points are batched by the client
 * and written in the background. When the database is down or slow, failed batches are dropped (no retries that would
 * pile up) and counted, and new points are dropped and counted once `maxPendingLines` are unconfirmed, so memory stays
 * bounded and the control loop never notices. Measurement names: docs/telemetry.md.
 */
import { InfluxDB, Point, type WriteApi } from "@influxdata/influxdb-client";

/** Options of {@link Telemetry.create}. */
export interface TelemetryOptions {
  /** e.g. http://127.0.0.1:8086 (InfluxDB 2) or http://127.0.0.1:8428 (victoria-metrics). */
  url: string;
  token?: string;
  org?: string;
  bucket?: string;
  /** Tags on every point (robot, task, session...). */
  tags?: Record<string, string>;
  /** Points per HTTP write. Default 500. */
  batchSize?: number;
  /** Longest a point waits before its batch is sent (ms). Default 1000. */
  flushIntervalMs?: number;
  /** Unconfirmed points kept before new ones are dropped. Default 20000. */
  maxPendingLines?: number;
  /** HTTP timeout per write (ms). Default 5000. */
  timeoutMs?: number;
  logger?: { warn(msg: string): void };
}

/** Counters of {@link Telemetry.stats}. */
export interface TelemetryStats {
  /** Points confirmed written. */
  written: number;
  /** Points dropped: failed writes plus points refused while too many were pending. */
  dropped: number;
  /** Points handed to the client and not yet confirmed or dropped. */
  pending: number;
  /** Failed HTTP writes. */
  failedWrites: number;
  lastError: string | null;
}

/** What a metrics producer needs: {@link Telemetry} or a test double. */
export type MetricSink = Pick<Telemetry, "point">;

/** Field values a point may carry. */
export type FieldValue = number | boolean | string;

/** A batched, non-blocking metrics writer. */
export class Telemetry {
  #api: WriteApi;
  #maxPending: number;
  #logger: NonNullable<TelemetryOptions["logger"]>;
  #stats: TelemetryStats = { written: 0, dropped: 0, pending: 0, failedWrites: 0, lastError: null };
  #closed = false;

  private constructor(api: WriteApi, o: TelemetryOptions) {
    this.#api = api;
    this.#maxPending = o.maxPendingLines ?? 20_000;
    this.#logger = o.logger ?? console;
  }

  /** A writer to `url`; nothing is sent until the first batch is due. */
  static create(o: TelemetryOptions): Telemetry {
    const db = new InfluxDB({ url: o.url, token: o.token ?? "", timeout: o.timeoutMs ?? 5000 });
    const hook = { settled: (_lines: number, _error: Error | null): void => undefined };
    const api = db.getWriteApi(o.org ?? "rlft", o.bucket ?? "rlft", "ms", {
      batchSize: o.batchSize ?? 500,
      flushInterval: o.flushIntervalMs ?? 1000,
      maxRetries: 0,
      maxBufferLines: o.maxPendingLines ?? 20_000,
      defaultTags: o.tags,
      writeSuccess: (lines) => hook.settled(lines.length, null),
      writeFailed: (error, lines) => {
        hook.settled(lines.length, error);
        return Promise.resolve(); // handled: no retry (a retry queue would grow while the database is down)
      },
      writeRetrySkipped: (entry) => hook.settled(entry.lines.length, new Error("retry buffer full")),
    });
    const self = new Telemetry(api, o);
    hook.settled = (lines, error) => self.#settled(lines, error);
    return self;
  }

  /** Queues one point; returns false (and counts it dropped) when the writer is closed or too many points are pending. */
  point(measurement: string, fields: Record<string, FieldValue>, tags: Record<string, string> = {}, timeMs: number = Date.now()): boolean {
    if (this.#closed || this.#stats.pending >= this.#maxPending) {
      this.#stats.dropped++;
      return false;
    }
    const p = new Point(measurement).timestamp(timeMs);
    for (const [k, v] of Object.entries(tags)) p.tag(k, v);
    let n = 0;
    for (const [k, v] of Object.entries(fields)) {
      if (typeof v === "number") {
        if (!Number.isFinite(v)) continue;
        p.floatField(k, v);
      } else if (typeof v === "boolean") p.booleanField(k, v);
      else p.stringField(k, v);
      n++;
    }
    if (n === 0) return false;
    this.#stats.pending++;
    this.#api.writePoint(p);
    return true;
  }

  stats(): TelemetryStats {
    return { ...this.#stats };
  }

  /** Sends what is batched; resolves when every pending point settled or `timeoutMs` passed (failures are counted, not thrown). */
  async flush(timeoutMs = 10_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    await this.#api.flush().catch(() => undefined);
    while (this.#stats.pending > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  }

  /** Flushes and stops; later points are dropped. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#api.close().catch(() => undefined);
  }

  #settled(lines: number, error: Error | null): void {
    this.#stats.pending = Math.max(0, this.#stats.pending - lines);
    if (error === null) {
      this.#stats.written += lines;
      return;
    }
    this.#stats.dropped += lines;
    this.#stats.failedWrites++;
    const first = this.#stats.lastError === null;
    this.#stats.lastError = error.message;
    if (first) this.#logger.warn(`telemetry: dropped ${lines} points: ${error.message} (further failures are only counted)`);
  }
}
