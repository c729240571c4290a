/**
 * What a renderer's visibility pass leaves per pixel, before shading: which geom is seen, how far along the optical
 * axis, and its surface normal in the camera's optical frame (x right, y down, z forward; OpenCV / ROS convention).
 */

/** Per-pixel visibility (row-major, top row first). */
export interface GBuffer {
  width: number;
  height: number;
  /** MuJoCo geom id seen at each pixel; −1 = nothing (background). */
  geom: Int32Array;
  /** z-depth along the optical axis, metres; +Infinity where nothing was hit (MuJoCo's depth image is z-depth too). */
  depth: Float32Array;
  /** Unit surface normal in the optical frame, 3 per pixel, facing the camera. */
  normal: Float32Array;
}

/** A cleared G-buffer of w × h. */
export function createGBuffer(width: number, height: number): GBuffer {
  const n = width * height;
  return { width, height, geom: new Int32Array(n).fill(-1), depth: new Float32Array(n).fill(Infinity), normal: new Float32Array(3 * n) };
}
