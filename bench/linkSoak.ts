/**
 * The experience-link soak of `npm run bench:learning -- --link-soak` (issue 27): `robots` simulated robots, each an
 * ExperienceBridge with its own fsync'ed disk spool, produce transitions with two 84 × 84 camera frames each at `hz` on
 * the wall clock, for `minutes`, into one real learner (`rlft_learner serve`: decode, door checks, replay insert with
 * frames stored once, checkpoints every 30 s). The robots are transition producers, not physics: what is measured is
 * the link and the learner's door. Then every spool is flushed until the learner's checkpoint holds it and the learner
 * is stopped; its final count per robot (distinct seqs in replay) against what each robot produced gives the losses.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { stringify } from "yaml";
import { ExperienceBridge } from "../bridge/ExperienceBridge.ts";
import { encodeTransitions } from "../bridge/messages.ts";
import type { Transition, TransitionFrame } from "../contracts/Transition.ts";
import { PolicyPackage } from "../policies/PolicyPackage.ts";
import { startLearner } from "../app/learnerProcess.ts";
import { freePort } from "../app/ports.ts";
import { withFrames } from "./linkFrames.ts";
import { deflateSync } from "node:zlib";
import { FRAME_ZLIB_LEVEL, type FrameEncoding } from "../bridge/frameCodec.ts";

/** Options of {@link linkSoak}. */
export interface LinkSoakOptions {
  basePackage: string;
  frames: Record<string, TransitionFrame[]>;
  minutes?: number;
  robots?: number;
  hz?: number;
  /** How the robots send frames (learner.frame_encoding). Default zlib, as sessions do. */
  frameEncoding?: FrameEncoding;
  /** Steps per episode (the last one terminated). Default 100. */
  episodeSteps?: number;
  log?: (line: string) => void;
}

/** Result of {@link linkSoak}. */
export interface LinkSoakResult {
  robots: number;
  hz: number;
  cameras: string[];
  frameEncoding: FrameEncoding;
  seconds: number;
  /** Transitions made by the robots, acked by the learner, and held in its replay memory at the end (distinct seqs). */
  produced: number;
  acked: number;
  stored: number;
  /** produced − stored, plus any transition a bridge refused, dropped at its spool cap or could not re-send. */
  lost: number;
  /** Transitions per second over all robots, and the latest any robot's tick ran behind its 1/hz schedule. */
  transitionsPerSec: number;
  maxLagMs: number;
  /** Bytes on the wire per transition (encoded batches, both frames of each camera) and the link's MB/s. */
  wireBytesPerTransition: number;
  wireMbPerSec: number;
  /** Largest spool on disk any robot held (bytes): how far the learner fell behind. */
  maxSpoolBytes: number;
  /** Flush after the last tick until every spool was durable on the learner (s). */
  drainSeconds: number;
  /** The learner's replay memory per transition (row arrays at capacity + frames stored) and its door's refusals. */
  replayBytesPerTransition: number | null;
  rejectedFrames: number;
  malformed: number;
  /** Times a robot's link went down and came back (a learner that held its door past the robots' deadline). */
  reconnects: number;
}

function transition(robot: number, i: number, obsDim: number, aDim: number, steps: number): Transition {
  const v = (n: number, k: number) => Array.from({ length: n }, (_, j) => 0.5 * Math.sin(i * 0.21 + j + k + robot));
  const step = i % steps;
  const last = step === steps - 1;
  return {
    episode: Math.floor(i / steps), step, obs: v(obsDim, 0), nextObs: v(obsDim, 1), baseAction: v(aDim, 2), residualAction: v(aDim, 3).map((x) => 0.1 * x),
    action: v(aDim, 4), nextBaseAction: v(aDim, 5), reward: last ? 1 : 0, terminated: last, truncated: false, intervention: false,
    interventionSource: "", policyVersion: "soak",
  };
}

/** Runs the soak; see the module comment. */
export async function linkSoak(o: LinkSoakOptions): Promise<LinkSoakResult> {
  const robots = o.robots ?? 4;
  const hz = o.hz ?? 30;
  const seconds = (o.minutes ?? 10) * 60;
  const steps = o.episodeSteps ?? 100;
  const log = o.log ?? (() => undefined);
  const base = await PolicyPackage.load(o.basePackage);
  const obsDim = base.json.observation.names.length;
  const aDim = base.json.action.names.length;
  const cameras = Object.keys(o.frames);
  const frameEncoding = o.frameEncoding ?? "zlib";
  const expected = Math.ceil(robots * hz * seconds * 1.05) + 1000;
  const dir = mkdtempSync(join(tmpdir(), "rlft-link-soak-"));
  try {
    const [p1, p2] = [await freePort(), await freePort()];
    const experience = `tcp://127.0.0.1:${p1}`;
    const cfgFile = join(dir, "learner.yaml");
    writeFileSync(cfgFile, stringify({ experience_bind: experience, policy_bind: `tcp://127.0.0.1:${p2}`, base_package: o.basePackage, run_dir: join(dir, "learner"), json_progress: true, learning_starts: 1_000_000_000, online_capacity: expected }));
    const learner = startLearner(["serve", "--config", cfgFile], () => undefined, { announceWait: false });
    let done: Record<string, unknown> | undefined;
    const bridges: ExperienceBridge[] = [];
    const produced = new Array<number>(robots).fill(0);
    let maxSpool = 0;
    let maxLag = 0;
    let drainSeconds = 0;
    let elapsed = 0;
    try {
      await learner.ready;
      for (let r = 0; r < robots; r++) {
        bridges.push(await ExperienceBridge.open({
          endpoint: experience, spoolDir: join(dir, "spool"), robotId: `soak-${r}`, configHash: "soak", obsNames: base.json.observation.names,
          actionNames: base.json.action.names, task: "soak", basePolicyVersion: base.json.version, cameras, frameEncoding, spoolCapBytes: 8 * 2 ** 30,
          logger: { warn: (m) => log(`[soak-${r}] ${m}`), info: () => undefined },
        }));
      }
      const t0 = Date.now();
      while (!bridges.every((b) => b.stats().linkUp) && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 20));
      const start = performance.now();
      const period = 1000 / hz;
      let lastLog = start;
      for (;;) {
        const now = performance.now();
        if (now - start >= seconds * 1000) break;
        for (let r = 0; r < robots; r++) {
          // Robot r ticks at start + (k + r / robots) / hz: the robots' ticks interleave as independent robots' would.
          while (start + (produced[r] + r / robots) * period <= now) {
            maxLag = Math.max(maxLag, now - (start + (produced[r] + r / robots) * period));
            bridges[r].push(withFrames(transition(r, produced[r], obsDim, aDim, steps), o.frames, produced[r]));
            produced[r]++;
          }
          maxSpool = Math.max(maxSpool, bridges[r].stats().spoolBytes);
        }
        if (now - lastLog > 30_000) {
          lastLog = now;
          const acked = bridges.reduce((a, b) => a + b.stats().acked, 0);
          log(`link soak: ${((now - start) / 1000).toFixed(0)} s, produced ${produced.reduce((a, b) => a + b, 0)}, acked ${acked}, max lag ${maxLag.toFixed(0)} ms`);
        }
        await new Promise((r) => setTimeout(r, Math.max(0, Math.min(period / robots, start + seconds * 1000 - now))));
      }
      elapsed = (performance.now() - start) / 1000;
      const drain = performance.now();
      await Promise.all(bridges.map((b) => b.flush({ timeoutMs: 600_000, durable: true })));
      drainSeconds = (performance.now() - drain) / 1000;
    } finally {
      for (const b of bridges) await b.close();
      learner.child.kill("SIGINT");
      done = await learner.done.catch(() => undefined);
    }
    const stats = bridges.map((b) => b.stats());
    const robotRows = (done?.robots ?? {}) as Record<string, { distinct_seqs: number }>;
    const stored = Array.from({ length: robots }, (_, r) => robotRows[`soak-${r}`]?.distinct_seqs ?? 0);
    const total = produced.reduce((a, b) => a + b, 0);
    const bridgeLosses = stats.reduce((a, s) => a + s.rejected + s.overflowed + s.lost, 0);
    const guards = (done?.guards ?? {}) as { rejected_frames?: number; malformed?: number };
    // What one batch of 32 weighs on the wire (header + tensors + both frames of each camera), per transition.
    const sample = Array.from({ length: 32 }, (_, i) => withFrames(transition(0, i, obsDim, aDim, steps), o.frames, i));
    const zlib = frameEncoding === "zlib" ? { zlib: (rgb: Uint8Array) => deflateSync(rgb, { level: FRAME_ZLIB_LEVEL }) } : {};
    const perTransition = encodeTransitions(0, "soak-0", 0, sample, zlib).reduce((a, f) => a + f.byteLength, 0) / 32;
    return {
      robots, hz, cameras, frameEncoding, seconds: elapsed, produced: total, acked: stats.reduce((a, s) => a + s.acked, 0), stored: stored.reduce((a, b) => a + b, 0),
      lost: produced.reduce((a, p, r) => a + Math.max(0, p - stored[r]), 0) + bridgeLosses,
      transitionsPerSec: total / elapsed, maxLagMs: maxLag, wireBytesPerTransition: perTransition, wireMbPerSec: (perTransition * total) / elapsed / 1e6,
      maxSpoolBytes: maxSpool, drainSeconds,
      replayBytesPerTransition: (done?.replay_memory as { bytes_per_transition?: number } | undefined)?.bytes_per_transition ?? null,
      rejectedFrames: guards.rejected_frames ?? 0, malformed: guards.malformed ?? 0, reconnects: stats.reduce((a, st) => a + st.reconnects, 0),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
