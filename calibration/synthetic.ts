/**
 * Synthetic calibration scenes with known ground truth: random target views that keep the whole board
 * in the image, and hand-eye stations for either camera mounting. Used by the accuracy tests and by
 * `rlft calibrate ... --synthetic` so a user can see what good residuals look like.
 */
import type { CameraModel } from "./CameraModel.ts";
import { project } from "./CameraModel.ts";
import { type Chessboard, boardPoints } from "./Chessboard.ts";
import type { Point2 } from "./homography.ts";
import { matVec } from "./linalg.ts";
import { type Pose, compose, invert, poseFromVectors, rodrigues, transformPoint } from "./rotation.ts";
import type { Rng } from "../sim/rng.ts";

/** The camera the tests use: a 640×480 webcam-like lens with visible barrel distortion. */
export const TEST_CAMERA: CameraModel = { width: 640, height: 480, fx: 600, fy: 605, cx: 322.5, cy: 238.2, k1: -0.21, k2: 0.06, p1: 0.0012, p2: -0.0007 };

/** The 9×6 board with 25 mm squares (OpenCV's sample pattern printed on A4). */
export const TEST_BOARD: Chessboard = { cols: 9, rows: 6, square: 0.025 };

/** Projects the board's corners; null when any falls outside the image (with a margin) or behind the camera. */
export function projectBoard(cam: CameraModel, pose: Pose, board: Chessboard, marginPx = 20): Point2[] | null {
  const out: Point2[] = [];
  for (const p of boardPoints(board)) {
    const c = transformPoint(pose, p);
    if (c[2] <= 0.05) return null;
    const uv = project(cam, c);
    if (uv[0] < marginPx || uv[1] < marginPx || uv[0] > cam.width - marginPx || uv[1] > cam.height - marginPx) return null;
    out.push(uv);
  }
  return out;
}

/** A random camera←board pose that keeps the board fully in view, tilted up to `maxTiltDeg`. */
export function randomBoardView(cam: CameraModel, board: Chessboard, rng: Rng, maxTiltDeg = 40, marginPx = 40, distance: [number, number] = [0.3, 0.7], maxRollRad = 0.4): Pose {
  const centre = [((board.cols - 1) * board.square) / 2, ((board.rows - 1) * board.square) / 2, 0];
  for (let tries = 0; tries < 1000; tries++) {
    const tilt = (maxTiltDeg * Math.PI) / 180;
    const R = matMulPose(rodrigues([0, 0, rng.uniform(-maxRollRad, maxRollRad)]), rodrigues([rng.uniform(-tilt, tilt), rng.uniform(-tilt, tilt), 0]));
    // Spread over the field of view and depth: for hand-eye, the spread of target positions pins down rotation;
    // for intrinsics, close views that fill the image pin down distortion.
    const d = rng.uniform(distance[0], distance[1]);
    const at = [rng.uniform(-0.3, 0.3) * d, rng.uniform(-0.22, 0.22) * d, d];
    const Rc = matVec(R, centre);
    const pose = { R, t: at.map((v, i) => v - Rc[i]) };
    if (projectBoard(cam, pose, board, marginPx)) return pose;
  }
  throw new Error("randomBoardView: no view keeps the board in the image; the camera's field of view is too narrow for this board");
}

function matMulPose(a: number[][], b: number[][]): number[][] {
  return compose({ R: a, t: [0, 0, 0] }, { R: b, t: [0, 0, 0] }).R;
}

/** Adds Gaussian noise (σ pixels) to image points. */
export function addPixelNoise(pts: Point2[], sigma: number, rng: Rng): Point2[] {
  return pts.map(([u, v]) => [u + sigma * rng.normal(), v + sigma * rng.normal()]);
}

/** Perturbs a pose by a random rotation of σ_deg per axis and a translation of σ_m per axis. */
export function perturbPose(p: Pose, sigmaDeg: number, sigmaM: number, rng: Rng): Pose {
  const s = (sigmaDeg * Math.PI) / 180;
  const dR = rodrigues([s * rng.normal(), s * rng.normal(), s * rng.normal()]);
  return { R: matMulPose(dR, p.R), t: p.t.map((v) => v + sigmaM * rng.normal()) };
}

/** Ground truth and stations of a hand-eye scene. */
export interface HandEyeScene {
  /** eye_in_hand: gripper←camera; eye_to_hand: base←camera. */
  X: Pose;
  /** eye_in_hand: base←target; eye_to_hand: gripper←target. */
  targetPose: Pose;
  /** base←gripper per station (exact). */
  robot: Pose[];
  /** camera←target per station (exact). */
  target: Pose[];
}

/** A hand-eye scene whose every station sees the whole board. */
export function handEyeScene(mode: "eye_in_hand" | "eye_to_hand", stations: number, cam: CameraModel, board: Chessboard, rng: Rng): HandEyeScene {
  const robot: Pose[] = [];
  const target: Pose[] = [];
  if (mode === "eye_in_hand") {
    // Camera 6 cm beside the flange, looking along the tool axis; board on the table 0.5 m in front.
    const X = poseFromVectors([0.05, -0.08, Math.PI / 2 + 0.1], [0.06, -0.01, 0.04]);
    const targetPose = poseFromVectors([Math.PI, 0, 0.3], [0.5, -0.1, 0.0]);
    while (robot.length < stations) {
      const view = randomBoardView(cam, board, rng, 40, 40, [0.3, 0.7], Math.PI / 2); // camera←target
      // base←gripper = base←target · target←camera · camera←gripper
      robot.push(compose(compose(targetPose, invert(view)), invert(X)));
      target.push(view);
    }
    return { X, targetPose, robot, target };
  }
  // Camera on a tripod 1 m from the base; board on the gripper, 8 cm off the flange.
  const X = poseFromVectors([-2.2, 0.1, 0.2], [1.0, 0.2, 0.6]);
  const targetPose = poseFromVectors([0.1, -0.2, 0.4], [0.0, 0.02, 0.08]);
  while (robot.length < stations) {
    const view = randomBoardView(cam, board, rng, 40, 40, [0.3, 0.7], Math.PI / 2);
    // base←gripper = base←camera · camera←target · target←gripper
    robot.push(compose(compose(X, view), invert(targetPose)));
    target.push(view);
  }
  return { X, targetPose, robot, target };
}

/** The corners of `board` as seen at pose (exact), for tests that add their own noise. */
export function boardCorners(cam: CameraModel, pose: Pose, board: Chessboard): Point2[] {
  return boardPoints(board).map((p) => project(cam, transformPoint(pose, p)));
}
