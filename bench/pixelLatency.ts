/**
 * The image-policy rows of `npm run bench` (SO-101, front + wrist cameras):
 *  - one whole action chunk of a 2-camera pixel policy (encoders + 10 DDIM steps) in onnxruntime-node against the
 *    same package in PyTorch eager (`rlft_learner bench-sampler`), both at 1 intra-op thread;
 *  - decision latency (observation → proposed command, wall ms: what ControlLoopMonitor reports) of that policy in a
 *    30 Hz wall-clock control loop with both cameras rendered every tick, against the ⅓-period budget;
 *  - simulation speed (sim seconds per wall second) of the full stack with both cameras every tick, expert actor.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { DiffusionPolicy, type CameraFrames } from "../policies/DiffusionPolicy.ts";
import { findPython, learnerEnv } from "../app/python.ts";
import { percentile } from "../data/stats.ts";
import { Stack } from "../launch/Stack.ts";
import { ControlLoopMonitor } from "../nodes/ControlLoopMonitor.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { SO101_LAUNCH, collectDemos, phaseConfig, trainSo101Bc } from "../app/pixelBc.ts";

type Pct = { p50: number; p99: number };
const pct = (xs: number[]): Pct => ({ p50: percentile(xs, 50), p99: percentile(xs, 99) });

/** The pixel BC package of `npm run bench:pixels` (push_cube) when it is there. */
export const BENCH_PIXEL_PACKAGE = "bench/work/pixels/push_cube/pixels/package";

/**
 * A 2-camera pixel package: `given`, else bench:pixels' push_cube package, else one of train-bc's default size trained
 * for a few steps on two fresh demos (latency does not depend on the weights).
 */
export async function pixelPackageForBench(given: string): Promise<{ dir: string; cleanup: () => void; source: string }> {
  if (given) return { dir: given, cleanup: () => undefined, source: given };
  if (existsSync(join(BENCH_PIXEL_PACKAGE, "policy.json"))) return { dir: BENCH_PIXEL_PACKAGE, cleanup: () => undefined, source: `${BENCH_PIXEL_PACKAGE} (npm run bench:pixels)` };
  const root = mkdtempSync(join(tmpdir(), "rlft-bench-pix-"));
  await collectDemos({ launch: SO101_LAUNCH, task: "push_cube", count: 2, quality: 1, out: join(root, "demos") });
  const r = await trainSo101Bc({ launch: SO101_LAUNCH, data: join(root, "demos"), out: join(root, "bc"), obs: "pixels", steps: 5, quiet: true });
  return { dir: r.package, cleanup: () => rmSync(root, { recursive: true, force: true }), source: "train-bc --cameras front,wrist --state joints, default size, 5 steps" };
}

/** Whole chunks of the pixel package in onnxruntime-node (loop in one graph), fresh frames each call. */
export async function onnxPixelChunk(dir: string, iters: number, threads = 1): Promise<Pct> {
  const p = await DiffusionPolicy.create(dir, { mode: "graph", threads });
  const j = p.package.json;
  const hist = Array.from({ length: j.observation.history }, () => j.observation.mean.map((m) => m + 0.1));
  const frames = (k: number): CameraFrames => Object.fromEntries(p.package.images.map((c) => [c.camera, { width: c.width, height: c.height, data: Uint8Array.from({ length: c.width * c.height * 3 }, (_, i) => (i * 37 + k) % 256) }]));
  const sets = [0, 1, 2, 3].map(frames);
  for (let i = 0; i < 20; i++) await p.sampleChunk(hist, undefined, sets[i % 4]);
  const ms: number[] = [];
  for (let i = 0; i < iters; i++) ms.push((await p.sampleChunk(hist, undefined, sets[i % 4])).inferenceMs);
  await p.close();
  return pct(ms);
}

/** The same package's sampler in PyTorch eager (the learner's `bench-sampler`; the encoders too for a pixel package). */
export function torchChunk(dir: string, iters: number, threads = 1): Pct {
  const r = spawnSync(findPython(), ["-m", "rlft_learner", "bench-sampler", "--package", dir, "--threads", String(threads), "--iters", String(iters)], { env: learnerEnv(), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`bench-sampler failed:\n${r.stderr}`);
  const j = JSON.parse(r.stdout.trim().split("\n").filter((l) => l.startsWith("{")).pop()!) as { p50_ms: number; p99_ms: number };
  return { p50: j.p50_ms, p99: j.p99_ms };
}

/**
 * Decision latency of the pixel policy at `hz`, both cameras rendered every tick. On the sim clock the nodes of a tick
 * run back to back, so it is the compute a tick adds (render both cameras + policy); on the wall clock the actor acts
 * when the observation arrives (ActorNode's observation trigger), so it is that compute as the running stack sees it.
 */
export interface DecisionLatency {
  clock: "sim" | "wall";
  hz: number;
  ticks: number;
  deadlineMisses: number;
  latencyMs: Pct & { max: number };
  budgetMs: number;
  wallSec: number;
}

/** Runs `episodes` push_cube episodes of the package at `hz` on `clock` and reads the control-loop monitor. */
export async function decisionLatency(dir: string, hz: number, episodes: number, clock: "sim" | "wall"): Promise<DecisionLatency> {
  const cfg = phaseConfig(SO101_LAUNCH, "push_cube", { kind: "policy", package: dir }, true, false);
  cfg.clock = clock;
  cfg.control_hz = hz;
  cfg.camera.rate_hz = hz;
  const stack = await Stack.create(cfg, { quiet: true, training: false });
  const monitor = new ControlLoopMonitor(stack.runtime.createNode("bench_loop_monitor"), { keepLatencies: true });
  await monitor.configure();
  await monitor.activate();
  const t0 = performance.now();
  try {
    await stack.runEpisodes({ count: episodes, seed: 1000 });
  } finally {
    await monitor.deactivate();
    await stack.shutdown();
  }
  const lat = monitor.latencyMs;
  return { clock, hz, ticks: monitor.totals.ticks, deadlineMisses: monitor.totals.deadlineMisses, latencyMs: { ...pct(lat), max: Math.max(...lat) }, budgetMs: 1000 / hz / 3, wallSec: (performance.now() - t0) / 1000 };
}

/** Sim seconds per wall second of the full SO-101 stack (expert actor, no recording) at `hz`, cameras every tick or off. */
export async function so101SimSpeed(task: "push_cube" | "pick_place", hz: number, cameras: boolean, episodes = 10): Promise<number> {
  const cfg = phaseConfig(SO101_LAUNCH, task, { kind: "expert", expert_quality: 1 }, cameras, false);
  cfg.control_hz = hz;
  cfg.camera.rate_hz = hz;
  const { summary } = await runEpisodes(cfg, { count: episodes, seed: 500, label: `so101 ${task} ${hz} Hz${cameras ? " +2 cameras" : ""}` });
  return summary.simSeconds / summary.wallSeconds;
}

/** Everything section 6 of `npm run bench` measures. */
export interface PixelRows {
  package: string;
  cameras: string[];
  iters: number;
  chunkMs: { onnx: Pct; torch: Pct; ratioP50: number; threads: number };
  /** Sim clock (compute per tick), then wall clock (3 episodes each: two episode boundaries and a shutdown with the policy running). */
  decision30Hz: DecisionLatency[];
  /** Sim seconds per wall second, expert actor, full stack, no recording. */
  simSpeed: { task: string; hz: number; cameras: boolean; realtime: number }[];
}

/** Measures section 6 on `given` (or the default pixel package, see {@link pixelPackageForBench}). */
export async function pixelRows(given: string, iters: number): Promise<PixelRows> {
  const pkg = await pixelPackageForBench(given);
  try {
    // The stack runs first: an onnxruntime session closed just before a stack starts has aborted the process (Napi::Error).
    const decision30Hz = [await decisionLatency(pkg.dir, 30, 3, "sim"), await decisionLatency(pkg.dir, 30, 3, "wall")];
    const simSpeed: PixelRows["simSpeed"] = [];
    for (const task of ["push_cube", "pick_place"] as const) {
      for (const hz of [10, 30]) for (const cameras of [false, true]) simSpeed.push({ task, hz, cameras, realtime: await so101SimSpeed(task, hz, cameras) });
    }
    const onnx = await onnxPixelChunk(pkg.dir, iters);
    const torch = torchChunk(pkg.dir, iters);
    const pj = JSON.parse(readFileSync(join(pkg.dir, "policy.json"), "utf8")) as { observation: { images?: { camera: string; width: number; height: number }[] } };
    const cameras = (pj.observation.images ?? []).map((i) => `${i.camera} ${i.width}×${i.height}`);
    return { package: pkg.source, cameras, iters, chunkMs: { onnx, torch, ratioP50: onnx.p50 / torch.p50, threads: 1 }, decision30Hz, simSpeed };
  } finally {
    pkg.cleanup();
  }
}

/** The section as printed by `npm run bench`. */
export function formatPixelRows(r: PixelRows): string {
  const f = (x: number) => x.toFixed(2).padStart(8);
  const lines = [
    `SO-101 image policy (${r.cameras.join(" + ")}; ${r.package}), batch 1, ${r.chunkMs.threads} thread   p50 ms    p99 ms   p50 vs PyTorch`,
    `  whole chunk, onnxruntime-node (one graph) ${f(r.chunkMs.onnx.p50)}  ${f(r.chunkMs.onnx.p99)}   ${r.chunkMs.ratioP50.toFixed(2)}×`,
    `  whole chunk, PyTorch eager                ${f(r.chunkMs.torch.p50)}  ${f(r.chunkMs.torch.p99)}   1.00×`,
    ...r.decision30Hz.map((d) => `  decision latency at ${d.hz} Hz, ${d.clock} clock (both cameras rendered every tick, ${d.ticks} ticks, ${d.deadlineMisses} deadline misses): p50 ${d.latencyMs.p50.toFixed(2)} ms, p99 ${d.latencyMs.p99.toFixed(2)} ms, max ${d.latencyMs.max.toFixed(2)} ms; budget ⅓ period ${d.budgetMs.toFixed(2)} ms → p99 ${d.latencyMs.p99 < d.budgetMs ? "within" : "OVER"}`),
    "  sim speed, full stack, expert actor (sim s per wall s)",
  ];
  for (const s of r.simSpeed) lines.push(`    ${s.task.padEnd(10)} ${String(s.hz).padStart(2)} Hz ${s.cameras ? "front + wrist every tick" : "no cameras              "}  ${s.realtime.toFixed(1)}×`);
  return lines.join("\n");
}
