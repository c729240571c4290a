/**
 * Wall clock with real setInterval timers. An async callback that is still running when the
 * next tick is due makes that tick skip (never two overlapping runs of one timer).
 */
import type { Clock, Time, Timer } from "../Runtime.ts";
import { nsToStamp, periodToNs, type TimerCallback, type TimerHost } from "./SimClock.ts";

/** Wall time (Unix epoch) with sub-millisecond resolution. */
export class WallClock implements Clock, TimerHost {
  readonly kind = "wall" as const;

  /** @param onError called when a timer callback throws or rejects. */
  constructor(readonly onError: (label: string, err: unknown) => void = () => undefined) {}

  now(): number {
    return (performance.timeOrigin + performance.now()) / 1000;
  }

  stamp(): Time {
    return nsToStamp(Math.round((performance.timeOrigin + performance.now()) * 1e6));
  }

  createTimer(periodSec: number, cb: TimerCallback, label = "timer"): Timer {
    const periodMs = periodToNs(periodSec, label) / 1e6;
    let busy = false;
    const handle = setInterval(() => {
      if (busy) return;
      try {
        const r = cb();
        if (r !== undefined && typeof (r as Promise<void>).then === "function") {
          busy = true;
          (r as Promise<void>).catch((err) => this.onError(label, err)).finally(() => (busy = false));
        }
      } catch (err) {
        this.onError(label, err);
      }
    }, periodMs);
    return { periodSec, cancel: () => clearInterval(handle) };
  }
}
