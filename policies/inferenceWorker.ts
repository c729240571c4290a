/**
 * Worker thread that owns the onnxruntime-node sessions. `session.run()` blocks its thread while it computes
 * (onnxruntime issues #19611, #26968), so it runs here and never on the control loop's event loop.
 * Started through inferenceWorker.mjs; spoken to only by InferenceClient.ts.
 */
import { parentPort } from "node:worker_threads";
import { access } from "node:fs/promises";
import * as ort from "onnxruntime-node";
import type { Feeds, WireTensor, WorkerReply, WorkerRequest } from "./inferenceProtocol.ts";

const port = parentPort;
if (port === null) throw new Error("inferenceWorker.ts must run in a worker_thread (use InferenceClient)");

const sessions = new Map<string, ort.InferenceSession>();
let queue: Promise<void> = Promise.resolve();

function post(reply: WorkerReply, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(reply, transfer);
}

class LoadError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly file: string,
  ) {
    super(message);
  }
}

async function createSession(key: string, path: string, providers: string[], intraOpThreads: number): Promise<{ session: ort.InferenceSession; provider: string }> {
  try {
    await access(path);
  } catch (e) {
    throw new LoadError("missing_model", `Cannot open ONNX model ${path}: ${(e as Error).message}`, path);
  }
  const order = [...providers.filter((p) => p !== "cpu"), "cpu"];
  let lastError: unknown;
  for (const provider of order) {
    try {
      const session = await ort.InferenceSession.create(path, {
        executionProviders: [provider],
        intraOpNumThreads: intraOpThreads,
        interOpNumThreads: 1,
        executionMode: "sequential",
        graphOptimizationLevel: "all",
      });
      return { session, provider };
    } catch (e) {
      lastError = e;
      if (provider !== "cpu") post({ type: "log", level: "warn", message: `execution provider "${provider}" failed for ${key} (${path}): ${(e as Error).message.split("\n")[0]} — falling back` });
    }
  }
  throw new LoadError("invalid_model", `Cannot load ONNX model ${path}: ${(lastError as Error).message} — the file is corrupt or not an ONNX model; re-export the policy package`, path);
}

function toOrt(t: WireTensor): ort.Tensor {
  if (t.data instanceof BigInt64Array) return new ort.Tensor("int64", t.data, t.dims);
  if (t.data instanceof Uint8Array) return new ort.Tensor("uint8", t.data, t.dims);
  return new ort.Tensor("float32", t.data, t.dims);
}

async function runModel(model: string, feeds: Feeds): Promise<Feeds> {
  const session = sessions.get(model);
  if (session === undefined) throw new LoadError("unknown_model", `No model "${model}" loaded (loaded: ${[...sessions.keys()].join(", ") || "none"})`, model);
  const ortFeeds: Record<string, ort.Tensor> = {};
  for (const [name, t] of Object.entries(feeds)) ortFeeds[name] = toOrt(t);
  const results = await session.run(ortFeeds);
  const outputs: Feeds = {};
  for (const [name, t] of Object.entries(results)) {
    // Copy into a fresh buffer we own, so it can be transferred to the main thread.
    const data = t.type === "int64" ? new BigInt64Array(t.data as BigInt64Array) : new Float32Array(t.data as Float32Array);
    outputs[name] = { data, dims: [...t.dims] };
  }
  return outputs;
}

async function handle(req: WorkerRequest): Promise<void> {
  try {
    if (req.type === "load") {
      const chosen: Record<string, string> = {};
      const inputs: Record<string, string[]> = {};
      for (const [key, path] of Object.entries(req.models)) {
        const { session, provider } = await createSession(key, path, req.providers, req.intraOpThreads);
        const old = sessions.get(key);
        sessions.set(key, session);
        if (old !== undefined) await old.release();
        chosen[key] = provider;
        inputs[key] = [...session.inputNames];
        const expected = req.expectInputs?.[key];
        if (expected !== undefined) {
          const missing = expected.filter((n) => !inputs[key].includes(n));
          const extra = inputs[key].filter((n) => !expected.includes(n));
          if (missing.length > 0 || extra.length > 0) {
            const what = [missing.length ? `lacks ${missing.map((n) => `"${n}"`).join(", ")}` : "", extra.length ? `has unexpected ${extra.map((n) => `"${n}"`).join(", ")}` : ""].filter(Boolean).join(" and ");
            throw new LoadError("input_mismatch", `ONNX model ${path} ${what}: its inputs are [${inputs[key].join(", ")}] but policy.json implies [${expected.join(", ")}] — the package's policy.json and graphs disagree; re-export it`, path);
          }
        }
        const warm = req.warmup[key];
        if (warm !== undefined) {
          let outputs: Feeds;
          try {
            outputs = await runModel(key, warm);
          } catch (e) {
            throw new LoadError("warmup_failed", `Warm-up run of ${path} failed: ${(e as Error).message} — its inputs do not match policy.json`, path);
          }
          // The warm-up input is a valid one (the mean observation): a network that answers it with NaN or Inf is
          // broken (weights poisoned by a diverged or attacked learner, issue 24 item 2) and is never loaded.
          for (const [name, t] of Object.entries(outputs)) {
            if (!(t.data instanceof Float32Array)) continue;
            let bad = 0;
            for (const x of t.data) if (!Number.isFinite(x)) bad++;
            if (bad > 0) throw new LoadError("non_finite_output", `Warm-up run of ${path}: output "${name}" has ${bad} of ${t.data.length} values NaN or infinite on a valid input — the network's weights are not finite (a diverged training run?); refusing it`, path);
          }
        }
      }
      post({ type: "loaded", id: req.id, providers: chosen, inputs });
    } else if (req.type === "close") {
      // Queued behind every run: no session is computing now, so releasing them (and then terminating this thread)
      // never pulls a session out from under a native run — which aborts the whole process with a Napi::Error.
      const all = [...sessions.values()];
      sessions.clear();
      for (const s of all) await s.release().catch(() => undefined);
      post({ type: "closed", id: req.id });
    } else {
      const t0 = performance.now();
      const outputs = await runModel(req.model, req.feeds);
      const ms = performance.now() - t0;
      post({ type: "result", id: req.id, outputs, ms }, Object.values(outputs).map((o) => o.data.buffer as ArrayBuffer));
    }
  } catch (e) {
    const err = e as Error & { code?: string; file?: string };
    post({ type: "error", id: req.id, code: err instanceof LoadError ? err.code : "run_failed", message: err.message, file: err instanceof LoadError ? err.file : undefined });
  }
}

port.on("message", (req: WorkerRequest) => {
  // One request at a time: a session is not re-entrant and the requests' order is their ids' order.
  queue = queue.then(() => handle(req));
});
