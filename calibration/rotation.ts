/**
 * Rotations and rigid transforms as plain data: R is a 3×3 row-major matrix, a Pose maps points of
 * its child frame into its parent frame (p_parent = R·p_child + t), the convention of tf2 and OpenCV.
 */
import { type Mat, type Vec, det3, inverseSqrtSym, matMul, matVec, transpose } from "./linalg.ts";

/** A rigid transform parent←child; t in metres. */
export interface Pose {
  R: Mat;
  t: Vec;
}

/** [v]×, the cross-product matrix. */
export function skew(v: Vec): Mat {
  return [
    [0, -v[2], v[1]],
    [v[2], 0, -v[0]],
    [-v[1], v[0], 0],
  ];
}

/** exp: rotation vector (axis·angle, rad) → rotation matrix (Rodrigues' formula). */
export function rodrigues(w: Vec): Mat {
  const th = Math.hypot(w[0], w[1], w[2]);
  if (th < 1e-12) {
    const K = skew(w);
    return [
      [1, K[0][1], K[0][2]],
      [K[1][0], 1, K[1][2]],
      [K[2][0], K[2][1], 1],
    ];
  }
  const k = w.map((x) => x / th);
  const c = Math.cos(th);
  const s = Math.sin(th);
  const C = 1 - c;
  return [
    [c + k[0] * k[0] * C, k[0] * k[1] * C - k[2] * s, k[0] * k[2] * C + k[1] * s],
    [k[1] * k[0] * C + k[2] * s, c + k[1] * k[1] * C, k[1] * k[2] * C - k[0] * s],
    [k[2] * k[0] * C - k[1] * s, k[2] * k[1] * C + k[0] * s, c + k[2] * k[2] * C],
  ];
}

/** log: rotation matrix → rotation vector (axis·angle, angle in [0, π]). */
export function rotationVector(R: Mat): Vec {
  const cos = Math.min(1, Math.max(-1, (R[0][0] + R[1][1] + R[2][2] - 1) / 2));
  const th = Math.acos(cos);
  const v = [R[2][1] - R[1][2], R[0][2] - R[2][0], R[1][0] - R[0][1]];
  if (th < 1e-9) return v.map((x) => x / 2);
  if (Math.PI - th < 1e-6) {
    // Near π the antisymmetric part vanishes: take the axis from the symmetric part (R + I)/2 = k·kᵀ.
    const d = [R[0][0], R[1][1], R[2][2]];
    const i = d.indexOf(Math.max(...d));
    const k = [0, 1, 2].map((j) => (j === i ? Math.sqrt(Math.max(0, (R[i][i] + 1) / 2)) : (R[i][j] + R[j][i]) / 4 / Math.sqrt(Math.max(1e-12, (R[i][i] + 1) / 2))));
    const n = Math.hypot(k[0], k[1], k[2]);
    return k.map((x) => (x / n) * th);
  }
  const s = th / (2 * Math.sin(th));
  return v.map((x) => x * s);
}

/** Angle of the relative rotation between R1 and R2, in radians. */
export function rotationAngle(R1: Mat, R2: Mat): number {
  const R = matMul(transpose(R1), R2);
  return Math.acos(Math.min(1, Math.max(-1, (R[0][0] + R[1][1] + R[2][2] - 1) / 2)));
}

/** The rotation closest to M in the Frobenius norm (polar decomposition M·(MᵀM)^-½), det +1. */
export function nearestRotation(M: Mat): Mat {
  const R = matMul(M, inverseSqrtSym(matMul(transpose(M), M)));
  if (det3(R) < 0) throw new Error("nearestRotation: the matrix is a reflection (det < 0); check the frame handedness of the input");
  return R;
}

/** a·b: parent←child composed with child←grandchild. */
export function compose(a: Pose, b: Pose): Pose {
  return { R: matMul(a.R, b.R), t: matVec(a.R, b.t).map((x, i) => x + a.t[i]) };
}

/** The inverse transform. */
export function invert(p: Pose): Pose {
  const Rt = transpose(p.R);
  return { R: Rt, t: matVec(Rt, p.t).map((x) => -x) };
}

/** Applies a pose to a point. */
export function transformPoint(p: Pose, x: Vec): Vec {
  return matVec(p.R, x).map((v, i) => v + p.t[i]);
}

/** A pose from a rotation vector and a translation. */
export function poseFromVectors(rvec: Vec, t: Vec): Pose {
  return { R: rodrigues(rvec), t: [...t] };
}

/** Rotation matrix → unit quaternion [x, y, z, w] (w ≥ 0), as ROS messages carry it. */
export function quaternionFromMatrix(R: Mat): Vec {
  const v = rotationVector(R);
  const th = Math.hypot(v[0], v[1], v[2]);
  if (th < 1e-12) return [v[0] / 2, v[1] / 2, v[2] / 2, 1];
  const s = Math.sin(th / 2) / th;
  return [v[0] * s, v[1] * s, v[2] * s, Math.cos(th / 2)];
}

/** Unit quaternion [x, y, z, w] → rotation matrix. */
export function matrixFromQuaternion(q: Vec): Mat {
  const n = Math.hypot(q[0], q[1], q[2], q[3]);
  if (!(n > 0)) throw new Error(`Invalid quaternion [${q.join(", ")}]: expected a non-zero [x, y, z, w]`);
  const [x, y, z, w] = q.map((c) => c / n);
  return [
    [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
    [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
    [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
  ];
}
