/**
 * Pose of a planar target (z = 0 in its own frame) from one image: homography on undistorted
 * normalised coordinates gives the initial pose (Zhang 2000, §3.1), Levenberg–Marquardt refines it on
 * the pixel reprojection error.
 */
import type { CameraModel } from "./CameraModel.ts";
import { project, undistortPixel } from "./CameraModel.ts";
import { findHomography, type Point2 } from "./homography.ts";
import { type Mat, type Vec, cross, inv3, matVec, norm } from "./linalg.ts";
import { levenbergMarquardt } from "./levenbergMarquardt.ts";
import { type Pose, nearestRotation, poseFromVectors, rotationVector, transformPoint } from "./rotation.ts";

/** camera←target pose from a plane homography H ≃ K·[r1 r2 t]. */
export function poseFromHomography(K: Mat, H: Mat): Pose {
  const Ki = inv3(K);
  const h = (c: number) => matVec(Ki, [H[0][c], H[1][c], H[2][c]]);
  const h1 = h(0);
  const h2 = h(1);
  const h3 = h(2);
  let lambda = 1 / norm(h1);
  if (h3[2] * lambda < 0) lambda = -lambda; // the target is in front of the camera
  const r1 = h1.map((v) => v * lambda);
  const r2 = h2.map((v) => v * lambda);
  const r3 = cross(r1, r2);
  const R = nearestRotation([
    [r1[0], r2[0], r3[0]],
    [r1[1], r2[1], r3[1]],
    [r1[2], r2[2], r3[2]],
  ]);
  return { R, t: h3.map((v) => v * lambda) };
}

/** Pixel residuals (projected − observed) of target points under a pose. */
export function reprojectionResiduals(cam: CameraModel, pose: Pose, object: readonly Vec[], image: readonly Point2[], out: Vec = [], offset = 0): Vec {
  for (let i = 0; i < object.length; i++) {
    const [u, v] = project(cam, transformPoint(pose, object[i]));
    out[offset + 2 * i] = u - image[i][0];
    out[offset + 2 * i + 1] = v - image[i][1];
  }
  return out;
}

/** camera←target pose of a planar target seen at `image` pixels; also returns the RMS reprojection error. */
export function solvePlanarPose(cam: CameraModel, object: readonly Vec[], image: readonly Point2[]): { pose: Pose; rms: number } {
  if (object.some((p) => Math.abs(p[2]) > 1e-9)) throw new Error("solvePlanarPose: target points must lie in their z = 0 plane");
  const H = findHomography(
    object.map((p) => [p[0], p[1]] as Point2),
    image.map(([u, v]) => undistortPixel(cam, u, v)),
  );
  const init = poseFromHomography([[1, 0, 0], [0, 1, 0], [0, 0, 1]], H);
  const x0 = [...rotationVector(init.R), ...init.t];
  const f = (x: Vec) => reprojectionResiduals(cam, poseFromVectors(x.slice(0, 3), x.slice(3, 6)), object, image);
  const fit = levenbergMarquardt(f, x0, { maxIterations: 50 });
  const pose = poseFromVectors(fit.x.slice(0, 3), fit.x.slice(3, 6));
  return { pose, rms: Math.sqrt((2 * fit.cost) / object.length) };
}
