/**
 * `npm run bench -- --only smolvla`: a SmolVLA of the real shapes (LeRobot 0.4's SmolVLA on SmolVLM2-500M: 16 text and
 * 16 expert layers, 512² images, chunk 50 × 32, 10 Euler steps; randomly initialised — latency does not depend on the
 * weights) exported by `export-smolvla`, run by the robot's runtime (onnxruntime-node in the inference worker) and by
 * PyTorch eager, both on `--threads` CPU threads (default 2). Also the bytes crossing to the worker per Euler step with
 * the KV cache kept in the worker vs copied, and the ONNX chunk's agreement with PyTorch at these shapes.
 * Options: --smolvla-checkpoint DIR (a LeRobot checkpoint; default a random real-shaped one in a temp dir),
 * --smolvla-depth N (text/expert layers of the random one, for a quick run), --smolvla-iters N (default 5).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPython, learnerEnv } from "../app/python.ts";
import { percentile } from "../data/stats.ts";
import { VlaPolicy } from "../policies/vla/VlaPolicy.ts";

type Pct = { p50: number; p99: number };
const pct = (xs: number[]): Pct => ({ p50: percentile(xs, 50), p99: percentile(xs, 99) });

export interface SmolvlaRows {
  source: string;
  threads: number;
  iters: number;
  export_s: number;
  package_mb: number;
  onnx_ms: { prefix: Pct; chunk: Pct; chunk_copying_cache: Pct };
  torch_eager_ms: { prefix: Pct; chunk: Pct };
  bytes_per_step: { kv_kept_in_worker: number; kv_copied: number };
  kv_cache_bytes: number;
  max_abs_err_vs_torch: number;
  torch: Record<string, unknown>;
}

function learner(args: string[]): string {
  const r = spawnSync(findPython(), args, { env: learnerEnv(), encoding: "utf8", maxBuffer: 1 << 26, stdio: ["ignore", "pipe", "inherit"] });
  if (r.status !== 0) throw new Error(`python ${args.join(" ")} failed (exit ${r.status})`);
  return r.stdout;
}

export async function smolvlaRows(opts: { checkpoint?: string; depth?: number; iters: number; threads: number }): Promise<SmolvlaRows> {
  const root = mkdtempSync(join(tmpdir(), "rlft-bench-smolvla-"));
  try {
    const ckpt = opts.checkpoint ?? join(root, "ckpt");
    const pkg = join(root, "pkg");
    const t0 = performance.now();
    learner(["-m", "rlft_learner", "export-smolvla", ckpt, "--out", pkg, "--vectors", "1", "--state-names", "q.a,q.b,q.c,q.d,q.e,q.f", "--action-names", "a,b,c,d,e,f", ...(opts.checkpoint ? [] : ["--make-random", "real", ...(opts.depth ? ["--depth", String(opts.depth)] : [])])]);
    const exportS = (performance.now() - t0) / 1000;
    const vec = JSON.parse(readFileSync(join(pkg, "test_vectors.json"), "utf8")) as { instructions: string[]; state: number[][]; frames: Record<string, (number[] | null)[]>; noise: number[][]; actions: number[][][] };
    const kept = await VlaPolicy.create(pkg, { threads: opts.threads });
    const copied = await VlaPolicy.create(pkg, { threads: opts.threads, keepPrefix: false });
    const images: Record<string, { width: number; height: number; data: Uint8Array }> = {};
    for (const c of kept.package.json.cameras) {
      const f = vec.frames[c.name]?.[0];
      if (f) images[c.name] = { width: c.crop[3], height: c.crop[2], data: Uint8Array.from(f) };
    }
    const input = { state: vec.state[0], instruction: vec.instructions[0], images, noise: Float32Array.from(vec.noise[0]) };
    const first = await kept.sampleChunk(input);
    let err = 0;
    first.actions.flat().forEach((v, i) => (err = Math.max(err, Math.abs(v - vec.actions[0].flat()[i]))));
    const prefix: number[] = [];
    const chunk: number[] = [];
    const chunkCopy: number[] = [];
    let bytesKept = 0;
    let bytesCopied = 0;
    let kv = 0;
    await copied.sampleChunk(input);
    for (let i = 0; i < opts.iters; i++) {
      const a = await kept.sampleChunk(input);
      prefix.push(a.prefixMs);
      chunk.push(a.inferenceMs);
      bytesKept = a.stepFeedBytes;
      kv = a.prefixBytes;
      const b = await copied.sampleChunk(input);
      chunkCopy.push(b.inferenceMs);
      bytesCopied = b.stepFeedBytes;
    }
    await kept.close();
    await copied.close();
    const sizes = spawnSync("du", ["-sm", pkg], { encoding: "utf8" }).stdout.split("\t")[0];
    const t = JSON.parse(learner(["-m", "rlft_learner", "bench-smolvla", "--checkpoint", ckpt, "--threads", String(opts.threads), "--iters", String(opts.iters)]).trim().split("\n").pop()!) as Record<string, { p50_ms: number; p99_ms: number }> & Record<string, unknown>;
    return {
      source: opts.checkpoint ?? `random SmolVLA, real shapes${opts.depth ? ` but ${opts.depth} layers` : ""} (export-smolvla --make-random real)`,
      threads: opts.threads,
      iters: opts.iters,
      export_s: exportS,
      package_mb: Number(sizes),
      onnx_ms: { prefix: pct(prefix), chunk: pct(chunk), chunk_copying_cache: pct(chunkCopy) },
      torch_eager_ms: { prefix: { p50: t.prefix.p50_ms, p99: t.prefix.p99_ms }, chunk: { p50: t.chunk.p50_ms, p99: t.chunk.p99_ms } },
      bytes_per_step: { kv_kept_in_worker: bytesKept, kv_copied: bytesCopied },
      kv_cache_bytes: kv,
      max_abs_err_vs_torch: err,
      torch: { version: t.torch, params: t.params, cameras: t.cameras, layers: t.layers, steps: t.steps },
    };
  } finally {
    if (!opts.checkpoint) rmSync(root, { recursive: true, force: true });
    else rmSync(join(root, "pkg"), { recursive: true, force: true });
  }
}

export function formatSmolvlaRows(r: SmolvlaRows): string {
  const f = (x: number) => x.toFixed(0).padStart(8);
  const mb = (b: number) => `${(b / 2 ** 20).toFixed(2)} MiB`;
  return [
    `SmolVLA (${r.source}; ${(Number(r.torch.params) / 1e6).toFixed(0)}M params, ${r.torch.cameras} cameras), batch 1, ${r.threads} threads, ${r.iters} chunks   p50 ms    p99 ms   p50 vs PyTorch`,
    `  prefix, onnxruntime-node (worker)           ${f(r.onnx_ms.prefix.p50)}  ${f(r.onnx_ms.prefix.p99)}   ${(r.onnx_ms.prefix.p50 / r.torch_eager_ms.prefix.p50).toFixed(2)}×`,
    `  prefix, PyTorch eager                       ${f(r.torch_eager_ms.prefix.p50)}  ${f(r.torch_eager_ms.prefix.p99)}   1.00×`,
    `  whole chunk (prefix + ${r.torch.steps} steps), onnx, KV kept ${f(r.onnx_ms.chunk.p50)}  ${f(r.onnx_ms.chunk.p99)}   ${(r.onnx_ms.chunk.p50 / r.torch_eager_ms.chunk.p50).toFixed(2)}×`,
    `  whole chunk, onnx, KV copied every step     ${f(r.onnx_ms.chunk_copying_cache.p50)}  ${f(r.onnx_ms.chunk_copying_cache.p99)}   ${(r.onnx_ms.chunk_copying_cache.p50 / r.torch_eager_ms.chunk.p50).toFixed(2)}×`,
    `  whole chunk, PyTorch eager                  ${f(r.torch_eager_ms.chunk.p50)}  ${f(r.torch_eager_ms.chunk.p99)}   1.00×`,
    `  bytes to the worker per Euler step: ${mb(r.bytes_per_step.kv_kept_in_worker)} with the KV cache (${mb(r.kv_cache_bytes)}) kept there, ${mb(r.bytes_per_step.kv_copied)} copying it`,
    `  ONNX chunk vs PyTorch: max |Δ| ${r.max_abs_err_vs_torch.toExponential(2)} (robot units); export ${r.export_s.toFixed(0)} s, package ${r.package_mb} MB`,
  ].join("\n");
}
