/**
 * Transitions per second through the experience bridge (TS DEALER with its fsync'ed disk spool → the Python learner's
 * ROUTER, decode and replay insert, one batch in flight, as in a session) next to raw ZeroMQ loopback throughput for the
 * same bytes: a DEALER→ROUTER loop in this process with frames of exactly the sizes of an encoded transitions batch.
 * With `cameraFrames` (bench/linkFrames.ts) every transition carries those cameras' frames of obs and next_obs (issue 27).
 * With `frameEncoding: "zlib"` the bridge compresses each frame on the robot (bridge/frameCodec.ts): the ratio is then
 * against raw request-reply carrying the same frames uncompressed (what the link carries without the bridge), and
 * `ratioWire` against raw request-reply carrying the bridge's own compressed bytes.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { stringify } from "yaml";
import { Dealer, Router } from "zeromq";
import { ExperienceBridge } from "../bridge/ExperienceBridge.ts";
import { encodeTransitions } from "../bridge/messages.ts";
import type { Transition, TransitionFrame } from "../contracts/Transition.ts";
import { withFrames } from "./linkFrames.ts";
import { deflateSync } from "node:zlib";
import { FRAME_ZLIB_LEVEL, type FrameEncoding } from "../bridge/frameCodec.ts";
import { PolicyPackage } from "../policies/PolicyPackage.ts";
import { startLearner } from "../app/learnerProcess.ts";
import { freePort } from "../app/ports.ts";

/** Result of {@link measureThroughput}. */
export interface ThroughputResult {
  transitions: number;
  batchSize: number;
  /** Bytes of one encoded transitions batch with raw frames, and its frame count. */
  batchBytes: number;
  batchFrames: number;
  /** How the bridge sent camera frames, and the bytes of one batch as it sent it (= batchBytes when raw). */
  frameEncoding: FrameEncoding;
  wireBatchBytes: number;
  /** mbPerSec: the batches' bytes with raw frames per second (what was delivered); wireMbPerSec: what crossed the wire. */
  bridge: { seconds: number; transitionsPerSec: number; mbPerSec: number; wireMbPerSec: number; durableSpool: boolean };
  /** Raw ZeroMQ, one batch in flight (send, wait for a small reply), like the bridge, with raw frames: the mean time of
   * one run just before the bridge and one just after (`transitionsPerSecRuns`), as other jobs' load moves it. */
  rawRequestReply: { seconds: number; transitionsPerSec: number; mbPerSec: number; transitionsPerSecRuns?: number[] };
  /** The same with the bridge's compressed batch (zlib frames only; null when raw). */
  rawRequestReplyWire: { seconds: number; transitionsPerSec: number; mbPerSec: number } | null;
  /** bridge / raw request-reply with the bridge's own bytes (= ratio when raw). */
  ratioWire: number;
  /** Raw ZeroMQ, pipelined (no waiting for replies): the socket's ceiling. */
  rawPipelined: { seconds: number; transitionsPerSec: number; mbPerSec: number };
  /** bridge / raw request-reply, for the same bytes and pattern. */
  ratio: number;
  /** Cameras each transition carried (none: the state-only link) and the learner's replay bytes per transition. */
  cameras: string[];
  replayBytesPerTransition: number | null;
}

function synthetic(i: number, obsDim: number, aDim: number): Transition {
  const v = (n: number, k: number) => Array.from({ length: n }, (_, j) => Math.sin(i * 0.37 + j * 1.3 + k));
  return {
    episode: Math.floor(i / 100), step: i % 100, obs: v(obsDim, 0), nextObs: v(obsDim, 1), baseAction: v(aDim, 2).map((x) => 0.5 * x),
    residualAction: v(aDim, 3).map((x) => 0.05 * x), action: v(aDim, 4).map((x) => 0.5 * x), nextBaseAction: v(aDim, 5).map((x) => 0.5 * x),
    reward: i % 100 === 99 ? 1 : 0, terminated: i % 100 === 99, truncated: false, intervention: i % 7 === 0,
    interventionSource: i % 7 === 0 ? "scripted_operator" : "", policyVersion: "bench",
  };
}

/** Runs both measurements with `count` transitions shaped like `basePackage`'s (a real learner serves the bridge). */
export async function measureThroughput(basePackage: string, count = 20_000, batchSize = 32, cameraFrames?: Record<string, TransitionFrame[]>, durable = true, frameEncoding: FrameEncoding = "raw"): Promise<ThroughputResult> {
  const base = await PolicyPackage.load(basePackage);
  const obsDim = base.json.observation.names.length;
  const aDim = base.json.action.names.length;
  const ts = Array.from({ length: count }, (_, i) => (cameraFrames ? withFrames(synthetic(i, obsDim, aDim), cameraFrames, i) : synthetic(i, obsDim, aDim)));
  const cameras = Object.keys(cameraFrames ?? {});
  let replayBytesPerTransition: number | null = null;
  const frames = encodeTransitions(1, "bench-0", 0, ts.slice(0, batchSize));
  const batchBytes = frames.reduce((a, f) => a + f.length, 0);
  const zlib = frameEncoding === "zlib" && cameras.length > 0;
  const wire = zlib ? encodeTransitions(1, "bench-0", 0, ts.slice(0, batchSize), { zlib: (rgb) => deflateSync(rgb, { level: FRAME_ZLIB_LEVEL }) }) : frames;
  const wireBatchBytes = wire.reduce((a, f) => a + f.length, 0);
  const batches = Math.ceil(count / batchSize);
  const mb = (s: number, bytes = batchBytes) => (batches * bytes) / s / 1e6;

  // Raw ZeroMQ loopback with the same frames: request-reply before and after the bridge (the machine's load moves), pipelined after.
  const raw = async (pipelined: boolean, frames: Buffer[]): Promise<number> => {
    const port = await freePort();
    const router = new Router({ linger: 0 });
    await router.bind(`tcp://127.0.0.1:${port}`);
    const dealer = new Dealer({ linger: 0 });
    dealer.connect(`tcp://127.0.0.1:${port}`);
    const ack = Buffer.from("ack");
    const serve = (async () => {
      for (let k = 0; k < batches; k++) {
        const [id] = await router.receive();
        await router.send([id, ack]);
      }
    })();
    // warm-up round trip
    await dealer.send(frames);
    await dealer.receive();
    const start = performance.now();
    if (pipelined) {
      const sender = (async () => {
        for (let k = 1; k < batches; k++) await dealer.send(frames);
      })();
      for (let k = 1; k < batches; k++) await dealer.receive();
      await sender;
    } else {
      for (let k = 1; k < batches; k++) {
        await dealer.send(frames);
        await dealer.receive();
      }
    }
    const sec = ((performance.now() - start) / 1000) * (batches / Math.max(1, batches - 1));
    await serve;
    dealer.close();
    router.close();
    return sec;
  };
  const rrBefore = await raw(false, frames);

  // 1. Through the bridge to the real learner (no updates: learning_starts is out of reach).
  const dir = mkdtempSync(join(tmpdir(), "rlft-bench-bridge-"));
  let bridgeSec = 0;
  try {
    const [p1, p2] = [await freePort(), await freePort()];
    const experience = `tcp://127.0.0.1:${p1}`;
    const cfgFile = join(dir, "learner.yaml");
    writeFileSync(cfgFile, stringify({ experience_bind: experience, policy_bind: `tcp://127.0.0.1:${p2}`, base_package: basePackage, run_dir: join(dir, "learner"), json_progress: true, learning_starts: 1_000_000_000, online_capacity: count + 1000 }));
    const learner = startLearner(["serve", "--config", cfgFile]);
    try {
      await learner.ready;
      const bridge = await ExperienceBridge.open({
        endpoint: experience, spoolDir: join(dir, "spool"), robotId: "bench-0", configHash: "bench", obsNames: base.json.observation.names,
        actionNames: base.json.action.names, task: "bench", basePolicyVersion: base.json.version, batchSize, cameras, durable, frameEncoding, spoolCapBytes: 16 * 2 ** 30, logger: { warn: () => undefined, info: () => undefined },
      });
      try {
        // Wait for the link, so connection set-up is not timed.
        const t0 = Date.now();
        while (!bridge.stats().linkUp && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 20));
        const start = performance.now();
        for (let i = 0; i < count; i += batchSize) {
          for (const t of ts.slice(i, i + batchSize)) bridge.push(t);
          await new Promise((r) => setImmediate(r)); // let the sender run, as the control loop does between ticks
        }
        const ok = await bridge.flush({ timeoutMs: 600_000 });
        bridgeSec = (performance.now() - start) / 1000;
        if (!ok || bridge.stats().acked < count) throw new Error(`bridge throughput: only ${bridge.stats().acked}/${count} transitions acked`);
      } finally {
        await bridge.close();
      }
    } finally {
      learner.child.kill("SIGINT");
      const done = await learner.done.catch(() => undefined);
      replayBytesPerTransition = (done?.replay_memory as { bytes_per_transition?: number } | undefined)?.bytes_per_transition ?? null;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const rrAfter = await raw(false, frames);
  const rr = (rrBefore + rrAfter) / 2; // the mean time of the two: the bridge ran between them
  const rrWire = zlib ? await raw(false, wire) : rr;
  const pipe = await raw(true, frames);
  const tps = (s: number) => count / s;
  return {
    transitions: count, batchSize, batchBytes, batchFrames: frames.length, frameEncoding: zlib ? "zlib" : "raw", wireBatchBytes,
    bridge: { seconds: bridgeSec, transitionsPerSec: tps(bridgeSec), mbPerSec: mb(bridgeSec), wireMbPerSec: mb(bridgeSec, wireBatchBytes), durableSpool: durable },
    rawRequestReply: { seconds: rr, transitionsPerSec: tps(rr), mbPerSec: mb(rr), transitionsPerSecRuns: [tps(rrBefore), tps(rrAfter)] },
    rawRequestReplyWire: zlib ? { seconds: rrWire, transitionsPerSec: tps(rrWire), mbPerSec: mb(rrWire, wireBatchBytes) } : null,
    rawPipelined: { seconds: pipe, transitionsPerSec: tps(pipe), mbPerSec: mb(pipe) },
    ratio: tps(bridgeSec) / tps(rr), ratioWire: tps(bridgeSec) / tps(rrWire), cameras, replayBytesPerTransition,
  };
}
