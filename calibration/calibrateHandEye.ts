/**
 * Hand-eye calibration, AX = XB, from robot poses (base←gripper, forward kinematics) and target poses
 * (camera←target, from solvePlanarPose):
 *  - eye-in-hand (camera on the gripper): X = gripper←camera, and base←target is constant;
 *  - eye-to-hand (camera fixed, target on the gripper): X = base←camera, gripper←target is constant;
 *    it is the same problem with the robot poses inverted (OpenCV's calibrateHandEye documents the same).
 * For every pair i<j: A = G_j⁻¹·G_i, B = C_j·C_i⁻¹, and A·X = X·B.
 * Rotation, two closed forms:
 *  - Tsai & Lenz, "A New Technique for Fully Autonomous and Efficient 3D Robotics Hand/Eye Calibration",
 *    IEEE T-RA 5(3), 1989: modified Rodrigues vectors P = 2·sin(θ/2)·n, skew(Pa + Pb)·P' = Pb − Pa;
 *  - Park & Martin, "Robot Sensor Calibration: Solving AX = XB on the Euclidean Group", IEEE T-RA 10(5), 1994:
 *    α = log Ra, β = log Rb, M = Σ β·αᵀ, R = (MᵀM)^-½·Mᵀ.
 * Translation (both): least squares of (Ra − I)·t = R·tb − ta over all pairs.
 * Refinement (when the target's image points are given): the closed forms weigh every pose equally, but a
 * planar target's pose from one image is poor in tilt (0.3–0.9° at 0.5 px on a 9×6 board) and good in the image
 * plane, so X and the constant target pose are refined jointly by Levenberg–Marquardt on the pixel reprojection
 * error of every corner at every station (as in Koide & Menegatti, "General Hand–Eye Calibration Based on
 * Reprojection Error Minimization", IEEE RA-L 4(2), 2019), starting from the closed form, with the robot poses
 * free to move within their stated noise (a maximum-likelihood bundle adjustment).
 */
import type { CameraModel } from "./CameraModel.ts";
import type { Point2 } from "./homography.ts";
import { levenbergMarquardt } from "./levenbergMarquardt.ts";
import { type Mat, type Vec, inverseSqrtSym, lstsq, matMul, matVec, norm, transpose } from "./linalg.ts";
import { type Pose, compose, invert, matrixFromQuaternion, nearestRotation, poseFromVectors, rotationAngle, rotationVector, skew } from "./rotation.ts";
import { reprojectionResiduals } from "./solvePlanarPose.ts";

/** Where the camera is. */
export type HandEyeMode = "eye_in_hand" | "eye_to_hand";
/** Which closed form solves the rotation. */
export type HandEyeMethod = "tsai" | "park";

/** Inputs: one robot pose and one target observation per station. */
export interface HandEyeInput {
  /** base←gripper at each station (the robot's forward kinematics). */
  robot: Pose[];
  /** camera←target at each station. */
  target: Pose[];
  mode: HandEyeMode;
  method?: HandEyeMethod;
  /** The target's corners as seen at each station: enables the reprojection refinement. */
  observations?: { camera: CameraModel; object: Vec[]; image: Point2[][] };
  /** Expected noise, which weighs image against robot in the refinement (defaults: 0.5 px, 0.1°, 1 mm). */
  noise?: HandEyeNoise;
}

/** 1-σ noise of the inputs. */
export interface HandEyeNoise {
  pixel?: number;
  robotDeg?: number;
  robotMm?: number;
}

/** Residual statistics (mean, max). */
export interface ResidualStats {
  meanDeg: number;
  maxDeg: number;
  meanMm: number;
  maxMm: number;
}

/** Result of a hand-eye calibration. */
export interface HandEyeResult {
  mode: HandEyeMode;
  method: HandEyeMethod;
  /** eye_in_hand: gripper←camera. eye_to_hand: base←camera. */
  X: Pose;
  /** The constant the data imply: eye_in_hand base←target, eye_to_hand gripper←target (mean over stations). */
  targetPose: Pose;
  /** ‖A·X − X·B‖ over all pairs: rotation in degrees, translation in mm. */
  pairResiduals: ResidualStats;
  /** How far each station's implied target pose is from the mean: a station far above the rest is a bad sample. */
  stationResiduals: { deg: number; mm: number }[];
  pairs: number;
  /** X from the closed form alone (equal to X when there are no observations). */
  closedForm: Pose;
  /** RMS pixel reprojection error after refinement, or null without observations. */
  reprojectionRms: number | null;
}

function motions(input: HandEyeInput): { A: Pose[]; B: Pose[] } {
  const G = input.mode === "eye_in_hand" ? input.robot : input.robot.map(invert);
  const C = input.target;
  const A: Pose[] = [];
  const B: Pose[] = [];
  for (let i = 0; i < G.length; i++) {
    for (let j = i + 1; j < G.length; j++) {
      A.push(compose(invert(G[j]), G[i]));
      B.push(compose(C[j], invert(C[i])));
    }
  }
  return { A, B };
}

/** Tsai–Lenz rotation. */
export function tsaiLenzRotation(A: Pose[], B: Pose[]): Mat {
  const rows: Mat = [];
  const rhs: Vec = [];
  const modRodrigues = (R: Mat): Vec => {
    const v = rotationVector(R);
    const th = norm(v);
    return th < 1e-12 ? v : v.map((x) => (2 * Math.sin(th / 2) * x) / th);
  };
  for (let k = 0; k < A.length; k++) {
    const Pa = modRodrigues(A[k].R);
    const Pb = modRodrigues(B[k].R);
    const S = skew(Pa.map((x, i) => x + Pb[i]));
    for (let r = 0; r < 3; r++) {
      rows.push(S[r]);
      rhs.push(Pb[r] - Pa[r]);
    }
  }
  const Pp = lstsq(rows, rhs);
  const n2 = Pp.reduce((s, x) => s + x * x, 0);
  const P = Pp.map((x) => (2 * x) / Math.sqrt(1 + n2));
  const q = P.map((x) => x / 2);
  const w = Math.sqrt(Math.max(0, 1 - q.reduce((s, x) => s + x * x, 0)));
  return matrixFromQuaternion([q[0], q[1], q[2], w]);
}

/** Park–Martin rotation. */
export function parkMartinRotation(A: Pose[], B: Pose[]): Mat {
  const M: Mat = [
    [0, 0, 0],
    [0, 0, 0],
    [0, 0, 0],
  ];
  for (let k = 0; k < A.length; k++) {
    const a = rotationVector(A[k].R);
    const b = rotationVector(B[k].R);
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) M[i][j] += b[i] * a[j];
  }
  return matMul(inverseSqrtSym(matMul(transpose(M), M)), transpose(M));
}

/** Translation of X given its rotation. */
export function handEyeTranslation(A: Pose[], B: Pose[], R: Mat): Vec {
  const rows: Mat = [];
  const rhs: Vec = [];
  for (let k = 0; k < A.length; k++) {
    const Ra = A[k].R;
    const Rtb = matVec(R, B[k].t);
    for (let r = 0; r < 3; r++) {
      rows.push([Ra[r][0] - (r === 0 ? 1 : 0), Ra[r][1] - (r === 1 ? 1 : 0), Ra[r][2] - (r === 2 ? 1 : 0)]);
      rhs.push(Rtb[r] - A[k].t[r]);
    }
  }
  return lstsq(rows, rhs);
}

/** Solves hand-eye calibration and reports residuals. */
export function calibrateHandEye(input: HandEyeInput): HandEyeResult {
  const n = input.robot.length;
  if (n !== input.target.length) throw new Error(`hand-eye: ${n} robot poses but ${input.target.length} target poses; each station needs one of each`);
  if (n < 3) throw new Error(`hand-eye: needs at least 3 stations with different orientations, got ${n}`);
  const method = input.method ?? "park";
  const { A, B } = motions(input);
  const maxAngle = Math.max(...A.map((a) => norm(rotationVector(a.R))));
  if (maxAngle < (5 * Math.PI) / 180) {
    throw new Error(`hand-eye: the gripper barely rotates between stations (largest relative rotation ${((maxAngle * 180) / Math.PI).toFixed(1)}°); rotate it by 20–40° about different axes`);
  }
  const R = method === "tsai" ? tsaiLenzRotation(A, B) : parkMartinRotation(A, B);
  const closedForm: Pose = { R, t: handEyeTranslation(A, B, R) };
  const G = input.mode === "eye_in_hand" ? input.robot : input.robot.map(invert);
  const refined = input.observations ? refineByReprojection(input, closedForm, { pixel: 0.5, robotDeg: 0.1, robotMm: 1, ...input.noise }) : null;
  const X = refined?.X ?? closedForm;

  let sumDeg = 0;
  let maxDeg = 0;
  let sumMm = 0;
  let maxMm = 0;
  for (let k = 0; k < A.length; k++) {
    const l = compose(A[k], X);
    const r = compose(X, B[k]);
    const deg = (rotationAngle(l.R, r.R) * 180) / Math.PI;
    const mm = 1000 * norm(l.t.map((v, i) => v - r.t[i]));
    sumDeg += deg;
    sumMm += mm;
    maxDeg = Math.max(maxDeg, deg);
    maxMm = Math.max(maxMm, mm);
  }
  const implied = G.map((g, i) => compose(compose(g, X), input.target[i]));
  const meanR = nearestRotation(implied.reduce((S, p) => S.map((row, i) => row.map((v, j) => v + p.R[i][j] / n)), [[0, 0, 0], [0, 0, 0], [0, 0, 0]] as Mat));
  const meanT = [0, 1, 2].map((i) => implied.reduce((s, p) => s + p.t[i], 0) / n);
  const targetPose = { R: meanR, t: meanT };
  const stationResiduals = implied.map((p) => ({ deg: (rotationAngle(p.R, meanR) * 180) / Math.PI, mm: 1000 * norm(p.t.map((v, i) => v - meanT[i])) }));
  return {
    mode: input.mode,
    method,
    X,
    targetPose,
    pairResiduals: { meanDeg: sumDeg / A.length, maxDeg, meanMm: sumMm / A.length, maxMm },
    stationResiduals,
    pairs: A.length,
    closedForm,
    reprojectionRms: refined?.rms ?? null,
  };
}

/**
 * Maximum-likelihood refinement: X, T and a small correction of every robot pose, with residuals
 * pixel error / σ_px and robot correction / (σ_rot, σ_t), so an accurate camera and a noisy robot (or the
 * reverse) are weighted as they deserve. camera←target_i = X⁻¹·G_i⁻¹·T with G_i the corrected robot pose.
 */
function refineByReprojection(input: HandEyeInput, X0: Pose, noise: Required<HandEyeNoise>): { X: Pose; rms: number } {
  const obs = input.observations!;
  const m = input.robot.length;
  if (obs.image.length !== m) throw new Error(`hand-eye: ${m} stations but image points for ${obs.image.length}`);
  const eyeInHand = input.mode === "eye_in_hand";
  const Gof = (p: Pose) => (eyeInHand ? p : invert(p));
  const T0 = compose(compose(Gof(input.robot[0]), X0), input.target[0]);
  const n = obs.object.length;
  const sr = (noise.robotDeg * Math.PI) / 180;
  const st = noise.robotMm / 1000;
  const rowsPer = 2 * n + 6;
  const station = (x: Vec, i: number, out: Vec) => {
    const X = poseFromVectors(x.slice(0, 3), x.slice(3, 6));
    const T = poseFromVectors(x.slice(6, 9), x.slice(9, 12));
    const d = x.slice(12 + 6 * i, 18 + 6 * i);
    const rb = input.robot[i];
    const corrected: Pose = { R: matMul(poseFromVectors(d.slice(0, 3), [0, 0, 0]).R, rb.R), t: rb.t.map((v, k) => v + d[3 + k]) };
    const off = rowsPer * i;
    reprojectionResiduals(obs.camera, compose(compose(invert(X), invert(Gof(corrected))), T), obs.object, obs.image[i], out, off);
    for (let k = 0; k < 2 * n; k++) out[off + k] /= noise.pixel;
    for (let k = 0; k < 3; k++) {
      out[off + 2 * n + k] = d[k] / sr;
      out[off + 2 * n + 3 + k] = d[3 + k] / st;
    }
  };
  const total = rowsPer * m;
  const f = (x: Vec): Vec => {
    const r = new Array<number>(total);
    for (let i = 0; i < m; i++) station(x, i, r);
    return r;
  };
  const jacobian = (x: Vec): Mat => {
    const J: Mat = Array.from({ length: total }, () => new Array<number>(x.length).fill(0));
    for (let j = 0; j < x.length; j++) {
      const h = 1e-7;
      const xp = [...x];
      const xm = [...x];
      xp[j] += h;
      xm[j] -= h;
      const stations = j < 12 ? [...Array(m).keys()] : [Math.floor((j - 12) / 6)];
      const rp = new Array<number>(total);
      const rm = new Array<number>(total);
      for (const i of stations) {
        station(xp, i, rp);
        station(xm, i, rm);
        for (let k = rowsPer * i; k < rowsPer * (i + 1); k++) J[k][j] = (rp[k] - rm[k]) / (2 * h);
      }
    }
    return J;
  };
  const x0 = [...rotationVector(X0.R), ...X0.t, ...rotationVector(T0.R), ...T0.t, ...new Array<number>(6 * m).fill(0)];
  const fit = levenbergMarquardt(f, x0, { jacobian, maxIterations: 50 });
  let ss = 0;
  for (let i = 0; i < m; i++) for (let k = 0; k < 2 * n; k++) ss += (fit.residuals[rowsPer * i + k] * noise.pixel) ** 2;
  return { X: poseFromVectors(fit.x.slice(0, 3), fit.x.slice(3, 6)), rms: Math.sqrt(ss / (n * m)) };
}
