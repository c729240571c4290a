/**
 * Progress reporting for long commands: a live bar on a terminal, a line every few percent otherwise
 * (CI logs, pipes), so long work never looks hung.
 */
import cliProgress from "cli-progress";

/** A progress reporter. */
export interface Progress {
  update(value: number, fields?: Record<string, string | number>): void;
  stop(): void;
}

/** Starts a progress reporter for `total` units of work labelled `label`. */
export function progress(label: string, total: number, opts: { unit?: string } = {}): Progress {
  const unit = opts.unit ?? "";
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: `${label.padEnd(10)} {bar} {value}/{total} ${unit} | {info}`, hideCursor: true, stream: process.stderr, clearOnComplete: false },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { info: "" });
    return {
      update: (v, f) => bar.update(v, { info: f ? Object.entries(f).map(([k, x]) => `${k} ${x}`).join(" ") : "" }),
      stop: () => bar.stop(),
    };
  }
  let lastPct = -1;
  return {
    update: (v, f) => {
      const pct = Math.floor((100 * v) / Math.max(1, total));
      if (pct >= lastPct + 10 || v === total) {
        lastPct = pct;
        const info = f ? " " + Object.entries(f).map(([k, x]) => `${k} ${x}`).join(" ") : "";
        process.stderr.write(`${label}: ${v}/${total} ${unit}(${pct}%)${info}\n`);
      }
    },
    stop: () => undefined,
  };
}
