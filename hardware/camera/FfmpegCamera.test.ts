/**
 * The ffmpeg camera against ffmpeg's own test source (lavfi testsrc, real time with -re): frames and their
 * capture times, drop counting, restart after the process dies, the clock offset, and open errors.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { FfmpegCamera, ffmpegArgs, cameraOpenError } from "./FfmpegCamera.ts";

const hasFfmpeg = spawnSync("ffmpeg", ["-version"]).status === 0;
const skip = hasFfmpeg ? false : "ffmpeg is not installed (sudo apt-get install ffmpeg)";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await sleep(10);
  }
}

test("testsrc frames arrive with capture times on the robot clock; the measured offset is stable", { skip }, async () => {
  // A robot clock 1000 s ahead of wall time: the offset must absorb it.
  const now = () => (performance.timeOrigin + performance.now()) / 1000 + 1000;
  const t0 = now();
  const cam = new FfmpegCamera({ device: "lavfi:testsrc=size=64x48:rate=30", width: 64, height: 48, fps: 30, now });
  const seen: { at: number; capture: number; offset: number }[] = [];
  cam.onFrame((f) => seen.push({ at: now(), capture: f.captureTime, offset: cam.stats.offsetSec }));
  try {
    await cam.start();
    await until(() => cam.stats.frames >= 15);
    const f = cam.capture()!;
    assert.equal(f.rgb.length, 64 * 48 * 3);
    assert.ok(f.rgb.some((b) => b > 0) && f.stamp!.sec > 0);
    assert.equal(cam.stats.dropped, 0);
    for (const s of seen) assert.ok(s.capture <= s.at + 1e-6, "a frame cannot be captured after it arrived");
    // testsrc starts at pts 0 when ffmpeg starts: offset ≈ start time on the robot clock.
    assert.ok(cam.stats.offsetSec > t0 - 1 && cam.stats.offsetSec < t0 + 5, `offset ${cam.stats.offsetSec} vs start ${t0}`);
    const late = seen.slice(5).map((s) => s.offset);
    assert.ok(Math.max(...late) - Math.min(...late) < 0.1, `offset wandered: ${Math.min(...late)}..${Math.max(...late)}`);
  } finally {
    cam.stop();
  }
});

test("missing frames are counted from gaps in capture times", { skip }, async () => {
  // Every 10th frame removed inside the source graph: gaps of two frame periods.
  const cam = new FfmpegCamera({ device: "lavfi:testsrc=size=32x24:rate=30,select='not(eq(mod(n\\,10)\\,5))'", width: 32, height: 24, fps: 30 });
  try {
    await cam.start();
    await until(() => cam.stats.frames >= 27);
    assert.ok(cam.stats.dropped >= 2 && cam.stats.dropped <= 4, `dropped ${cam.stats.dropped} of ~30`);
  } finally {
    cam.stop();
  }
});

test("when ffmpeg dies (cable pulled) the camera restarts it and frames continue", { skip }, async () => {
  const warnings: string[] = [];
  const cam = new FfmpegCamera({ device: "lavfi:testsrc=size=32x24:rate=30", width: 32, height: 24, fps: 30, restartDelayMs: 50, logger: { warn: (m) => warnings.push(m), info: () => undefined } });
  try {
    await cam.start();
    cam.killProcess();
    await until(() => cam.stats.restarts === 1);
    const n = cam.stats.frames;
    await until(() => cam.stats.frames > n + 3);
    assert.match(warnings.join("\n"), /ffmpeg ended \(SIGKILL\); restarting in 50 ms/);
  } finally {
    cam.stop();
  }
});

test("camera open errors name the fix; V4L2 arguments ask for MJPEG with kernel timestamps", { skip }, async () => {
  const cam = new FfmpegCamera({ device: "/dev/video_rlft_missing", width: 64, height: 48, fps: 30 });
  await assert.rejects(cam.start(), /Cannot open camera \/dev\/video_rlft_missing: no such device — list cameras with: ls \/dev\/video\*/);
  assert.match(cameraOpenError("/dev/video0", "[video4linux2,v4l2 @ 0x1] Cannot open video device /dev/video0: Permission denied").message, /add your user to the video group/);
  assert.match(cameraOpenError("/dev/video0", "Cannot open video device /dev/video0: Device or resource busy").message, /busy — another program/);
  const args = ffmpegArgs({ device: "/dev/video0", width: 640, height: 480, fps: 30, inputFormat: "mjpeg" }).join(" ");
  assert.match(args, /-f v4l2 -input_format mjpeg -framerate 30 -video_size 640x480 -ts mono2abs -i \/dev\/video0/);
  assert.match(ffmpegArgs({ device: "/dev/video0", width: 640, height: 480, fps: 30, inputFormat: "raw" }).join(" "), /-input_format yuyv422/);
});
