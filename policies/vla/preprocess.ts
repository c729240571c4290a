/**
 * Camera frame → model input, the same arithmetic as the learner's `preprocess_images` (learner/rlft_learner/algorithms/vla/model.py):
 * crop (top, left, height, width) → bilinear resize with half-pixel centres and no antialiasing (torch
 * `F.interpolate(mode="bilinear", align_corners=False)`, OpenCV `INTER_LINEAR`) → /255 → (x − mean) / std per
 * channel → planar NCHW (or interleaved NHWC) float32. Own code rather than sharp/libvips: their resize kernels differ
 * from the training transform, and at VLA input sizes (≤ 224²) this costs well under a millisecond.
 */

/** How one camera's frame is turned into a model input (policy.json `cameras[i]`). */
export interface ImageTransform {
  /** [top, left, height, width] in source pixels. */
  crop: readonly [number, number, number, number] | readonly number[];
  height: number;
  width: number;
  mean: readonly number[];
  std: readonly number[];
  layout: "NCHW" | "NHWC";
}

/** A packed rgb8 frame. */
export interface RgbFrame {
  width: number;
  height: number;
  /** width × height × 3 bytes, row-major (step = 3 × width). */
  data: Uint8Array;
}

/** Thrown for a frame the transform cannot take (wrong size for the crop, wrong byte count). */
export class FrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FrameError";
  }
}

/** Returns the model input of one frame (3 × height × width floats, in `t.layout`). */
export function preprocessFrame(frame: RgbFrame, t: ImageTransform): Float32Array {
  const [top, left, ch, cw] = t.crop;
  if (frame.data.length !== frame.width * frame.height * 3) {
    throw new FrameError(`frame of ${frame.width}×${frame.height} rgb8 needs ${frame.width * frame.height * 3} bytes, found ${frame.data.length}`);
  }
  if (top < 0 || left < 0 || top + ch > frame.height || left + cw > frame.width) {
    throw new FrameError(`crop [top ${top}, left ${left}, ${ch}×${cw}] does not fit a ${frame.height}×${frame.width} frame (policy.json cameras[].crop)`);
  }
  const H = t.height;
  const Wd = t.width;
  const out = new Float32Array(3 * H * Wd);
  const sy = ch / H;
  const sx = cw / Wd;
  const src = frame.data;
  const stride = frame.width * 3;
  const scale = [0, 1, 2].map((c) => 1 / (255 * t.std[c]));
  const offset = [0, 1, 2].map((c) => t.mean[c] / t.std[c]);
  for (let y = 0; y < H; y++) {
    // Half-pixel centres; torch clamps negative source coordinates to 0 and the upper neighbour to the edge.
    const fy = Math.max((y + 0.5) * sy - 0.5, 0);
    const y0 = Math.min(Math.floor(fy), ch - 1);
    const y1 = Math.min(y0 + 1, ch - 1);
    const wy = fy - y0;
    for (let x = 0; x < Wd; x++) {
      const fx = Math.max((x + 0.5) * sx - 0.5, 0);
      const x0 = Math.min(Math.floor(fx), cw - 1);
      const x1 = Math.min(x0 + 1, cw - 1);
      const wx = fx - x0;
      const r0 = (top + y0) * stride;
      const r1 = (top + y1) * stride;
      const c0 = (left + x0) * 3;
      const c1 = (left + x1) * 3;
      for (let c = 0; c < 3; c++) {
        const top_ = src[r0 + c0 + c] * (1 - wx) + src[r0 + c1 + c] * wx;
        const bot = src[r1 + c0 + c] * (1 - wx) + src[r1 + c1 + c] * wx;
        const v = (top_ * (1 - wy) + bot * wy) * scale[c] - offset[c];
        out[t.layout === "NCHW" ? c * H * Wd + y * Wd + x : (y * Wd + x) * 3 + c] = v;
      }
    }
  }
  return out;
}
