/**
 * Camera frames → ONNX feeds, for every package that sees cameras (policy.json observation.images): the diffusion
 * base (sampler.onnx / encoder.onnx) and the residual on top of it (residual.onnx). Frames go in as the camera sends
 * them, uint8 [1, H, W, 3] packed rgb8; the graphs scale them, and nothing is resized here.
 */
import type { ImageInput } from "./PolicyPackage.ts";
import type { WireTensor } from "./InferenceClient.ts";
import { PolicyInputError } from "./PolicyInputError.ts";
import type { RgbFrame } from "./vla/preprocess.ts";

/** camera name → the tick's frame (rgb8, packed rows), for a policy that sees cameras. */
export type CameraFrames = Readonly<Record<string, RgbFrame>>;

/**
 * The frames of `cams` as feeds (uint8 [1, H, W, 3] per `image.<camera>` input); throws {@link PolicyInputError}
 * (`bad_image`) naming the camera and `who` (the policy) when a frame is missing, of another size, or not packed rgb8.
 * {} when `cams` is empty (a state-only policy).
 */
export function imageFeeds(cams: readonly ImageInput[], images: CameraFrames | undefined, who: string): Record<string, WireTensor> {
  const out: Record<string, WireTensor> = {};
  for (const img of cams) {
    const f = images?.[img.camera];
    if (!f) throw new PolicyInputError("bad_image", `no frame from camera "${img.camera}": ${who} sees it (${img.width}×${img.height} rgb8) — check that the camera publishes /camera/${img.camera}/image`);
    if (f.width !== img.width || f.height !== img.height) {
      throw new PolicyInputError("bad_image", `camera "${img.camera}" sends ${f.width}×${f.height} frames but ${who} was trained on ${img.width}×${img.height} — set the camera's width/height to ${img.width}×${img.height} in the launch file (the policy does not resize)`);
    }
    if (f.data.length !== f.width * f.height * 3) throw new PolicyInputError("bad_image", `camera "${img.camera}": a ${f.width}×${f.height} rgb8 frame has ${f.width * f.height * 3} bytes, found ${f.data.length} — the camera must send packed rgb8`);
    // A copy: feeds are transferred to the inference worker (their buffers detach), and the frame itself is still
    // the camera's message, which the recorder and the experience link write after this tick.
    out[img.input] = { data: new Uint8Array(f.data), dims: [1, f.height, f.width, 3] };
  }
  return out;
}

/** Throws {@link PolicyInputError} (`bad_image`) unless `feeds` holds an input for every camera of `cams`. */
export function requireImageFeeds(cams: readonly ImageInput[], feeds: Readonly<Record<string, WireTensor>>, who: string): void {
  if (cams.some((c) => feeds[c.input] === undefined)) throw new PolicyInputError("bad_image", `${who} sees cameras ${cams.map((c) => c.camera).join(", ")}: pass their frames (imageFeeds)`);
}

/** All-zero frames for `cams` (warm-up and probe inputs), fresh buffers on every call (feeds are transferred to the worker). */
export function blankImageFeeds(cams: readonly ImageInput[]): Record<string, WireTensor> {
  return Object.fromEntries(cams.map((img) => [img.input, { data: new Uint8Array(img.height * img.width * 3), dims: [1, img.height, img.width, 3] }]));
}

/** A [1, H, W, 3] uint8 frame repeated b times as [b, H, W, 3] (a fresh buffer: feeds are transferred to the worker). */
export function tileImage(t: WireTensor, b: number): WireTensor {
  const src = t.data as Uint8Array;
  const out = new Uint8Array(src.length * b);
  for (let i = 0; i < b; i++) out.set(src, i * src.length);
  return { data: out, dims: [b, ...t.dims.slice(1)] };
}

/** Differences between the cameras two packages see (names, order, inputs, frame sizes), one sentence each; [] = the same. */
export function cameraMismatches(mine: readonly ImageInput[], theirs: readonly ImageInput[], theirName: string): string[] {
  const show = (l: readonly ImageInput[]) => (l.length ? l.map((c) => `${c.camera} ${c.width}×${c.height}`).join(", ") : "none");
  const same = mine.length === theirs.length && mine.every((c, i) => c.camera === theirs[i].camera && c.input === theirs[i].input && c.width === theirs[i].width && c.height === theirs[i].height);
  return same ? [] : [`observation.images [${show(mine)}] differ from ${theirName}'s [${show(theirs)}] — a residual sees the cameras its base sees, at the same sizes`];
}
