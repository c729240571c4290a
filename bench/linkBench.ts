/**
 * `npm run bench:learning -- --link [--soak-minutes 10] [--robots 4] [--hz 30] [--throughput-transitions 20000]`:
 * the experience link with camera frames alone (issue 27), without the learning runs:
 *   1. transitions/s and MB/s through the bridge to the real learner, without frames and with the SO-101's two 84 × 84
 *      frames (obs and next_obs) per transition, sent raw and compressed on the robot (zlib, the default), each next to
 *      raw ZeroMQ request-reply with the same frames uncompressed (and, for zlib, with the bridge's compressed bytes);
 *   2. the soak (bench/linkSoak.ts): `robots` robots at `hz` with both cameras for `minutes`, transitions lost.
 * The base package is a tiny learner fixture (`rlft_learner make-fixture`): the link does not depend on what it learned.
 * Writes bench/results/link-<date>.{json,md} and link-latest.*; prints the markdown.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir, loadavg } from "node:os";
import { spawnSync } from "node:child_process";
import { findPython, learnerEnv } from "../app/python.ts";
import { measureThroughput, type ThroughputResult } from "./learningThroughput.ts";
import { linkSoak, type LinkSoakResult } from "./linkSoak.ts";
import { renderLinkFrames } from "./linkFrames.ts";

/** Everything `--link` measures. */
export interface LinkBench {
  date: string;
  plain: ThroughputResult | null;
  /** Frames as sessions send them (learner.frame_encoding: zlib, the default). */
  frames: ThroughputResult | null;
  /** The same frames sent raw (learner.frame_encoding: raw), in the same run. */
  framesRaw: ThroughputResult | null;
  /** The same with a spool that does not fsync (durable: false): how much of the bridge's time is the disk's. */
  framesNoFsync: ThroughputResult | null;
  soak: LinkSoakResult | null;
  loadAverage: number[];
}

/** The throughput rows with and without frames as markdown (also used by the full learning report). */
export function throughputMarkdown(tp: ThroughputResult): string[] {
  const f = (x: number) => x.toFixed(0);
  const zlib = tp.frameEncoding === "zlib";
  const what = (tp.cameras ?? []).length ? `with ${tp.cameras.join(" + ")} frames (84×84 rgb8, obs and next_obs, ${zlib ? "zlib-compressed on the robot" : "raw"})` : "state only";
  const wire = tp.rawRequestReplyWire;
  return [
    `${tp.transitions} transitions ${what} in batches of ${tp.batchSize} (${tp.batchBytes} bytes with raw frames${zlib ? `, ${tp.wireBatchBytes} as the bridge sends it` : ""}; ${tp.batchFrames} frames per encoded batch)${tp.replayBytesPerTransition ? `; the learner's replay holds ${(tp.replayBytesPerTransition / 1000).toFixed(1)} kB per transition` : ""}.`, "",
    "| path | transitions/s | MB/s (raw frames) | wire MB/s | vs raw request-reply |", "|---|---|---|---|---|",
    `| experience bridge → learner (${zlib ? "zlib frames, " : ""}${tp.bridge.durableSpool === false ? "un-fsync'ed" : "fsync'ed"} spool, decode, replay insert) | ${f(tp.bridge.transitionsPerSec)} | ${tp.bridge.mbPerSec.toFixed(2)} | ${(tp.bridge.wireMbPerSec ?? tp.bridge.mbPerSec).toFixed(2)} | **${tp.ratio.toFixed(3)}×** |`,
    `| raw ZeroMQ DEALER→ROUTER, one batch in flight${tp.rawRequestReply.transitionsPerSecRuns ? ` (before / after the bridge: ${tp.rawRequestReply.transitionsPerSecRuns.map(f).join(" / ")})` : ""} | ${f(tp.rawRequestReply.transitionsPerSec)} | ${tp.rawRequestReply.mbPerSec.toFixed(1)} | ${tp.rawRequestReply.mbPerSec.toFixed(1)} | 1× |`,
    ...(wire ? [`| raw ZeroMQ DEALER→ROUTER, one batch in flight, the bridge's compressed batch | ${f(wire.transitionsPerSec)} | ${(wire.transitionsPerSec * tp.batchBytes / tp.batchSize / 1e6).toFixed(1)} | ${wire.mbPerSec.toFixed(1)} | ${(wire.transitionsPerSec / tp.rawRequestReply.transitionsPerSec).toFixed(2)}× (bridge ${tp.ratioWire.toFixed(3)}× of it) |`] : []),
    `| raw ZeroMQ DEALER→ROUTER, pipelined | ${f(tp.rawPipelined.transitionsPerSec)} | ${tp.rawPipelined.mbPerSec.toFixed(1)} | ${tp.rawPipelined.mbPerSec.toFixed(1)} | ${(tp.rawPipelined.transitionsPerSec / tp.rawRequestReply.transitionsPerSec).toFixed(1)}× |`,
    "",
  ];
}

/** The soak as markdown. */
export function soakMarkdown(s: LinkSoakResult): string[] {
  return [
    `${s.robots} robots × ${s.hz} Hz with ${s.cameras.join(" + ")} (84×84, ${s.frameEncoding ?? "raw"} frames) for ${(s.seconds / 60).toFixed(1)} min into one learner:`, "",
    "| produced | acked | stored (learner replay) | lost | transitions/s | wire kB/transition | wire MB/s | max tick lag | max spool | drain | learner replay kB/transition | frames refused | link reconnects |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    `| ${s.produced} | ${s.acked} | ${s.stored} | **${s.lost}** | ${s.transitionsPerSec.toFixed(1)} | ${(s.wireBytesPerTransition / 1000).toFixed(1)} | ${s.wireMbPerSec.toFixed(2)} | ${s.maxLagMs.toFixed(0)} ms | ${(s.maxSpoolBytes / 1e6).toFixed(1)} MB | ${s.drainSeconds.toFixed(1)} s | ${s.replayBytesPerTransition ? (s.replayBytesPerTransition / 1000).toFixed(1) : "?"} | ${s.rejectedFrames} | ${s.reconnects ?? "?"} |`,
    "",
  ];
}

/** A tiny base package for the link (names and normalisation only matter). */
function fixturePackage(dir: string): string {
  const out = join(dir, "pkg");
  const r = spawnSync(findPython(), ["-m", "rlft_learner", "make-fixture", "--out", out, "--obs-dim", "12", "--action-dim", "6"], { env: learnerEnv(), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`rlft_learner make-fixture failed: ${r.stderr}`);
  return out;
}

/** Runs `--link`; returns the result and writes the report files. */
export async function runLinkBench(o: { minutes: number; robots: number; hz: number; transitions: number; log: (s: string) => void }): Promise<LinkBench> {
  const dir = mkdtempSync(join(tmpdir(), "rlft-link-bench-"));
  const date = new Date().toISOString();
  try {
    const pkg = fixturePackage(dir);
    o.log("link: rendering the SO-101's front and wrist frames");
    const frames = await renderLinkFrames(64);
    o.log(`link: ${o.transitions} transitions without frames, then with both cameras, through the bridge vs raw ZeroMQ`);
    const plain = await measureThroughput(pkg, o.transitions);
    const withFrames = await measureThroughput(pkg, o.transitions, 32, frames, true, "zlib");
    const rawFrames = await measureThroughput(pkg, o.transitions, 32, frames, true, "raw");
    const noFsync = await measureThroughput(pkg, o.transitions, 32, frames, false, "zlib");
    o.log(`link: soak, ${o.robots} robots at ${o.hz} Hz with both cameras for ${o.minutes} min`);
    const soak = o.minutes > 0 ? await linkSoak({ basePackage: pkg, frames, minutes: o.minutes, robots: o.robots, hz: o.hz, log: o.log }) : null;
    const bench: LinkBench = { date, plain, frames: withFrames, framesRaw: rawFrames, framesNoFsync: noFsync, soak, loadAverage: loadavg() };
    const md = ["# Experience link with camera frames", "", `${date}, load average ${bench.loadAverage.map((x) => x.toFixed(1)).join(" / ")} (2 cores, shared).`, "",
      "## Throughput without frames", "", ...throughputMarkdown(plain), "## Throughput with two 84×84 cameras", "", ...throughputMarkdown(withFrames),
      "The same frames sent raw (`learner.frame_encoding: raw`), in the same run:", "", ...throughputMarkdown(rawFrames),
      "Compressed frames with a spool that does not fsync (`durable: false`, not what sessions run): the share of the disk.", "", ...throughputMarkdown(noFsync),
      ...(soak ? ["## Soak", "", ...soakMarkdown(soak)] : [])].join("\n");
    mkdirSync("bench/results", { recursive: true });
    const base = join("bench/results", `link-${date.replace(/[:.]/g, "-")}`);
    writeFileSync(`${base}.json`, JSON.stringify(bench, null, 2));
    writeFileSync(`${base}.md`, md + "\n");
    for (const ext of ["json", "md"]) copyFileSync(`${base}.${ext}`, `bench/results/link-latest.${ext}`);
    console.log("\n" + md + "\n");
    console.log(`written: ${base}.{json,md} (+ bench/results/link-latest.*)`);
    return bench;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
