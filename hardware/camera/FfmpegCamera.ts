/**
 * A camera through `ffmpeg` as a child process: V4L2 devices (MJPEG or raw YUYV, decoded by ffmpeg) or any
 * lavfi source (tests use ffmpeg's own `testsrc`). Frames come out of ffmpeg's stdout as raw rgb24; their
 * presentation times come from the `showinfo` filter on stderr (for V4L2, `-ts mono2abs` turns the kernel's
 * capture timestamps into wall-clock time). Counts dropped frames from gaps in those times, restarts ffmpeg
 * with backoff when it dies (cable pulled, camera reset), and measures the camera→robot clock offset.
 *
 * Offset: for each frame, arrival (robot clock) − pts (camera clock) = offset + transport delay ≥ offset, so
 * the minimum over a sliding window estimates the offset (the frame that was delayed least); capture times
 * on the robot clock are pts + offset. A constant minimum delay (USB transfer, decode) remains in it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import type { CameraFrame, CameraSource } from "../../contracts/camera.ts";
import type { Time } from "../../runtime/Runtime.ts";

/** Options of an ffmpeg camera. */
export interface FfmpegCameraOptions {
  /** A V4L2 device ("/dev/video0") or "lavfi:<filtergraph>" (e.g. "lavfi:testsrc=size=64x48:rate=30"). */
  device: string;
  /** Output frame size (ffmpeg scales to it). */
  width: number;
  height: number;
  /** Frames per second asked of the camera. */
  fps: number;
  /** What the camera sends: mjpeg (most USB cameras at 30 fps) or raw (yuyv422). */
  inputFormat?: "mjpeg" | "raw";
  /** The ffmpeg binary. */
  ffmpeg?: string;
  /** First restart delay (doubles up to maxRestartDelayMs). */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
  /** The robot's clock in seconds (default wall time). */
  now?: () => number;
  logger?: { warn(msg: string): void; info(msg: string): void };
}

/** Counters and the measured clock offset. */
export interface CameraStats {
  frames: number;
  /** Frames missing from the stream (gaps in capture times). */
  dropped: number;
  restarts: number;
  /** Robot clock − camera clock (s), NaN until measured. */
  offsetSec: number;
  /** Mean arrival − corrected capture time (s): the latency above the minimum. */
  jitterSec: number;
}

/** A frame with its capture time on the robot clock. */
export interface TimedFrame extends CameraFrame {
  seq: number;
  /** Capture time, robot clock (s). */
  captureTime: number;
  /** Presentation time from ffmpeg (camera clock, s). */
  pts: number;
}

/** The ffmpeg arguments for a device (pure; exported for tests). */
export function ffmpegArgs(o: Pick<FfmpegCameraOptions, "device" | "width" | "height" | "fps" | "inputFormat">): string[] {
  const input = o.device.startsWith("lavfi:")
    ? ["-re", "-f", "lavfi", "-i", o.device.slice("lavfi:".length)]
    : ["-f", "v4l2", "-input_format", o.inputFormat === "raw" ? "yuyv422" : "mjpeg", "-framerate", String(o.fps), "-video_size", `${o.width}x${o.height}`, "-ts", "mono2abs", "-i", o.device];
  return ["-hide_banner", "-nostdin", "-loglevel", "info", ...input, "-vf", `scale=${o.width}:${o.height},showinfo`, "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"];
}

/** Turns ffmpeg's complaint about a device into the fix. */
export function cameraOpenError(device: string, stderr: string): Error {
  if (/No such file or directory/i.test(stderr)) return new Error(`Cannot open camera ${device}: no such device — list cameras with: ls /dev/video* (v4l2-ctl --list-devices), check the USB cable`);
  if (/Permission denied/i.test(stderr)) return new Error(`Cannot open camera ${device}: permission denied — add your user to the video group (sudo usermod -aG video $USER, then log out and in)`);
  if (/Device or resource busy/i.test(stderr)) return new Error(`Cannot open camera ${device}: busy — another program (a browser, cheese, another rlft) uses it; close it (fuser -v ${device})`);
  if (/Invalid argument|not supported|Cannot find a proper format/i.test(stderr)) return new Error(`Camera ${device} refused the format: ${lastLine(stderr)} — list what it supports with: ffmpeg -f v4l2 -list_formats all -i ${device}`);
  return new Error(`ffmpeg could not read camera ${device}: ${lastLine(stderr)}`);
}

function lastLine(s: string): string {
  return s.trim().split("\n").filter((l) => !/^\s*$/.test(l)).slice(-1)[0] ?? "(no output)";
}

/** The camera. */
export class FfmpegCamera implements CameraSource {
  readonly stats: CameraStats = { frames: 0, dropped: 0, restarts: 0, offsetSec: NaN, jitterSec: 0 };
  #o: FfmpegCameraOptions;
  #child: ChildProcess | null = null;
  #latest: TimedFrame | null = null;
  #stopped = false;
  #frameBytes: number;
  #chunks: Buffer[] = [];
  #chunkBytes = 0;
  #pts: number[] = [];
  #arrivals: { at: number; data: Uint8Array }[] = [];
  #lastPts = NaN;
  #window: number[] = [];
  #delay: number;
  #listeners: ((f: TimedFrame) => void)[] = [];
  #restartTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(opts: FfmpegCameraOptions) {
    this.#o = opts;
    this.#frameBytes = opts.width * opts.height * 3;
    this.#delay = opts.restartDelayMs ?? 500;
  }

  /** Starts ffmpeg and resolves on the first frame; rejects with the fix when the device cannot be opened. */
  async start(timeoutMs = 10_000): Promise<void> {
    const bin = this.#o.ffmpeg ?? "ffmpeg";
    if (this.#o.ffmpeg && !existsSync(bin)) throw new Error(`ffmpeg not found at ${bin} — install it (sudo apt-get install ffmpeg)`);
    this.#stopped = false;
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const off = this.onFrame(() => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        off();
        resolve();
      });
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        off();
        this.stop();
        reject(new Error(`camera ${this.#o.device}: no frame in ${timeoutMs} ms — check the device and its format`));
      }, timeoutMs);
      this.#spawn((err) => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        off();
        this.#stopped = true;
        reject(err);
        return true;
      });
    });
  }

  /** Calls `cb` for every frame; returns the function that stops it. */
  onFrame(cb: (f: TimedFrame) => void): () => void {
    this.#listeners.push(cb);
    return () => (this.#listeners = this.#listeners.filter((x) => x !== cb));
  }

  /** The newest frame (CameraSource); null before the first one. */
  capture(): (CameraFrame & { stamp?: Time }) | null {
    const f = this.#latest;
    if (!f) return null;
    const sec = Math.floor(f.captureTime);
    return { ...f, stamp: { sec, nanosec: Math.round((f.captureTime - sec) * 1e9) } };
  }

  /** The newest frame with its times. */
  latest(): TimedFrame | null {
    return this.#latest;
  }

  /** Kills ffmpeg (a test's stand-in for a pulled cable); the camera restarts it. */
  killProcess(): void {
    this.#child?.kill("SIGKILL");
  }

  /** Stops ffmpeg for good. */
  stop(): void {
    this.#stopped = true;
    if (this.#restartTimer) clearTimeout(this.#restartTimer);
    this.#child?.kill("SIGTERM");
    this.#child = null;
  }

  #now(): number {
    return this.#o.now ? this.#o.now() : (performance.timeOrigin + performance.now()) / 1000;
  }

  /** Starts ffmpeg; `onStartError` gets the open error of a child that dies before its first frame (returns true when it took it). */
  #spawn(onStartError?: (err: Error) => boolean): void {
    const child = spawn(this.#o.ffmpeg ?? "ffmpeg", ffmpegArgs(this.#o), { stdio: ["ignore", "pipe", "pipe"] });
    this.#child = child;
    this.#chunks = [];
    this.#chunkBytes = 0;
    this.#pts = [];
    this.#arrivals = [];
    let stderr = "";
    let gotFrame = false;
    const firstFrame = this.onFrame(() => {
      gotFrame = true;
      firstFrame();
    });
    child.stdout!.on("data", (d: Buffer) => this.#onStdout(d));
    let line = "";
    child.stderr!.on("data", (d: Buffer) => {
      const s = d.toString();
      if (stderr.length < 20_000) stderr += s;
      line += s;
      const lines = line.split("\n");
      line = lines.pop() ?? "";
      for (const l of lines) {
        const m = /showinfo.*\bn:\s*\d+\s+pts:\s*-?\d+\s+pts_time:(-?[\d.e+-]+)/.exec(l);
        if (m) {
          this.#pts.push(Number(m[1]));
          this.#pair();
        }
      }
    });
    child.on("error", (e) => {
      const err = (e as NodeJS.ErrnoException).code === "ENOENT" ? new Error("ffmpeg not found — install it (sudo apt-get install ffmpeg)") : e;
      if (!onStartError?.(err)) this.#o.logger?.warn(`camera ${this.#o.device}: ${err.message}`);
    });
    child.on("exit", (code, signal) => {
      firstFrame();
      if (this.#child === child) this.#child = null;
      if (this.#stopped) return;
      if (!gotFrame && onStartError?.(cameraOpenError(this.#o.device, stderr))) return;
      this.#o.logger?.warn(`camera ${this.#o.device}: ffmpeg ended (${signal ?? `exit ${code}`}); restarting in ${this.#delay} ms`);
      this.#restartTimer = setTimeout(() => {
        if (this.#stopped) return;
        this.stats.restarts++;
        this.#spawn();
      }, this.#delay);
      this.#delay = Math.min(this.#delay * 2, this.#o.maxRestartDelayMs ?? 5000);
    });
  }

  #onStdout(d: Buffer): void {
    this.#chunks.push(d);
    this.#chunkBytes += d.length;
    while (this.#chunkBytes >= this.#frameBytes) {
      const all = Buffer.concat(this.#chunks);
      const frame = new Uint8Array(all.subarray(0, this.#frameBytes));
      const rest = all.subarray(this.#frameBytes);
      this.#chunks = rest.length ? [rest] : [];
      this.#chunkBytes = rest.length;
      this.#arrivals.push({ at: this.#now(), data: frame });
      this.#pair();
    }
  }

  /** Frames (stdout) and their times (stderr) arrive on two pipes: pair them in order. */
  #pair(): void {
    while (this.#pts.length && this.#arrivals.length) {
      const pts = this.#pts.shift()!;
      const { at, data } = this.#arrivals.shift()!;
      const period = 1 / this.#o.fps;
      if (Number.isFinite(this.#lastPts)) {
        const gap = pts - this.#lastPts;
        if (gap > 1.5 * period) this.stats.dropped += Math.round(gap / period) - 1;
        // A restart starts a new time base: keep the offset window only within one run.
        if (gap < 0) this.#window = [];
      }
      this.#lastPts = pts;
      this.#window.push(at - pts);
      if (this.#window.length > 300) this.#window.shift();
      const offset = Math.min(...this.#window);
      this.stats.offsetSec = offset;
      const captureTime = pts + offset;
      this.stats.jitterSec += (at - captureTime - this.stats.jitterSec) / Math.min(++this.stats.frames, 100);
      this.#delay = this.#o.restartDelayMs ?? 500;
      const f: TimedFrame = { width: this.#o.width, height: this.#o.height, rgb: data, seq: this.stats.frames, captureTime, pts };
      this.#latest = f;
      for (const cb of [...this.#listeners]) cb(f);
    }
  }
}
