/**
 * The pinhole camera with radial–tangential distortion (k1, k2, p1, p2), as OpenCV and ROS
 * `sensor_msgs/CameraInfo` ("plumb_bob") define it:
 *   x' = x·(1 + k1·r² + k2·r⁴) + 2·p1·x·y + p2·(r² + 2x²),  y' = y·(1 + k1·r² + k2·r⁴) + p1·(r² + 2y²) + 2·p2·x·y,
 *   u = fx·x' + cx,  v = fy·y' + cy.
 */
import type { Vec } from "./linalg.ts";

/** Intrinsics of one camera; pixels, image size in pixels. */
export interface CameraModel {
  width: number;
  height: number;
  fx: number;
  fy: number;
  cx: number;
  cy: number;
  k1: number;
  k2: number;
  p1: number;
  p2: number;
}

/** Distorts normalised image coordinates. */
export function distort(cam: CameraModel, x: number, y: number): [number, number] {
  const r2 = x * x + y * y;
  const radial = 1 + cam.k1 * r2 + cam.k2 * r2 * r2;
  return [x * radial + 2 * cam.p1 * x * y + cam.p2 * (r2 + 2 * x * x), y * radial + cam.p1 * (r2 + 2 * y * y) + 2 * cam.p2 * x * y];
}

/** Projects a point in the camera frame (z forward) to pixels. */
export function project(cam: CameraModel, p: Vec): [number, number] {
  const [xd, yd] = distort(cam, p[0] / p[2], p[1] / p[2]);
  return [cam.fx * xd + cam.cx, cam.fy * yd + cam.cy];
}

/** Pixel → undistorted normalised coordinates (fixed-point iteration, as OpenCV's undistortPoints). */
export function undistortPixel(cam: CameraModel, u: number, v: number): [number, number] {
  const xd = (u - cam.cx) / cam.fx;
  const yd = (v - cam.cy) / cam.fy;
  let x = xd;
  let y = yd;
  for (let i = 0; i < 20; i++) {
    const r2 = x * x + y * y;
    const radial = 1 + cam.k1 * r2 + cam.k2 * r2 * r2;
    const dx = 2 * cam.p1 * x * y + cam.p2 * (r2 + 2 * x * x);
    const dy = cam.p1 * (r2 + 2 * y * y) + 2 * cam.p2 * x * y;
    x = (xd - dx) / radial;
    y = (yd - dy) / radial;
  }
  return [x, y];
}

/** The ROS `sensor_msgs/CameraInfo` fields of a model (plumb_bob, no rectification). */
export function cameraInfo(cam: CameraModel, frameId = "camera_optical_frame"): Record<string, unknown> {
  return {
    header: { stamp: { sec: 0, nanosec: 0 }, frame_id: frameId },
    height: cam.height,
    width: cam.width,
    distortion_model: "plumb_bob",
    d: [cam.k1, cam.k2, cam.p1, cam.p2, 0],
    k: [cam.fx, 0, cam.cx, 0, cam.fy, cam.cy, 0, 0, 1],
    r: [1, 0, 0, 0, 1, 0, 0, 0, 1],
    p: [cam.fx, 0, cam.cx, 0, 0, cam.fy, cam.cy, 0, 0, 0, 1, 0],
  };
}
