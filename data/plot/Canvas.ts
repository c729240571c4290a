/** An RGBA raster with the few drawing operations a line plot needs: filled rectangles, lines, text. */
import { FONT, glyph } from "./font5x7.ts";
import { encodePng } from "./png.ts";

/** [r, g, b] or [r, g, b, a], 0–255. */
export type Color = readonly [number, number, number] | readonly [number, number, number, number];

/** A width × height RGBA canvas, white to start with. */
export class Canvas {
  readonly width: number;
  readonly height: number;
  readonly pixels: Uint8Array;

  constructor(width: number, height: number) {
    this.width = width;
    this.height = height;
    this.pixels = new Uint8Array(width * height * 4).fill(255);
  }

  /** Blends `c` over pixel (x, y); outside the canvas is ignored. */
  set(x: number, y: number, c: Color): void {
    x = Math.round(x);
    y = Math.round(y);
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return;
    const i = (y * this.width + x) * 4;
    const a = (c[3] ?? 255) / 255;
    for (let k = 0; k < 3; k++) this.pixels[i + k] = Math.round(this.pixels[i + k] * (1 - a) + c[k] * a);
    this.pixels[i + 3] = 255;
  }

  /** Fills the rectangle [x0, x1) × [y0, y1). */
  fillRect(x0: number, y0: number, x1: number, y1: number, c: Color): void {
    for (let y = Math.max(0, Math.floor(Math.min(y0, y1))); y < Math.min(this.height, Math.ceil(Math.max(y0, y1))); y++) {
      for (let x = Math.max(0, Math.floor(Math.min(x0, x1))); x < Math.min(this.width, Math.ceil(Math.max(x0, x1))); x++) this.set(x, y, c);
    }
  }

  /** A line from (x0, y0) to (x1, y1) (Bresenham), `thickness` pixels wide; `dash` draws every other run of that many pixels. */
  line(x0: number, y0: number, x1: number, y1: number, c: Color, opts: { thickness?: number; dash?: number } = {}): void {
    if (![x0, y0, x1, y1].every(Number.isFinite)) return;
    let xa = Math.round(x0);
    let ya = Math.round(y0);
    const xb = Math.round(x1);
    const yb = Math.round(y1);
    const dx = Math.abs(xb - xa);
    const dy = -Math.abs(yb - ya);
    const sx = xa < xb ? 1 : -1;
    const sy = ya < yb ? 1 : -1;
    let err = dx + dy;
    const t = opts.thickness ?? 1;
    const lo = -Math.floor((t - 1) / 2);
    for (let n = 0; ; n++) {
      if (!opts.dash || Math.floor(n / opts.dash) % 2 === 0) {
        for (let a = lo; a < lo + t; a++) for (let b = lo; b < lo + t; b++) this.set(xa + a, ya + b, c);
      }
      if (xa === xb && ya === yb) break;
      const e2 = 2 * err;
      if (e2 >= dy) {
        err += dy;
        xa += sx;
      }
      if (e2 <= dx) {
        err += dx;
        ya += sy;
      }
    }
  }

  /** Draws `s` with its top-left corner at (x, y); returns the width drawn. */
  text(s: string, x: number, y: number, c: Color, scale = 1): number {
    let cx = x;
    for (const ch of s) {
      for (const [gx, gy] of glyph(ch)) this.fillRect(cx + gx * scale, y + gy * scale, cx + (gx + 1) * scale, y + (gy + 1) * scale, c);
      cx += (FONT.width + 1) * scale;
    }
    return cx - x;
  }

  /** Width of `s` in pixels at `scale`. */
  static textWidth(s: string, scale = 1): number {
    return [...s].length * (FONT.width + 1) * scale;
  }

  /** The canvas as a PNG file. */
  png(): Buffer {
    return encodePng(this.width, this.height, this.pixels);
  }
}
