/**
 * Plane-to-image homography by the normalised direct linear transform (Hartley & Zisserman,
 * "Multiple View Geometry", 2nd ed., Alg. 4.2): both point sets are moved to their centroid and scaled
 * to mean distance √2 before the 2n×9 system is solved, which is what makes DLT numerically sound.
 */
import { type Mat, inv3, matMul, nullVector } from "./linalg.ts";

/** A 2-D point. */
export type Point2 = [number, number];

function normaliser(pts: readonly Point2[]): Mat {
  const n = pts.length;
  const mx = pts.reduce((s, p) => s + p[0], 0) / n;
  const my = pts.reduce((s, p) => s + p[1], 0) / n;
  const d = pts.reduce((s, p) => s + Math.hypot(p[0] - mx, p[1] - my), 0) / n;
  const s = d > 0 ? Math.SQRT2 / d : 1;
  return [
    [s, 0, -s * mx],
    [0, s, -s * my],
    [0, 0, 1],
  ];
}

function apply(T: Mat, p: Point2): Point2 {
  const w = T[2][0] * p[0] + T[2][1] * p[1] + T[2][2];
  return [(T[0][0] * p[0] + T[0][1] * p[1] + T[0][2]) / w, (T[1][0] * p[0] + T[1][1] * p[1] + T[1][2]) / w];
}

/** H with dst ≃ H·src (≥ 4 correspondences, no three collinear); scaled so H[2][2] = 1. */
export function findHomography(src: readonly Point2[], dst: readonly Point2[]): Mat {
  if (src.length !== dst.length) throw new Error(`findHomography: ${src.length} source points but ${dst.length} destination points`);
  if (src.length < 4) throw new Error(`findHomography: needs at least 4 correspondences, got ${src.length}`);
  const Ts = normaliser(src);
  const Td = normaliser(dst);
  const A: Mat = [];
  for (let i = 0; i < src.length; i++) {
    const [x, y] = apply(Ts, src[i]);
    const [u, v] = apply(Td, dst[i]);
    A.push([-x, -y, -1, 0, 0, 0, u * x, u * y, u]);
    A.push([0, 0, 0, -x, -y, -1, v * x, v * y, v]);
  }
  const h = nullVector(A);
  const Hn = [h.slice(0, 3), h.slice(3, 6), h.slice(6, 9)];
  const H = matMul(matMul(inv3(Td), Hn), Ts);
  const s = H[2][2];
  return H.map((row) => row.map((v) => v / s));
}

/** Applies a homography to a point. */
export function applyHomography(H: Mat, p: Point2): Point2 {
  return apply(H, p);
}
