/**
 * Stacked line plots (panels sharing one x axis, shaded spans, reference lines, legends) written as PNG by the
 * learner's matplotlib (learner/rlft_learner/commands/plots.py): real fonts, axes and ticks, from the `.venv` interpreter
 * the CLI already uses for the learner (app/python.ts). The data tools build a {@link LinePlotSpec}; only writing
 * the file needs Python.
 */
import { spawn } from "node:child_process";
import { findPython, learnerEnv } from "../app/python.ts";

/** One curve. `color` is any matplotlib colour ("tab:red", "#d62728"); default: the colour cycle. */
export interface Series {
  name: string;
  x: readonly number[];
  /** NaN leaves a gap. */
  y: readonly number[];
  color?: string;
  dashed?: boolean;
}

/** A shaded x interval [from, to] (e.g. operator intervention). */
export interface Span {
  from: number;
  to: number;
}

/** One panel: its curves, shaded spans, horizontal reference lines and title. */
export interface Panel {
  title: string;
  yLabel?: string;
  series: Series[];
  spans?: Span[];
  hlines?: { y: number; label?: string; color?: string }[];
}

/** A whole figure: panels top to bottom, in pixels. */
export interface LinePlotSpec {
  panels: Panel[];
  title?: string;
  xLabel?: string;
  /** Legend entry of the shaded spans, e.g. "intervention". */
  spanLabel?: string;
  /** Default 900 px. */
  width?: number;
  /** Height of one panel; the figure is panels × this plus room for the title and x label. Default 170 px. */
  panelHeight?: number;
}

/** The figure's pixel size for `spec`. */
export function plotSize(spec: LinePlotSpec): { width: number; height: number } {
  const width = spec.width ?? 900;
  const height = Math.round((spec.title ? 40 : 10) + spec.panels.length * (spec.panelHeight ?? 170) + (spec.xLabel ? 40 : 20));
  return { width, height };
}

/** The JSON plots.py reads (its docstring documents the format). */
function toJson(spec: LinePlotSpec): string {
  const { width, height } = plotSize(spec);
  const panels = spec.panels.map((p) => ({
    title: p.title,
    y_label: p.yLabel,
    series: p.series.map((s) => ({ name: s.name, x: [...s.x], y: [...s.y], color: s.color, dashed: s.dashed ?? false })),
    spans: p.spans ?? [],
    hlines: p.hlines ?? [],
  }));
  // JSON.stringify writes NaN and ±Infinity as null: plots.py draws a gap there.
  return JSON.stringify({ title: spec.title, x_label: spec.xLabel, span_label: spec.spanLabel, width, height, panels });
}

/** Writes `spec` as a PNG to `out` through the learner's Python; rejects with Python's message when it fails. */
export async function writeLinePlot(spec: LinePlotSpec, out: string, env: NodeJS.ProcessEnv = process.env): Promise<{ width: number; height: number }> {
  const python = findPython(env);
  const child = spawn(python, ["-m", "rlft_learner.commands.plots", "--spec", "-", "--out", out], { env: learnerEnv(env), stdio: ["pipe", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(-4000)));
  const done = new Promise<number | null>((resolve, reject) => {
    child.once("error", (e) => reject(new Error(`cannot start ${python} to draw ${out}: ${e.message}`)));
    child.once("close", (code) => resolve(code));
  });
  child.stdin.on("error", () => {}); // a child that dies early reports through its exit code and stderr
  child.stdin.end(toJson(spec));
  const code = await done;
  if (code !== 0) throw new Error(`drawing ${out} failed (${python} -m rlft_learner.commands.plots exited with ${code}):\n${stderr.trim()}`);
  return plotSize(spec);
}
