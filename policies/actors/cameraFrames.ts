/**
 * The camera frames an actor may use on a tick: the latest frame of each camera it needs, at or before the tick and no
 * older than a limit. ActorNode hands an actor only frames stamped at or before the tick (never one from its future), and an
 * old one is as bad as none: the actor holds instead of acting on a scene that has moved on.
 */
import type { RgbFrame } from "../vla/preprocess.ts";
import type { ActorInput } from "./Actor.ts";
import { fromTime } from "../../contracts/msgs.ts";

/** camera → packed rgb8 frame, or the sentence saying why the actor cannot use them now. */
export function latestFrames(cameras: readonly string[], input: ActorInput, maxAgeSec: number): Record<string, RgbFrame> | string {
  const out: Record<string, RgbFrame> = {};
  for (const cam of cameras) {
    const img = input.images?.[cam];
    if (!img) return `no frame from camera ${cam} yet`;
    if (input.stamp) {
      const age = fromTime(input.stamp) - fromTime(img.stamp);
      if (age > maxAgeSec) return `camera ${cam}'s latest frame is ${age.toFixed(2)} s old (limit ${maxAgeSec} s)`;
    }
    if (img.encoding !== "rgb8") return `camera ${cam} sends ${img.encoding}; the policy takes rgb8`;
    if (img.step < img.width * 3 || img.data.length < img.step * img.height) return `camera ${cam}'s frame is truncated (${img.data.length} bytes for ${img.width}×${img.height}, step ${img.step})`;
    const data = img.step === img.width * 3 ? img.data : packRows(img.data, img.width, img.height, img.step);
    out[cam] = { width: img.width, height: img.height, data };
  }
  return out;
}

/** Rows of `step` bytes → packed rows of width × 3 bytes. */
export function packRows(data: Uint8Array, width: number, height: number, step: number): Uint8Array {
  const out = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) out.set(data.subarray(y * step, y * step + width * 3), y * width * 3);
  return out;
}

/** Indices of `want` in the observation names; throws naming the first missing one. */
export function indicesOf(want: readonly string[], have: readonly string[], what: string): number[] {
  return want.map((n) => {
    const i = have.indexOf(n);
    if (i < 0) throw new Error(`${what}: the observation has no "${n}" (has ${have.join(", ")})`);
    return i;
  });
}
