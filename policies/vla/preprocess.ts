/**
 * Camera frame → model input, the same arithmetic as the learner's `preprocess_images` (learner/rlft_learner/algorithms/vla/model.py):
 * crop (top, left, height, width) → bilinear resize (stretched, or aspect-preserving into a letterbox: LeRobot's
 * resize_with_pad) with half-pixel centres and no antialiasing (torch
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
  /**
   * "stretch" (default): the crop is resized to height × width. "letterbox": aspect-preserving resize into height ×
   * width (LeRobot's / openpi's resize_with_pad: ratio = max(w / width, h / height), size = floor(side / ratio)), the
   * rest filled with `padValue`.
   */
  resize?: "stretch" | "letterbox";
  /** Where a letterboxed image sits: "bottom_right" (LeRobot pads left and top), "center" (openpi), "top_left". */
  padAlign?: "bottom_right" | "center" | "top_left";
  /** Fill of the letterbox bars in [0, 1] pixel units, before (x − mean) / std. Default 0 (black). */
  padValue?: number;
}

/** Where the resized image lands in the model input: its size and its top-left corner. */
export function letterboxBox(t: ImageTransform): { h: number; w: number; top: number; left: number } {
  const [, , ch, cw] = t.crop;
  if (t.resize !== "letterbox") return { h: t.height, w: t.width, top: 0, left: 0 };
  // Python's int(side / ratio) on the same doubles.
  const ratio = Math.max(cw / t.width, ch / t.height);
  const h = Math.min(t.height, Math.max(1, Math.trunc(ch / ratio)));
  const w = Math.min(t.width, Math.max(1, Math.trunc(cw / ratio)));
  const align = t.padAlign ?? "bottom_right";
  const top = align === "bottom_right" ? t.height - h : align === "center" ? Math.floor((t.height - h) / 2) : 0;
  const left = align === "bottom_right" ? t.width - w : align === "center" ? Math.floor((t.width - w) / 2) : 0;
  return { h, w, top, left };
}

/** The model input of a camera that sends nothing: every pixel the letterbox fill (black by default), normalised. */
export function blankFrame(t: ImageTransform): Float32Array {
  const H = t.height;
  const Wd = t.width;
  const out = new Float32Array(3 * H * Wd);
  const pad = t.padValue ?? 0;
  for (let c = 0; c < 3; c++) {
    const v = (pad - t.mean[c]) / t.std[c];
    for (let i = 0; i < H * Wd; i++) out[t.layout === "NCHW" ? c * H * Wd + i : i * 3 + c] = v;
  }
  return out;
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
  const box = letterboxBox(t);
  const out = t.resize === "letterbox" ? blankFrame(t) : new Float32Array(3 * H * Wd);
  const sy = ch / box.h;
  const sx = cw / box.w;
  const src = frame.data;
  const stride = frame.width * 3;
  const scale = [0, 1, 2].map((c) => 1 / (255 * t.std[c]));
  const offset = [0, 1, 2].map((c) => t.mean[c] / t.std[c]);
  for (let y = 0; y < box.h; y++) {
    // Half-pixel centres; torch clamps negative source coordinates to 0 and the upper neighbour to the edge.
    const fy = Math.max((y + 0.5) * sy - 0.5, 0);
    const y0 = Math.min(Math.floor(fy), ch - 1);
    const y1 = Math.min(y0 + 1, ch - 1);
    const wy = fy - y0;
    for (let x = 0; x < box.w; x++) {
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
        const oy = y + box.top;
        const ox = x + box.left;
        out[t.layout === "NCHW" ? c * H * Wd + oy * Wd + ox : (oy * Wd + ox) * 3 + c] = v;
      }
    }
  }
  return out;
}
