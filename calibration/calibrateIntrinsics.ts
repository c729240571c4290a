/**
 * Camera intrinsics from views of a planar target, Zhang's method (Z. Zhang, "A Flexible New Technique
 * for Camera Calibration", IEEE TPAMI 22(11), 2000):
 *   1. a homography per view by normalised DLT (homography.ts);
 *   2. the closed-form solution for B = K⁻ᵀK⁻¹ from the constraints h1ᵀBh2 = 0, h1ᵀBh1 = h2ᵀBh2 (§3.1, App. B);
 *   3. extrinsics per view from K and H (§3.1);
 *   4. Levenberg–Marquardt over fx, fy, cx, cy, k1, k2, p1, p2 and every view's pose on the pixel
 *      reprojection error (§3.2, §3.3 with OpenCV's radial–tangential model).
 * Skew is fixed at zero in the refinement, as OpenCV does for all modern sensors.
 */
import type { CameraModel } from "./CameraModel.ts";
import { findHomography, type Point2 } from "./homography.ts";
import { type Mat, type Vec, gram, matMul, nullVector, solve } from "./linalg.ts";
import { levenbergMarquardt } from "./levenbergMarquardt.ts";
import { type Pose, poseFromVectors, rotationVector } from "./rotation.ts";
import { poseFromHomography, reprojectionResiduals } from "./solvePlanarPose.ts";

/** One view: target points (z = 0 in the target frame, metres) and where they were seen (pixels). */
export interface CalibrationView {
  object: Vec[];
  image: Point2[];
}

/** Options of calibrateIntrinsics. */
export interface IntrinsicsOptions {
  width: number;
  height: number;
  /** Estimate k1, k2, p1, p2 (default true); false fits a distortion-free pinhole. */
  distortion?: boolean;
}

/** Result: the model, its reprojection error and the per-view poses. */
export interface IntrinsicsResult {
  camera: CameraModel;
  /** RMS reprojection error over all points, pixels (OpenCV's calibrateCamera return value). */
  rms: number;
  /** RMS per view, pixels: a view far above the rest is a bad detection. */
  perViewRms: number[];
  /** camera←target pose per view. */
  poses: Pose[];
  /** 1-σ standard deviations of fx, fy, cx, cy, k1, k2, p1, p2 from the Gauss–Newton covariance. */
  stdDev: Record<"fx" | "fy" | "cx" | "cy" | "k1" | "k2" | "p1" | "p2", number>;
  /** The closed-form estimate before refinement (skew included), for diagnostics. */
  closedForm: { fx: number; fy: number; cx: number; cy: number; skew: number };
}

function vij(H: Mat, i: number, j: number): Vec {
  const hi = [H[0][i], H[1][i], H[2][i]];
  const hj = [H[0][j], H[1][j], H[2][j]];
  return [hi[0] * hj[0], hi[0] * hj[1] + hi[1] * hj[0], hi[1] * hj[1], hi[2] * hj[0] + hi[0] * hj[2], hi[2] * hj[1] + hi[1] * hj[2], hi[2] * hj[2]];
}

/** Zhang's closed-form K from ≥ 3 homographies (appendix B of the paper). */
export function closedFormIntrinsics(homographies: Mat[]): { K: Mat; skew: number } {
  if (homographies.length < 3) throw new Error(`Zhang's closed form needs at least 3 views of the target, got ${homographies.length}`);
  const V: Mat = [];
  for (const H of homographies) {
    const v11 = vij(H, 0, 0);
    const v22 = vij(H, 1, 1);
    V.push(vij(H, 0, 1));
    V.push(v11.map((a, k) => a - v22[k]));
  }
  const [B11, B12, B22, B13, B23, B33] = nullVector(V);
  const d = B11 * B22 - B12 * B12;
  const v0 = (B12 * B13 - B11 * B23) / d;
  const lambda = B33 - (B13 * B13 + v0 * (B12 * B13 - B11 * B23)) / B11;
  const alpha = Math.sqrt(lambda / B11);
  const beta = Math.sqrt((lambda * B11) / d);
  const gamma = (-B12 * alpha * alpha * beta) / lambda;
  const u0 = (gamma * v0) / beta - (B13 * alpha * alpha) / lambda;
  if (![alpha, beta, u0, v0].every(Number.isFinite)) {
    throw new Error("Zhang's closed form failed (degenerate views): tilt the target differently in each view, at least 3 distinct orientations");
  }
  return {
    K: [
      [alpha, gamma, u0],
      [0, beta, v0],
      [0, 0, 1],
    ],
    skew: gamma,
  };
}

const N_INTR = 8;

function cameraOf(x: Vec, width: number, height: number): CameraModel {
  return { width, height, fx: x[0], fy: x[1], cx: x[2], cy: x[3], k1: x[4], k2: x[5], p1: x[6], p2: x[7] };
}

/** Calibrates one camera from ≥ 3 views of a planar target. */
export function calibrateIntrinsics(views: readonly CalibrationView[], opts: IntrinsicsOptions): IntrinsicsResult {
  const { width, height } = opts;
  const useDist = opts.distortion ?? true;
  views.forEach((v, i) => {
    if (v.object.length !== v.image.length) throw new Error(`view ${i}: ${v.object.length} target points but ${v.image.length} image points`);
    if (v.object.length < 4) throw new Error(`view ${i}: needs at least 4 points, got ${v.object.length}`);
  });
  // Pixel coordinates scaled to ~[-1, 1] keep the closed-form system well conditioned; K is mapped back.
  const s = Math.max(width, height) / 2;
  const T: Mat = [
    [1 / s, 0, -width / 2 / s],
    [0, 1 / s, -height / 2 / s],
    [0, 0, 1],
  ];
  const Hs = views.map((v) =>
    findHomography(
      v.object.map((p) => [p[0], p[1]] as Point2),
      v.image,
    ),
  );
  const cf = closedFormIntrinsics(Hs.map((H) => matMul(T, H)));
  const Tinv: Mat = [
    [s, 0, width / 2],
    [0, s, height / 2],
    [0, 0, 1],
  ];
  const K = matMul(Tinv, cf.K);
  const closedForm = { fx: K[0][0], fy: K[1][1], cx: K[0][2], cy: K[1][2], skew: K[0][1] };
  const K0: Mat = [
    [K[0][0], 0, K[0][2]],
    [0, K[1][1], K[1][2]],
    [0, 0, 1],
  ];
  const poses0 = Hs.map((H) => poseFromHomography(K0, H));

  const x0: Vec = [K0[0][0], K0[1][1], K0[0][2], K0[1][2], 0, 0, 0, 0];
  for (const p of poses0) x0.push(...rotationVector(p.R), ...p.t);
  const offsets: number[] = [];
  let total = 0;
  for (const v of views) {
    offsets.push(total);
    total += 2 * v.object.length;
  }
  const viewResiduals = (x: Vec, i: number, out: Vec, off: number) => {
    const b = N_INTR + 6 * i;
    reprojectionResiduals(cameraOf(x, width, height), poseFromVectors(x.slice(b, b + 3), x.slice(b + 3, b + 6)), views[i].object, views[i].image, out, off);
  };
  const f = (x: Vec): Vec => {
    const r = new Array<number>(total);
    views.forEach((_, i) => viewResiduals(x, i, r, offsets[i]));
    return r;
  };
  // The Jacobian is block-sparse: a view's pose moves only that view's residuals.
  const jacobian = (x: Vec): Mat => {
    const J: Mat = Array.from({ length: total }, () => new Array<number>(x.length).fill(0));
    const col = (j: number, rows: [number, number][], fill: (xx: Vec, out: Vec) => void) => {
      const h = 1e-6 * Math.max(1, Math.abs(x[j]));
      const xp = [...x];
      const xm = [...x];
      xp[j] += h;
      xm[j] -= h;
      const rp: Vec = new Array(total);
      const rm: Vec = new Array(total);
      fill(xp, rp);
      fill(xm, rm);
      for (const [a, b] of rows) for (let r = a; r < b; r++) J[r][j] = (rp[r] - rm[r]) / (2 * h);
    };
    for (let j = 0; j < N_INTR; j++) {
      if (!useDist && j >= 4) continue;
      col(j, [[0, total]], (xx, out) => views.forEach((_, i) => viewResiduals(xx, i, out, offsets[i])));
    }
    views.forEach((v, i) => {
      const rows: [number, number][] = [[offsets[i], offsets[i] + 2 * v.object.length]];
      for (let k = 0; k < 6; k++) col(N_INTR + 6 * i + k, rows, (xx, out) => viewResiduals(xx, i, out, offsets[i]));
    });
    return J;
  };
  // Without distortion the k/p columns are zero; LM's Marquardt scaling keeps them at 0.
  const fit = levenbergMarquardt(f, x0, { jacobian, maxIterations: 100 });
  const x = fit.x;
  const camera = cameraOf(x, width, height);
  const poses = views.map((_, i) => poseFromVectors(x.slice(N_INTR + 6 * i, N_INTR + 6 * i + 3), x.slice(N_INTR + 6 * i + 3, N_INTR + 6 * i + 6)));
  const nPts = total / 2;
  const rms = Math.sqrt((2 * fit.cost) / nPts);
  const perViewRms = views.map((v, i) => {
    let ss = 0;
    for (let r = offsets[i]; r < offsets[i] + 2 * v.object.length; r++) ss += fit.residuals[r] ** 2;
    return Math.sqrt(ss / v.object.length);
  });
  return { camera, rms, perViewRms, poses, stdDev: intrinsicStdDev(jacobian(x), fit.residuals, useDist), closedForm };
}

/** σ of the intrinsics from (JᵀJ)⁻¹·σ², σ² = ‖r‖² / (m − n) (OpenCV's calibrateCameraExtended does the same). */
function intrinsicStdDev(J: Mat, r: Vec, useDist: boolean): IntrinsicsResult["stdDev"] {
  let cols = J[0].map((_, j) => j);
  if (!useDist) cols = cols.filter((j) => j < 4 || j >= N_INTR);
  const Jr = J.map((row) => cols.map((j) => row[j]));
  const A = gram(Jr);
  const dof = Math.max(1, r.length - cols.length);
  const s2 = r.reduce((s, v) => s + v * v, 0) / dof;
  const names = ["fx", "fy", "cx", "cy", "k1", "k2", "p1", "p2"] as const;
  const out = { fx: 0, fy: 0, cx: 0, cy: 0, k1: 0, k2: 0, p1: 0, p2: 0 };
  names.forEach((name, j) => {
    const k = cols.indexOf(j);
    if (k < 0) return;
    const e = new Array<number>(cols.length).fill(0);
    e[k] = 1;
    try {
      out[name] = Math.sqrt(Math.max(0, solve(A, e)[k] * s2));
    } catch {
      out[name] = Number.NaN;
    }
  });
  return out;
}
