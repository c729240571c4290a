/** ffmpeg (the Debian package) as a child process: raw RGB frames in → video file, and video file → raw RGB frames out. */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";

/** The ffmpeg binary ($RLFT_FFMPEG or `ffmpeg` on PATH). */
export function ffmpegBin(): string {
  return process.env.RLFT_FFMPEG ?? "ffmpeg";
}

/** Encoder names for the codecs we write; LeRobot's own default is AV1 (libsvtav1). */
export const VIDEO_ENCODERS = { h264: "libx264", av1: "libsvtav1" } as const;

/** A video being written frame by frame. */
export interface VideoWriter {
  /** Appends one width × height × 3 RGB frame (waits when ffmpeg's input is full). */
  write(rgb: Uint8Array): Promise<void>;
  /** Closes the input and waits for ffmpeg to finish the file. */
  close(): Promise<void>;
}

function failure(child: ChildProcessWithoutNullStreams, what: string): Promise<void> {
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  return new Promise((resolve, reject) => {
    child.on("error", (e) => reject(new Error(`cannot run ${ffmpegBin()} (${e.message}) — install it (apt-get install ffmpeg) or set RLFT_FFMPEG`)));
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${what}: ffmpeg exited ${code}:\n${stderr}`))));
  });
}

/** Starts ffmpeg writing `path` from raw rgb24 frames at `fps`. */
export function openVideoWriter(path: string, opts: { width: number; height: number; fps: number; codec: keyof typeof VIDEO_ENCODERS }): VideoWriter {
  const args = ["-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", `${opts.width}x${opts.height}`, "-r", String(opts.fps), "-i", "-"];
  // yuv420p needs even sizes; every frame a keyframe-friendly GOP of 2 keeps random access cheap (LeRobot uses g=2).
  args.push("-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", VIDEO_ENCODERS[opts.codec], "-pix_fmt", "yuv420p", "-g", "2");
  if (opts.codec === "h264") args.push("-crf", "18", "-preset", "veryfast");
  else args.push("-crf", "30", "-preset", "12");
  args.push(path);
  const child = spawn(ffmpegBin(), args, { stdio: ["pipe", "ignore", "pipe"] }) as unknown as ChildProcessWithoutNullStreams;
  const done = failure(child, `encoding ${path}`);
  done.catch(() => undefined);
  return {
    write: (rgb) =>
      new Promise<void>((resolve, reject) => {
        if (child.stdin.destroyed) return reject(new Error(`ffmpeg writing ${path} stopped early`));
        if (child.stdin.write(rgb)) resolve();
        else child.stdin.once("drain", resolve);
      }),
    close: async () => {
      child.stdin.end();
      await done;
    },
  };
}

/**
 * Decodes `path` to rgb24 frames of width × height, calling `onFrame` for each in order: from `startSec` (an accurate
 * seek: ffmpeg decodes from the keyframe before and drops what precedes) and at most `frames` of them.
 */
export async function readVideoFrames(path: string, opts: { width: number; height: number; startSec?: number; frames?: number }, onFrame: (rgb: Uint8Array, index: number) => void): Promise<number> {
  const seek = opts.startSec ? ["-ss", opts.startSec.toFixed(6)] : [];
  const limit = opts.frames !== undefined ? ["-frames:v", String(opts.frames)] : [];
  const child = spawn(ffmpegBin(), ["-hide_banner", "-loglevel", "error", ...seek, "-i", path, ...limit, "-f", "rawvideo", "-pix_fmt", "rgb24", "-vf", `crop=${opts.width}:${opts.height}:0:0`, "-"], { stdio: ["ignore", "pipe", "pipe"] }) as unknown as ChildProcessWithoutNullStreams;
  const done = failure(child, `decoding ${path}`);
  const size = opts.width * opts.height * 3;
  let buf: Buffer = Buffer.alloc(0);
  let n = 0;
  child.stdout.on("data", (d: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    while (buf.length >= size) {
      onFrame(new Uint8Array(buf.subarray(0, size)), n++);
      buf = buf.subarray(size);
    }
  });
  await done;
  return n;
}
