/**
 * Camera frames compressed on the robot (rlft-exp/1 `encoding: "zlib"`, docs/protocol.md § Camera frames): each frame's
 * H × W × 3 rgb8 bytes are one zlib stream (RFC 1950, level 1), deflated on libuv's thread pool so the control tick
 * never waits for zlib. The learner stores the streams as they come (learner/rlft_learner/buffers/frames.py).
 * `inflateFrame` is the bounded inverse both decoders share in spirit with learner/rlft_learner/transport/protocol.py.
 */
import { deflate, inflateSync } from "node:zlib";

/** Frame encodings a robot may send: raw bytes, or one zlib stream per frame. */
export const FRAME_ENCODINGS = ["raw", "zlib"] as const;
export type FrameEncoding = (typeof FRAME_ENCODINGS)[number];

/**
 * zlib level of robot-side frames. Level 1 is the fastest; on rendered SO-101 84 × 84 frames it gives 4.2–5.3 kB per
 * frame (21.2 kB raw), level 6 3.0–4.2 kB at 1.5–3× the CPU (docs/results.md § Experience link with frames).
 */
export const FRAME_ZLIB_LEVEL = 1;

/** A frame's zlib stream that does not hold exactly its declared bytes (cut short, longer, trailing bytes, not zlib). */
export class FrameInflateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FrameInflateError";
  }
}

const FIX = "compress each frame's H x W x 3 rgb8 bytes as one zlib stream (bridge/frameCodec.ts)";

/**
 * The `size` bytes zlib stream `blob` holds. Never inflates more than `size` bytes (a stream holding more is refused,
 * not inflated); `where` names the frame in the error.
 */
export function inflateFrame(blob: Uint8Array, size: number, where: string): Buffer {
  let out: { buffer: Buffer; engine: { bytesWritten: number } };
  try {
    out = inflateSync(blob, { maxOutputLength: Math.max(1, size), info: true }) as unknown as typeof out;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === "ERR_BUFFER_TOO_LARGE") throw new FrameInflateError(`${where} inflates to more than its declared ${size} bytes; ${FIX}`);
    if (err.code === "Z_BUF_ERROR") throw new FrameInflateError(`${where} is a zlib stream cut short (${blob.byteLength} bytes); ${FIX}`);
    throw new FrameInflateError(`${where} is not a valid zlib stream (${err.message}); ${FIX}`);
  }
  const used = out.engine.bytesWritten;
  if (used !== blob.byteLength) throw new FrameInflateError(`${where} has ${blob.byteLength - used} bytes after its zlib stream; ${FIX}`);
  if (out.buffer.byteLength !== size) throw new FrameInflateError(`${where} inflates to ${out.buffer.byteLength} bytes; its declared shape needs ${size}; ${FIX}`);
  // zlib's output may be a view of a larger chunk: an exact-size copy, so a kept frame keeps only its own bytes.
  if (out.buffer.buffer.byteLength === size) return out.buffer;
  const copy = Buffer.allocUnsafeSlow(size); // not from Buffer's shared pool either
  out.buffer.copy(copy);
  return copy;
}

/** One frame deflated at {@link FRAME_ZLIB_LEVEL} on the thread pool. */
export function deflateFrame(rgb: Uint8Array): Promise<Buffer> {
  return new Promise((resolve, reject) => deflate(rgb, { level: FRAME_ZLIB_LEVEL }, (e, out) => (e ? reject(e) : resolve(out))));
}

/**
 * Compresses the frames of transitions as they are pushed, each frame once: a transition's next frame is the next
 * transition's frame (the same bytes object, nodes/ExperienceNode.ts), so the last `recent` frames are remembered by
 * identity. Older frames are forgotten, so a frame seen again much later is compressed again (as a new one would be).
 */
export class FrameCompressor {
  #recent = new Map<Uint8Array, Promise<Buffer>>();
  readonly #keep: number;
  /** Frames deflated, and frames found among the recent ones. */
  deflated = 0;
  reused = 0;

  constructor(recent = 16) {
    this.#keep = recent;
  }

  /** The zlib stream of `rgb` (started now unless `rgb` was among the recent frames). */
  compress(rgb: Uint8Array): Promise<Buffer> {
    const known = this.#recent.get(rgb);
    if (known !== undefined) {
      this.reused++;
      return known;
    }
    const job = deflateFrame(rgb);
    job.catch(() => undefined); // awaited by whoever encodes the batch
    this.deflated++;
    this.#recent.set(rgb, job);
    if (this.#recent.size > this.#keep) this.#recent.delete(this.#recent.keys().next().value!);
    return job;
  }
}
