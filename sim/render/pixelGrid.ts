/**
 * The pixel grid of a calibrated camera: each pixel's normalised ray (distortion undone, as OpenCV's
 * undistortPoints), and for lens distortion a remap from an undistorted pinhole image that covers every ray, which
 * is how the rasteriser renders a distorted camera (render pinhole, then look up each output pixel).
 */
import { distort, undistortPixel, type CameraModel } from "../../calibration/CameraModel.ts";
import type { Pinhole } from "./Rasterizer.ts";

/** Normalised rays of the pixels of a pinhole grid. */
export function pinholeRays(k: Pick<Pinhole, "width" | "height" | "fx" | "fy" | "cx" | "cy">): Float32Array {
  const xy = new Float32Array(2 * k.width * k.height);
  for (let v = 0, p = 0; v < k.height; v++) {
    for (let u = 0; u < k.width; u++, p++) {
      xy[2 * p] = (u - k.cx) / k.fx;
      xy[2 * p + 1] = (v - k.cy) / k.fy;
    }
  }
  return xy;
}

/** What a camera model renders through. */
export interface PixelGrid {
  /** The camera's own pixel rays (for ray casting). */
  rays: Float32Array;
  /** The pinhole image the rasteriser draws; the camera's own intrinsics when there is no distortion. */
  pinhole: Pinhole;
  pinholeRays: Float32Array;
  /** Output pixel → pinhole pixel; null when the two grids are the same. */
  remap: Int32Array | null;
  /**
   * Pixels no ray of the lens model reaches (far corners of a strongly distorted model, where the polynomial folds
   * back and undistortion does not converge): rendered as background. Null when there are none.
   */
  invalid: Uint8Array | null;
}

/** Largest pinhole image (relative to the output) drawn for a strongly distorted lens. */
const MAX_PINHOLE_SCALE = 3;

/** The grid of `cam`, with the near clipping distance `near` (m). */
export function pixelGrid(cam: CameraModel, near: number): PixelGrid {
  const n = cam.width * cam.height;
  const own: Pinhole = { width: cam.width, height: cam.height, fx: cam.fx, fy: cam.fy, cx: cam.cx, cy: cam.cy, near };
  const distorted = cam.k1 !== 0 || cam.k2 !== 0 || cam.p1 !== 0 || cam.p2 !== 0;
  if (!distorted) {
    const rays = pinholeRays(own);
    return { rays, pinhole: own, pinholeRays: rays, remap: null, invalid: null };
  }
  const rays = new Float32Array(2 * n);
  const invalid = new Uint8Array(n);
  let anyInvalid = false;
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (let v = 0, p = 0; v < cam.height; v++) {
    for (let u = 0; u < cam.width; u++, p++) {
      const [x, y] = undistortPixel(cam, u, v);
      // Keep only rays that distort back onto their pixel.
      const [xd, yd] = distort(cam, x, y);
      if (!(Math.hypot(cam.fx * xd + cam.cx - u, cam.fy * yd + cam.cy - v) < 0.05)) {
        invalid[p] = 1;
        anyInvalid = true;
        continue;
      }
      rays[2 * p] = x;
      rays[2 * p + 1] = y;
      x0 = Math.min(x0, x);
      x1 = Math.max(x1, x);
      y0 = Math.min(y0, y);
      y1 = Math.max(y1, y);
    }
  }
  // Same focal length in pixels, so the pinhole image has the output's sampling density at the centre.
  const width = Math.min(MAX_PINHOLE_SCALE * cam.width, Math.ceil((x1 - x0) * cam.fx) + 1);
  const height = Math.min(MAX_PINHOLE_SCALE * cam.height, Math.ceil((y1 - y0) * cam.fy) + 1);
  const pinhole: Pinhole = { width, height, fx: cam.fx, fy: cam.fy, cx: -x0 * cam.fx, cy: -y0 * cam.fy, near };
  const remap = new Int32Array(n);
  for (let p = 0; p < n; p++) {
    const u = Math.min(width - 1, Math.max(0, Math.round(pinhole.fx * rays[2 * p] + pinhole.cx)));
    const v = Math.min(height - 1, Math.max(0, Math.round(pinhole.fy * rays[2 * p + 1] + pinhole.cy)));
    remap[p] = v * width + u;
  }
  return { rays, pinhole, pinholeRays: pinholeRays(pinhole), remap, invalid: anyInvalid ? invalid : null };
}
