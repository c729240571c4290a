/**
 * Chessboard inner-corner detection on a grayscale image, in four steps:
 *   1. saddle points: a chessboard X-junction is a saddle of the blurred intensity, where the Hessian
 *      determinant is strongly negative; local maxima of −det(H) are candidates;
 *   2. X-junction test: on a circle around a true corner the intensity alternates dark/bright exactly four times;
 *   3. sub-pixel refinement: OpenCV's cornerSubPix criterion (every gradient in the window is orthogonal
 *      to the vector from the corner to its pixel), solved iteratively;
 *   4. grid: the convex hull's largest quadrilateral gives the four outer corners, a homography from the
 *      ideal grid predicts every corner, and the orientation is fixed by handedness (the board's front faces the
 *      camera) and by colour (the outer square at corner 0 is black).
 * It expects the whole board in view with its white margin, and the board as the dominant checkered object.
 * On an odd×even board (e.g. 9×6) the result is unambiguous; on even×even or odd×odd the 180° rotation cannot
 * be told apart and corner 0 may land on either end.
 */
import type { GrayImage } from "./GrayImage.ts";
import { applyHomography, findHomography, type Point2 } from "./homography.ts";

/** Result of a detection: corners row-major, or why none were found. */
export type CornerDetection = { ok: true; corners: Point2[]; spacingPx: number } | { ok: false; reason: string };

function gaussianBlur(img: GrayImage, sigma: number): Float32Array {
  const { width: W, height: H } = img;
  const r = Math.ceil(3 * sigma);
  const k = new Float32Array(2 * r + 1);
  let sum = 0;
  for (let i = -r; i <= r; i++) sum += k[i + r] = Math.exp(-(i * i) / (2 * sigma * sigma));
  for (let i = 0; i < k.length; i++) k[i] /= sum;
  const tmp = new Float32Array(W * H);
  const out = new Float32Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      let s = 0;
      for (let i = -r; i <= r; i++) s += k[i + r] * img.data[y * W + Math.min(W - 1, Math.max(0, x + i))];
      tmp[y * W + x] = s;
    }
  }
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      let s = 0;
      for (let i = -r; i <= r; i++) s += k[i + r] * tmp[Math.min(H - 1, Math.max(0, y + i)) * W + x];
      out[y * W + x] = s;
    }
  }
  return out;
}

function bilinear(I: Float32Array, W: number, H: number, x: number, y: number): number {
  const x0 = Math.max(0, Math.min(W - 2, Math.floor(x)));
  const y0 = Math.max(0, Math.min(H - 2, Math.floor(y)));
  const fx = Math.max(0, Math.min(1, x - x0));
  const fy = Math.max(0, Math.min(1, y - y0));
  const i = y0 * W + x0;
  return (1 - fy) * ((1 - fx) * I[i] + fx * I[i + 1]) + fy * ((1 - fx) * I[i + W] + fx * I[i + W + 1]);
}

/** Saddle candidates: local maxima of −det(Hessian) above a fraction of the strongest. */
function saddleCandidates(B: Float32Array, W: number, H: number): { p: Point2; score: number }[] {
  const resp = new Float32Array(W * H);
  let max = 0;
  for (let y = 2; y < H - 2; y++) {
    for (let x = 2; x < W - 2; x++) {
      const i = y * W + x;
      const ixx = B[i - 1] - 2 * B[i] + B[i + 1];
      const iyy = B[i - W] - 2 * B[i] + B[i + W];
      const ixy = (B[i - W - 1] + B[i + W + 1] - B[i - W + 1] - B[i + W - 1]) / 4;
      const r = ixy * ixy - ixx * iyy;
      resp[i] = r;
      if (r > max) max = r;
    }
  }
  const out: { p: Point2; score: number }[] = [];
  const rad = 3;
  for (let y = rad; y < H - rad; y++) {
    for (let x = rad; x < W - rad; x++) {
      const r = resp[y * W + x];
      if (r < 0.05 * max) continue;
      let isMax = true;
      for (let dy = -rad; dy <= rad && isMax; dy++) for (let dx = -rad; dx <= rad; dx++) if ((dy || dx) && resp[(y + dy) * W + x + dx] > r) { isMax = false; break; }
      if (isMax) out.push({ p: [x, y], score: r });
    }
  }
  return out;
}

/** True when the intensity on a circle around p alternates dark/bright exactly four times. */
function isXJunction(B: Float32Array, W: number, H: number, p: Point2, radius: number): boolean {
  const n = 32;
  const vals: number[] = [];
  for (let k = 0; k < n; k++) {
    const a = (2 * Math.PI * k) / n;
    const x = p[0] + radius * Math.cos(a);
    const y = p[1] + radius * Math.sin(a);
    if (x < 0 || y < 0 || x > W - 1 || y > H - 1) return false;
    vals.push(bilinear(B, W, H, x, y));
  }
  const lo = Math.min(...vals);
  const hi = Math.max(...vals);
  if (hi - lo < 30) return false;
  const mid = (lo + hi) / 2;
  let changes = 0;
  for (let k = 0; k < n; k++) if (vals[k] > mid !== vals[(k + 1) % n] > mid) changes++;
  return changes === 4;
}

/** cornerSubPix: q = (Σ g·gᵀ)⁻¹ Σ g·gᵀ·p over a Gaussian-weighted window, iterated. */
function refineCorner(B: Float32Array, W: number, H: number, p0: Point2, half: number): Point2 | null {
  let q: Point2 = [p0[0], p0[1]];
  for (let it = 0; it < 20; it++) {
    let a = 0;
    let b = 0;
    let c = 0;
    let bx = 0;
    let by = 0;
    for (let dy = -half; dy <= half; dy++) {
      for (let dx = -half; dx <= half; dx++) {
        if (dx * dx + dy * dy < 1) continue; // the centre's gradient is undefined at a saddle
        const x = q[0] + dx;
        const y = q[1] + dy;
        if (x < 1 || y < 1 || x > W - 2 || y > H - 2) continue;
        const gx = (bilinear(B, W, H, x + 1, y) - bilinear(B, W, H, x - 1, y)) / 2;
        const gy = (bilinear(B, W, H, x, y + 1) - bilinear(B, W, H, x, y - 1)) / 2;
        const w = Math.exp(-(dx * dx + dy * dy) / (half * half));
        const gxx = w * gx * gx;
        const gxy = w * gx * gy;
        const gyy = w * gy * gy;
        a += gxx;
        b += gxy;
        c += gyy;
        bx += gxx * x + gxy * y;
        by += gxy * x + gyy * y;
      }
    }
    const det = a * c - b * b;
    if (Math.abs(det) < 1e-9) return null;
    const nq: Point2 = [(c * bx - b * by) / det, (a * by - b * bx) / det];
    const moved = Math.hypot(nq[0] - q[0], nq[1] - q[1]);
    if (Math.hypot(nq[0] - p0[0], nq[1] - p0[1]) > half) return null; // wandered off: no corner here
    q = nq;
    if (moved < 1e-3) break;
  }
  return q;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function nearestDistances(pts: Point2[]): number[] {
  return pts.map((p, i) => {
    let best = Infinity;
    pts.forEach((q, j) => {
      if (i !== j) best = Math.min(best, Math.hypot(p[0] - q[0], p[1] - q[1]));
    });
    return best;
  });
}

function convexHull(pts: Point2[]): Point2[] {
  const p = [...pts].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cr = (o: Point2, a: Point2, b: Point2) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower: Point2[] = [];
  for (const q of p) {
    while (lower.length >= 2 && cr(lower[lower.length - 2], lower[lower.length - 1], q) <= 0) lower.pop();
    lower.push(q);
  }
  const upper: Point2[] = [];
  for (const q of [...p].reverse()) {
    while (upper.length >= 2 && cr(upper[upper.length - 2], upper[upper.length - 1], q) <= 0) upper.pop();
    upper.push(q);
  }
  return [...lower.slice(0, -1), ...upper.slice(0, -1)];
}

function quadArea(q: Point2[]): number {
  let s = 0;
  for (let i = 0; i < q.length; i++) s += q[i][0] * q[(i + 1) % q.length][1] - q[(i + 1) % q.length][0] * q[i][1];
  return Math.abs(s) / 2;
}

function largestQuad(hull: Point2[]): Point2[] {
  let best: Point2[] = [];
  let bestA = -1;
  const n = hull.length;
  for (let a = 0; a < n; a++) for (let b = a + 1; b < n; b++) for (let c = b + 1; c < n; c++) for (let d = c + 1; d < n; d++) {
    const q = [hull[a], hull[b], hull[c], hull[d]];
    const A = quadArea(q);
    if (A > bestA) {
      bestA = A;
      best = q;
    }
  }
  return best;
}

/** Finds the `cols × rows` inner corners of a chessboard, row-major, sub-pixel. */
export function detectChessboardCorners(img: GrayImage, cols: number, rows: number): CornerDetection {
  const { width: W, height: H } = img;
  const N = cols * rows;
  const B = gaussianBlur(img, 1.2);
  const Bfine = gaussianBlur(img, 0.7);
  const cands = saddleCandidates(B, W, H).sort((a, b) => b.score - a.score).slice(0, 4 * N);
  if (cands.length < N) return { ok: false, reason: `found ${cands.length} corner candidates, need ${N} (${cols}×${rows}): is the whole board in view and in focus?` };
  const spacing0 = median(nearestDistances(cands.slice(0, N).map((c) => c.p)));
  const radius = Math.max(2.5, Math.min(12, 0.35 * spacing0));
  let pts = cands.filter((c) => isXJunction(B, W, H, c.p, radius)).map((c) => c.p);
  const half = Math.max(2, Math.min(8, Math.round(0.3 * spacing0)));
  // Refine (a point that wanders off was no corner), then keep the strongest of any near-duplicates.
  pts = pts.map((p) => refineCorner(Bfine, W, H, p, half)).filter((p): p is Point2 => p !== null && isXJunction(B, W, H, p, radius));
  const merged: Point2[] = [];
  for (const p of pts) if (!merged.some((q) => Math.hypot(p[0] - q[0], p[1] - q[1]) < 0.45 * spacing0)) merged.push(p);
  pts = merged;
  // Drop isolated points: a grid corner has a neighbour about one spacing away.
  if (pts.length > N) {
    const nn = nearestDistances(pts);
    const s = median(nn);
    pts = pts.filter((_, i) => nn[i] < 1.6 * s);
  }
  if (pts.length !== N) return { ok: false, reason: `found ${pts.length} chessboard corners, expected ${N} (${cols}×${rows} inner corners): check the board size and that only one board is in view` };
  const spacing = median(nearestDistances(pts));
  const hull = convexHull(pts);
  if (hull.length < 4) return { ok: false, reason: "the corners are collinear" };
  const quad = largestQuad(hull);
  const ideal: Point2[] = [
    [0, 0],
    [cols - 1, 0],
    [cols - 1, rows - 1],
    [0, rows - 1],
  ];
  let best: { err: number; corners: Point2[]; H: number[][] } | null = null;
  for (const dir of [1, -1]) {
    for (let k = 0; k < 4; k++) {
      const q = [0, 1, 2, 3].map((i) => quad[(((k + dir * i) % 4) + 4) % 4]);
      // Front side facing the camera: the image keeps the board's handedness (x right, y down).
      const cr = (q[1][0] - q[0][0]) * (q[3][1] - q[0][1]) - (q[1][1] - q[0][1]) * (q[3][0] - q[0][0]);
      if (cr <= 0) continue;
      let Hm = findHomography(ideal, q);
      let corners: Point2[] = [];
      let err = 0;
      for (let pass = 0; pass < 2; pass++) {
        corners = [];
        err = 0;
        const used = new Set<number>();
        for (let r = 0; r < rows; r++) {
          for (let c = 0; c < cols; c++) {
            const pr = applyHomography(Hm, [c, r]);
            let bi = -1;
            let bd = Infinity;
            pts.forEach((p, i) => {
              const d = Math.hypot(p[0] - pr[0], p[1] - pr[1]);
              if (d < bd) {
                bd = d;
                bi = i;
              }
            });
            if (used.has(bi)) err += 1e6;
            used.add(bi);
            corners.push(pts[bi]);
            err += bd;
          }
        }
        const grid: Point2[] = [];
        for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) grid.push([c, r]);
        Hm = findHomography(grid, corners);
      }
      // Colour: the outer square diagonal to corner 0 is black, its neighbour along the row white.
      const dark = bilinear(B, W, H, ...applyHomography(Hm, [-0.5, -0.5]));
      const light = bilinear(B, W, H, ...applyHomography(Hm, [0.5, -0.5]));
      if (dark > light) err += 1e3;
      if (!best || err < best.err) best = { err, corners, H: Hm };
    }
  }
  if (!best || best.err / N > 0.25 * spacing) return { ok: false, reason: `the ${N} corners do not form a ${cols}×${rows} grid (mean misfit ${best ? (best.err / N).toFixed(1) : "?"} px)` };
  return { ok: true, corners: best.corners, spacingPx: spacing };
}
