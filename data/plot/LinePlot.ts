/**
 * Line plots as PNG, drawn in TypeScript: panels stacked vertically sharing one x axis, each with its own y range,
 * optional shaded x spans (e.g. intervention steps) and a legend. Enough for joint traces and error curves.
 */
import { Canvas, type Color } from "./Canvas.ts";
import { FONT } from "./font5x7.ts";

/** One curve. */
export interface Series {
  name: string;
  x: readonly number[];
  y: readonly number[];
  color?: Color;
  dashed?: boolean;
}

/** A shaded x interval [from, to]. */
export interface Span {
  from: number;
  to: number;
  color?: Color;
}

/** One panel: its curves, shaded spans and title. */
export interface Panel {
  title: string;
  series: Series[];
  spans?: Span[];
  /** Horizontal reference lines (e.g. a tolerance). */
  hlines?: { y: number; color?: Color; label?: string }[];
}

/** Options of {@link renderLinePlot}. */
export interface LinePlotOptions {
  title?: string;
  xLabel?: string;
  /** Label of the shaded spans in the legend, e.g. "intervention". */
  spanLabel?: string;
  width?: number;
  panelHeight?: number;
}

/** Colour cycle (Tableau 10). */
export const PALETTE: readonly Color[] = [
  [31, 119, 180],
  [255, 127, 14],
  [44, 160, 44],
  [214, 39, 40],
  [148, 103, 189],
  [140, 86, 75],
  [227, 119, 194],
  [127, 127, 127],
];
const SPAN: Color = [255, 165, 0, 70];
const INK: Color = [30, 30, 30];
const GRID: Color = [225, 225, 225];

/** A compact number label: 3 significant digits, exponent when tiny or huge. */
export function formatTick(v: number): string {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e4 || a < 1e-3) return v.toExponential(1);
  return String(Number(v.toPrecision(3)));
}

/** "Nice" tick values (steps of 1, 2 or 5 × 10^k) covering [lo, hi], about `count` of them. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : Number(v.toPrecision(12)));
  return out;
}

function range(values: number[], pad = 0.06): [number, number] {
  const finite = values.filter(Number.isFinite);
  if (!finite.length) return [0, 1];
  let lo = Math.min(...finite);
  let hi = Math.max(...finite);
  if (hi - lo < 1e-12) {
    const pad = Math.abs(hi) > 0 ? Math.abs(hi) * 0.1 : 1;
    lo -= pad;
    hi += pad;
  }
  const m = (hi - lo) * pad;
  return [lo - m, hi + m];
}

/** Renders `panels` as one PNG. */
export function renderLinePlot(panels: readonly Panel[], opts: LinePlotOptions = {}): Buffer {
  const W = opts.width ?? 900;
  const PH = opts.panelHeight ?? 170;
  const left = 62;
  const right = 150;
  const top = opts.title ? 26 : 8;
  const gap = 22;
  const bottom = 30;
  const H = top + panels.length * (PH + gap) + bottom;
  const c = new Canvas(W, H);
  if (opts.title) c.text(opts.title, left, 8, INK, 2);
  const allX = panels.flatMap((p) => [...p.series.flatMap((s) => [...s.x]), ...(p.spans ?? []).flatMap((s) => [s.from, s.to])]);
  const [x0, x1] = range(allX.length ? allX : [0, 1], 0);
  const plotW = W - left - right;
  const px = (x: number) => left + ((x - x0) / (x1 - x0)) * plotW;
  panels.forEach((p, i) => {
    const y0px = top + i * (PH + gap) + 12;
    const h = PH - 12;
    const [ylo, yhi] = range([...p.series.flatMap((s) => [...s.y]), ...(p.hlines ?? []).map((l) => l.y)]);
    const py = (y: number) => y0px + h - ((y - ylo) / (yhi - ylo)) * h;
    c.text(p.title, left, y0px - 10, INK);
    for (const yv of niceTicks(ylo, yhi, 4)) {
      c.line(left, py(yv), left + plotW, py(yv), GRID);
      const label = formatTick(yv);
      c.text(label, left - 4 - Canvas.textWidth(label), py(yv) - FONT.height / 2, INK);
    }
    for (const s of p.spans ?? []) c.fillRect(px(s.from), y0px, Math.max(px(s.to), px(s.from) + 1), y0px + h, s.color ?? SPAN);
    for (const l of p.hlines ?? []) {
      c.line(left, py(l.y), left + plotW, py(l.y), l.color ?? [200, 0, 0], { dash: 4 });
      if (l.label) c.text(l.label, left + plotW - Canvas.textWidth(l.label) - 2, py(l.y) - FONT.height - 2, l.color ?? [200, 0, 0]);
    }
    p.series.forEach((s, k) => {
      const col = s.color ?? PALETTE[k % PALETTE.length];
      for (let j = 1; j < s.x.length; j++) c.line(px(s.x[j - 1]), py(s.y[j - 1]), px(s.x[j]), py(s.y[j]), col, { thickness: 2, dash: s.dashed ? 3 : undefined });
      if (s.x.length === 1) c.fillRect(px(s.x[0]) - 1, py(s.y[0]) - 1, px(s.x[0]) + 2, py(s.y[0]) + 2, col);
      const ly = y0px + 4 + k * 12;
      c.line(left + plotW + 8, ly + 3, left + plotW + 22, ly + 3, col, { thickness: 2, dash: s.dashed ? 3 : undefined });
      c.text(s.name.slice(0, 20), left + plotW + 26, ly, INK);
    });
    if (p.spans?.length && opts.spanLabel) {
      const ly = y0px + 4 + p.series.length * 12;
      c.fillRect(left + plotW + 8, ly, left + plotW + 22, ly + 7, SPAN);
      c.text(opts.spanLabel.slice(0, 20), left + plotW + 26, ly, INK);
    }
    // Frame and x ticks.
    c.line(left, y0px, left, y0px + h, INK);
    c.line(left, y0px + h, left + plotW, y0px + h, INK);
    for (const xv of niceTicks(x0, x1, 8)) {
      c.line(px(xv), y0px + h, px(xv), y0px + h + 3, INK);
      if (i === panels.length - 1) {
        const label = formatTick(xv);
        c.text(label, px(xv) - Canvas.textWidth(label) / 2, y0px + h + 6, INK);
      }
    }
  });
  if (opts.xLabel) c.text(opts.xLabel, left + plotW / 2 - Canvas.textWidth(opts.xLabel) / 2, H - 11, INK);
  return c.png();
}
