/**
 * `npm run bench`: speeds measured side by side in one run, printed as ratios and written to
 * bench/results/<timestamp>.json and bench/results/run-latest.json (the one git tracks).
 *  1. One whole action chunk (all DDIM steps): onnxruntime-node with the loop in one graph, vs the TS
 *     scheduler calling the one-step denoiser, vs PyTorch eager (the learner's own sampler) — 1 thread each.
 *  2. Simulation speed (simulated seconds per wall second) of the full stack, with and without the camera.
 *  3. VLA inference: the prefix (once per chunk) and one action-expert step (per Euler step), p50/p99, in
 *     onnxruntime-node (worker thread, as the robot runs them) vs the same networks in PyTorch eager — 1 thread each.
 *  4. Best-of-N sampling at a re-plan (launch `actor.best_of`, N = --best-of, default 16): the N chunks as one batched
 *     sampler call (`DiffusionPolicy.sampleChunks`, what the policy actor runs) vs N calls one after the other.
 *  5. Camera render (bench/cameraRender.ts): ms per frame of the SO-101's front and wrist cameras per renderer and
 *     size, and one 30 Hz tick with both cameras as a real-time factor. `--only camera` runs just this section.
 *  6. The SO-101 image policy (bench/pixelLatency.ts; --pixel-package DIR, default bench:pixels' push_cube package):
 *     one chunk of the 2-camera policy in onnxruntime-node vs PyTorch eager (1 thread each), decision latency p50/p99
 *     in a 30 Hz wall-clock control loop with both cameras rendered (budget ⅓ of the period), and the full stack's sim
 *     speed with both cameras every tick at 10 and 30 Hz. `--only pixels` runs just this section.
 *  7. A real VLA's export (bench/smolvla.ts, only with `--only smolvla`: minutes of export): SmolVLA of the real shapes,
 *     prefix and whole chunk in onnxruntime-node vs PyTorch eager on 2 threads, bytes per Euler step with the KV cache
 *     kept in the worker vs copied. Options: --smolvla-checkpoint DIR, --smolvla-depth N, --smolvla-iters N, --threads N.
 * Usage: npm run bench [-- --package DIR] [-- --vla-package DIR] [-- --pixel-package DIR] [-- --iters N] [-- --best-of N]
 *        [-- --only camera|pixels|smolvla]
 */
import { existsSync, mkdirSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { DiffusionPolicy } from "../policies/DiffusionPolicy.ts";
import { torchChunk } from "./pixelLatency.ts";
import { findPython, learnerEnv } from "../app/python.ts";
import { percentile } from "../data/stats.ts";
import { loadLaunch } from "../launch/LaunchConfig.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { VlaPolicy } from "../policies/vla/VlaPolicy.ts";
import { benchCameraRender, formatCameraRender } from "./cameraRender.ts";
import { pixelRows, formatPixelRows } from "./pixelLatency.ts";
import { smolvlaRows, formatSmolvlaRows } from "./smolvla.ts";

const argv = process.argv.slice(2);
const arg = (name: string, dflt: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const iters = Number(arg("--iters", "300"));
const bestOfN = Number(arg("--best-of", "16"));
if (!(Number.isInteger(bestOfN) && bestOfN >= 2 && bestOfN <= 64)) throw new Error(`--best-of: an integer in [2, 64] (chunks per re-plan, as actor.best_of); got ${bestOfN}`);
const only = arg("--only", "");
if (only && only !== "camera" && only !== "pixels" && only !== "smolvla") throw new Error(`--only: camera, pixels or smolvla (the sections that run alone); got ${only}`);
if (only === "smolvla") {
  const depth = arg("--smolvla-depth", "");
  const r = await smolvlaRows({ checkpoint: arg("--smolvla-checkpoint", "") || undefined, depth: depth ? Number(depth) : undefined, iters: Number(arg("--smolvla-iters", "5")), threads: Number(arg("--threads", "2")) });
  console.log(formatSmolvlaRows(r));
  mkdirSync("bench/results", { recursive: true });
  const result = { date: new Date().toISOString(), smolvla: r };
  writeFileSync("bench/results/run-smolvla-latest.json", JSON.stringify(result, null, 2));
  process.exit(0);
}
if (only === "camera") {
  const cam = await benchCameraRender();
  console.log(formatCameraRender(cam));
  mkdirSync("bench/results", { recursive: true });
  writeFileSync("bench/results/camera-latest.json", JSON.stringify({ date: new Date().toISOString(), camera_render: cam }, null, 2));
  process.exit(0);
}
if (only === "pixels") {
  const pix = await pixelRows(arg("--pixel-package", ""), iters);
  console.log(formatPixelRows(pix));
  mkdirSync("bench/results", { recursive: true });
  const result = { date: new Date().toISOString(), pixel_policy: pix };
  writeFileSync(`bench/results/run-pixels-${result.date.replace(/[:.]/g, "-")}.json`, JSON.stringify(result, null, 2));
  writeFileSync("bench/results/run-pixels-latest.json", JSON.stringify(result, null, 2));
  process.exit(0);
}
const py = findPython();

function packageForBench(): { dir: string; cleanup: () => void; source: string } {
  const given = arg("--package", "");
  if (given) return { dir: given, cleanup: () => undefined, source: given };
  if (existsSync("runs/demo/package/policy.json")) return { dir: "runs/demo/package", cleanup: () => undefined, source: "runs/demo/package (npm run demo)" };
  // Same network size as train-bc's defaults, briefly trained on synthetic data.
  const root = mkdtempSync(join(tmpdir(), "rlft-bench-"));
  const dir = join(root, "pkg");
  const r = spawnSync(py, ["-m", "rlft_learner", "make-fixture", "--out", dir, "--hidden", "256", "--steps", "50"], { env: learnerEnv(), stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0) throw new Error("make-fixture failed");
  return { dir, cleanup: () => rmSync(root, { recursive: true, force: true }), source: "make-fixture --hidden 256" };
}

async function onnxChunk(dir: string, mode: "graph" | "ts"): Promise<{ p50: number; p99: number }> {
  const p = await DiffusionPolicy.create(dir, { mode, threads: 1 });
  const j = p.package.json;
  const hist = Array.from({ length: j.observation.history }, () => j.observation.mean.map((m) => m + 0.1));
  for (let i = 0; i < 20; i++) await p.sampleChunk(hist);
  const ms: number[] = [];
  for (let i = 0; i < iters; i++) ms.push((await p.sampleChunk(hist)).inferenceMs);
  await p.close();
  return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
}


async function simSpeed(camera: boolean): Promise<number> {
  const cfg = loadLaunch("launch/sim_push.yaml");
  cfg.actor = { ...cfg.actor, kind: "expert", expert_quality: 1 };
  cfg.camera.enabled = camera;
  cfg.camera.rate_hz = cfg.control_hz; // a frame every control tick: the worst case
  cfg.recorder.enabled = false;
  const { summary } = await runEpisodes(cfg, { count: 10, seed: 500, label: camera ? "sim+cam" : "sim" });
  return summary.simSeconds / summary.wallSeconds;
}

function vlaPackageForBench(): { dir: string; cleanup: () => void; source: string } {
  const given = arg("--vla-package", "");
  if (given) return { dir: given, cleanup: () => undefined, source: given };
  if (existsSync("runs/vla/package/policy.json")) return { dir: "runs/vla/package", cleanup: () => undefined, source: "runs/vla/package (rlft train-vla)" };
  // The tiny VLA's default size, a few steps on synthetic data: latency does not depend on the weights.
  const root = mkdtempSync(join(tmpdir(), "rlft-bench-vla-"));
  const r = spawnSync(py, ["-m", "rlft_learner", "train-vla", "--synthetic", "--steps", "5", "--out", root], { env: learnerEnv(), stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0) throw new Error("train-vla --synthetic failed");
  return { dir: join(root, "package"), cleanup: () => rmSync(root, { recursive: true, force: true }), source: "train-vla --synthetic (default size)" };
}

type Pct = { p50: number; p99: number };
const pct = (xs: number[]): Pct => ({ p50: percentile(xs, 50), p99: percentile(xs, 99) });

/** Best-of-N at one re-plan: N chunks for one observation history, batched vs one call each (interleaved rounds). */
async function bestOfSampling(dir: string, n: number): Promise<{ batched: Pct; sequential: Pct; rounds: number }> {
  const p = await DiffusionPolicy.create(dir, { mode: "graph", threads: 1 });
  const j = p.package.json;
  const hist = Array.from({ length: j.observation.history }, () => j.observation.mean.map((m) => m + 0.1));
  for (let i = 0; i < 5; i++) await p.sampleChunks(hist, n);
  const batched: number[] = [];
  const sequential: number[] = [];
  const rounds = Math.max(20, Math.ceil(iters / n));
  for (let r = 0; r < rounds; r++) {
    batched.push((await p.sampleChunks(hist, n)).inferenceMs);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await p.sampleChunk(hist);
    sequential.push(performance.now() - t0);
  }
  await p.close();
  return { batched: pct(batched), sequential: pct(sequential), rounds };
}

async function onnxVla(dir: string): Promise<{ prefix: Pct; step: Pct; chunk: Pct; steps: number }> {
  const p = await VlaPolicy.create(dir, { threads: 1 });
  const images: Record<string, { width: number; height: number; data: Uint8Array }> = {};
  for (const c of p.package.json.cameras) {
    const [top, left, h, w] = c.crop;
    images[c.name] = { width: left + w, height: top + h, data: Uint8Array.from({ length: (left + w) * (top + h) * 3 }, (_, i) => (i * 37) % 256) };
  }
  const input = { state: p.package.state.offset, instruction: "push the blue cube to the left target", images };
  for (let i = 0; i < 10; i++) await p.sampleChunk(input);
  const prefix: number[] = [];
  const step: number[] = [];
  const chunk: number[] = [];
  for (let i = 0; i < Math.ceil(iters / 3); i++) {
    const c = await p.sampleChunk(input);
    prefix.push(c.prefixMs);
    step.push(...c.stepMs);
    chunk.push(c.inferenceMs);
  }
  await p.close();
  return { prefix: pct(prefix), step: pct(step), chunk: pct(chunk), steps: p.package.json.flow.steps };
}

function torchVla(dir: string): { prefix: Pct; step: Pct } {
  const r = spawnSync(py, ["-m", "rlft_learner", "bench-vla", "--package", dir, "--threads", "1", "--iters", String(iters)], { env: learnerEnv(), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`bench-vla failed:\n${r.stderr}`);
  const j = JSON.parse(r.stdout.trim().split("\n").filter((l) => l.startsWith("{")).pop()!) as Record<"prefix" | "expert_step", { p50_ms: number; p99_ms: number }>;
  return { prefix: { p50: j.prefix.p50_ms, p99: j.prefix.p99_ms }, step: { p50: j.expert_step.p50_ms, p99: j.expert_step.p99_ms } };
}

const pkg = packageForBench();
const vlaPkg = vlaPackageForBench();
try {
  console.log(`policy: ${pkg.source}; ${iters} chunks each, batch 1, 1 intra-op thread`);
  const graph = await onnxChunk(pkg.dir, "graph");
  const ts = await onnxChunk(pkg.dir, "ts");
  const torch = torchChunk(pkg.dir, iters);
  const simNoCam = await simSpeed(false);
  const simCam = await simSpeed(true);
  const vlaOnnx = await onnxVla(vlaPkg.dir);
  const vlaTorch = torchVla(vlaPkg.dir);
  const bestOf = await bestOfSampling(pkg.dir, bestOfN);
  const cameraRender = await benchCameraRender();
  const pixelPolicy = await pixelRows(arg("--pixel-package", ""), iters);
  const f = (x: number) => x.toFixed(3).padStart(8);
  console.log("\nwhole action chunk (all DDIM steps)      p50 ms    p99 ms   p50 vs PyTorch");
  console.log(`  onnxruntime-node, loop in one graph  ${f(graph.p50)}  ${f(graph.p99)}   ${(graph.p50 / torch.p50).toFixed(2)}×`);
  console.log(`  onnxruntime-node, TS scheduler       ${f(ts.p50)}  ${f(ts.p99)}   ${(ts.p50 / torch.p50).toFixed(2)}×`);
  console.log(`  PyTorch eager (the learner's sampler)${f(torch.p50)}  ${f(torch.p99)}   1.00×`);
  console.log("\nsimulation speed (sim seconds per wall second, full stack, expert actor, 10 Hz control)");
  console.log(`  without camera                       ${simNoCam.toFixed(1)}×`);
  console.log(`  with 64×64 front camera at 10 Hz     ${simCam.toFixed(1)}×   (camera costs ${(100 * (1 - simCam / simNoCam)).toFixed(0)}% of the speed)`);
  console.log(`\nVLA inference (${vlaPkg.source}), batch 1, 1 thread      p50 ms    p99 ms   p50 vs PyTorch`);
  console.log(`  prefix, onnxruntime-node (worker)    ${f(vlaOnnx.prefix.p50)}  ${f(vlaOnnx.prefix.p99)}   ${(vlaOnnx.prefix.p50 / vlaTorch.prefix.p50).toFixed(2)}×`);
  console.log(`  prefix, PyTorch eager                ${f(vlaTorch.prefix.p50)}  ${f(vlaTorch.prefix.p99)}   1.00×`);
  console.log(`  expert step, onnxruntime-node        ${f(vlaOnnx.step.p50)}  ${f(vlaOnnx.step.p99)}   ${(vlaOnnx.step.p50 / vlaTorch.step.p50).toFixed(2)}×`);
  console.log(`  expert step, PyTorch eager           ${f(vlaTorch.step.p50)}  ${f(vlaTorch.step.p99)}   1.00×`);
  console.log(`  whole chunk (prefix + ${vlaOnnx.steps} steps), onnx  ${f(vlaOnnx.chunk.p50)}  ${f(vlaOnnx.chunk.p99)}`);
  console.log(`\nbest-of-${bestOfN} re-plan: ${bestOfN} whole chunks for one observation (${bestOf.rounds} rounds)   p50 ms    p99 ms   p50 vs one call each`);
  console.log(`  one batched sampler call (the actor's) ${f(bestOf.batched.p50)}  ${f(bestOf.batched.p99)}   ${(bestOf.batched.p50 / bestOf.sequential.p50).toFixed(2)}×`);
  console.log(`  ${String(bestOfN).padEnd(2)} calls one after the other        ${f(bestOf.sequential.p50)}  ${f(bestOf.sequential.p99)}   1.00×`);
  console.log(`\n${formatCameraRender(cameraRender)}`);
  console.log(`\n${formatPixelRows(pixelPolicy)}`);
  const result = {
    date: new Date().toISOString(),
    policy: pkg.source,
    iters,
    chunk_ms: { onnx_graph: graph, onnx_ts_scheduler: ts, torch_eager: torch },
    ratio_onnx_graph_vs_torch_p50: graph.p50 / torch.p50,
    ratio_onnx_ts_vs_torch_p50: ts.p50 / torch.p50,
    sim_realtime_factor: { without_camera: simNoCam, with_camera: simCam },
    vla: {
      package: vlaPkg.source,
      onnx_ms: vlaOnnx,
      torch_eager_ms: vlaTorch,
      ratio_prefix_onnx_vs_torch_p50: vlaOnnx.prefix.p50 / vlaTorch.prefix.p50,
      ratio_step_onnx_vs_torch_p50: vlaOnnx.step.p50 / vlaTorch.step.p50,
    },
    best_of: { n: bestOfN, rounds: bestOf.rounds, batched_ms: bestOf.batched, sequential_ms: bestOf.sequential, ratio_batched_vs_sequential_p50: bestOf.batched.p50 / bestOf.sequential.p50 },
    camera_render: cameraRender,
    pixel_policy: pixelPolicy,
  };
  mkdirSync("bench/results", { recursive: true });
  const out = join("bench/results", `${result.date.replace(/[:.]/g, "-")}.json`);
  writeFileSync(out, JSON.stringify(result, null, 2));
  writeFileSync("bench/results/run-latest.json", JSON.stringify(result, null, 2));
  console.log(`\nwritten to ${out}`);
} finally {
  pkg.cleanup();
  vlaPkg.cleanup();
}
