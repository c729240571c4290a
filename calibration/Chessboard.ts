/**
 * Chessboard targets: geometry (OpenCV's convention: `cols × rows` inner corners, row-major from the
 * corner whose outer square is black, x along a row, y down the columns, z into the board), and a
 * renderer that draws one through a CameraModel so tests and `rlft calibrate render-board` have images
 * with known ground truth.
 */
import type { CameraModel } from "./CameraModel.ts";
import { undistortPixel } from "./CameraModel.ts";
import type { GrayImage } from "./GrayImage.ts";
import type { Vec } from "./linalg.ts";
import type { Pose } from "./rotation.ts";
import type { Rng } from "../sim/rng.ts";

/** A chessboard target. */
export interface Chessboard {
  /** Inner corners along a row (OpenCV patternSize.width). */
  cols: number;
  /** Inner corners along a column (patternSize.height). */
  rows: number;
  /** Side of one square, metres. */
  square: number;
}

/** Target-frame coordinates of the inner corners, row-major (z = 0). */
export function boardPoints(b: Chessboard): Vec[] {
  const pts: Vec[] = [];
  for (let r = 0; r < b.rows; r++) for (let c = 0; c < b.cols; c++) pts.push([c * b.square, r * b.square, 0]);
  return pts;
}

/** Parses "9x6" into cols and rows. */
export function parseBoardSize(s: string): { cols: number; rows: number } {
  const m = /^(\d+)x(\d+)$/.exec(s.trim());
  if (!m) throw new Error(`Invalid board size "${s}": expected inner corners as COLSxROWS, e.g. 9x6 for a 10×7-square board`);
  const cols = Number(m[1]);
  const rows = Number(m[2]);
  if (cols < 3 || rows < 3) throw new Error(`Invalid board size "${s}": at least 3×3 inner corners`);
  return { cols, rows };
}

/** Options of renderChessboard. */
export interface RenderOptions {
  /** Supersampling per axis (anti-aliasing), default 3. */
  supersample?: number;
  /** Gaussian pixel noise, grey levels (σ), default 0. */
  noise?: number;
  rng?: Rng;
  /** Background grey outside the paper. */
  background?: number;
}

/** Draws the board (with a one-square white paper margin) as the camera sees it at `pose` (camera←board). */
export function renderChessboard(cam: CameraModel, pose: Pose, board: Chessboard, opts: RenderOptions = {}): GrayImage {
  const W = cam.width;
  const H = cam.height;
  const ss = opts.supersample ?? 3;
  const bg = opts.background ?? 110;
  // Undistorted rays at pixel-grid corners; subsamples interpolate between them.
  const gw = W + 1;
  const rays = new Float64Array(gw * (H + 1) * 2);
  for (let v = 0; v <= H; v++) {
    for (let u = 0; u <= W; u++) {
      const [x, y] = undistortPixel(cam, u - 0.5, v - 0.5);
      rays[2 * (v * gw + u)] = x;
      rays[2 * (v * gw + u) + 1] = y;
    }
  }
  const R = pose.R;
  const t = pose.t;
  const n = [R[0][2], R[1][2], R[2][2]];
  const nt = n[0] * t[0] + n[1] * t[1] + n[2] * t[2];
  const sq = board.square;
  const data = new Uint8Array(W * H);
  for (let v = 0; v < H; v++) {
    for (let u = 0; u < W; u++) {
      let acc = 0;
      for (let sy = 0; sy < ss; sy++) {
        for (let sx = 0; sx < ss; sx++) {
          const fu = (sx + 0.5) / ss;
          const fv = (sy + 0.5) / ss;
          const i00 = 2 * (v * gw + u);
          const i10 = i00 + 2;
          const i01 = i00 + 2 * gw;
          const i11 = i01 + 2;
          const x = (1 - fv) * ((1 - fu) * rays[i00] + fu * rays[i10]) + fv * ((1 - fu) * rays[i01] + fu * rays[i11]);
          const y = (1 - fv) * ((1 - fu) * rays[i00 + 1] + fu * rays[i10 + 1]) + fv * ((1 - fu) * rays[i01 + 1] + fu * rays[i11 + 1]);
          const den = n[0] * x + n[1] * y + n[2];
          const s = nt / den;
          let val = bg;
          if (den !== 0 && s > 0) {
            const px = s * x - t[0];
            const py = s * y - t[1];
            const pz = s - t[2];
            const X = R[0][0] * px + R[1][0] * py + R[2][0] * pz;
            const Y = R[0][1] * px + R[1][1] * py + R[2][1] * pz;
            const i = Math.floor(X / sq);
            const j = Math.floor(Y / sq);
            if (i >= -2 && i <= board.cols + 1 && j >= -2 && j <= board.rows + 1) {
              const onBoard = i >= -1 && i <= board.cols - 1 && j >= -1 && j <= board.rows - 1;
              val = onBoard && ((i + j) & 1) === 0 ? 25 : 230;
            }
          }
          acc += val;
        }
      }
      let g = acc / (ss * ss);
      if (opts.noise && opts.rng) g += opts.noise * opts.rng.normal();
      data[v * W + u] = Math.max(0, Math.min(255, Math.round(g)));
    }
  }
  return { width: W, height: H, data };
}
