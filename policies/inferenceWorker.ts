/**
 * Worker thread that owns the onnxruntime-node sessions. `session.run()` blocks its thread while it computes
 * (onnxruntime issues #19611, #26968), so it runs here and never on the control loop's event loop.
 * Started through inferenceWorker.mjs; spoken to only by InferenceClient.ts.
 */
import { parentPort } from "node:worker_threads";
import { access, readFile } from "node:fs/promises";
import * as ort from "onnxruntime-node";
import { WIRE_TYPES, type Feeds, type KeptTensor, type WireTensor, type WireType, type WorkerReply, type WorkerRequest } from "./inferenceProtocol.ts";
import { f16ToF32, f32ToF16 } from "./float16.ts";
import { graphIo } from "./onnxExternalData.ts";

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
  // onnxruntime-node refuses a graph whose inputs/outputs it has no JS type for ("Unsupported data type: 16"):
  // name the input and its type from the file itself.
  const unsupported = await unsupportedIo(path);
  if (unsupported) throw new LoadError("unsupported_type", unsupported, path);
  throw new LoadError("invalid_model", `Cannot load ONNX model ${path}: ${(lastError as Error).message} — the file is corrupt or not an ONNX model; re-export the policy package`, path);
}

/** A sentence naming the first graph input/output whose element type the worker cannot carry, or null. */
async function unsupportedIo(path: string): Promise<string | null> {
  let io: ReturnType<typeof graphIo>;
  try {
    io = graphIo(await readFile(path));
  } catch {
    return null;
  }
  const bad = io.find((v) => !WIRE_TYPES.includes(v.type as WireType));
  return bad ? unsupportedMessage(path, bad.io, bad.name, bad.type) : null;
}

function unsupportedMessage(path: string, what: "input" | "output", name: string, type: string): string {
  return `ONNX model ${path} ${what} "${name}" is ${type}, which the robot's runtime cannot ${what === "input" ? "feed" : "fetch"} (onnxruntime-node takes ${WIRE_TYPES.join(", ")}) — export the graph with float32 or float16 ${what}s and cast inside it`;
}

/** Model key → input name → element type the graph declares. */
const inputTypes = new Map<string, Map<string, string>>();
/** Outputs kept in the worker by a run with `keep`, by that name. */
const kept = new Map<string, Record<string, ort.Tensor>>();

function wireType(t: WireTensor): WireType {
  if (t.type) return t.type;
  if (t.data instanceof BigInt64Array) return "int64";
  if (t.data instanceof Uint8Array) return "uint8";
  if (t.data instanceof Uint16Array) return "float16";
  return "float32";
}

/** The feed as the element type the graph declares (`want`); a conversion that would lose meaning is refused. */
function toOrt(name: string, t: WireTensor, want: string | undefined): ort.Tensor {
  const have = wireType(t);
  const target = want ?? have;
  if (have === target) {
    if (target === "float16") return new ort.Tensor("float16", t.data as Uint16Array, t.dims);
    return new ort.Tensor(target as "float32", t.data as Float32Array, t.dims);
  }
  const numeric = (): number[] | Float32Array => (have === "float16" ? f16ToF32(t.data as Uint16Array) : t.data instanceof BigInt64Array ? Array.from(t.data, Number) : (t.data as Float32Array));
  switch (target) {
    case "float32":
      if (have === "int64" || have === "bool") break;
      return new ort.Tensor("float32", Float32Array.from(numeric()), t.dims);
    case "float16":
      if (have !== "float32") break;
      return new ort.Tensor("float16", f32ToF16(t.data as Float32Array), t.dims);
    case "bool":
      if (have === "float32" || have === "float16") break;
      return new ort.Tensor("bool", Uint8Array.from(numeric(), (v) => (v !== 0 ? 1 : 0)), t.dims);
    case "int64":
      if (have !== "bool" && have !== "uint8" && have !== "int32") break;
      return new ort.Tensor("int64", BigInt64Array.from(numeric(), (v) => BigInt(v)), t.dims);
  }
  throw new Error(`input "${name}": the graph takes ${target}, the feed is ${have} — no lossless conversion`);
}

function fromOrt(t: ort.Tensor): WireTensor {
  // Copy into a fresh buffer we own, so it can be transferred to the main thread.
  const dims = [...t.dims];
  switch (t.type) {
    case "int64":
      return { data: new BigInt64Array(t.data as BigInt64Array), dims };
    case "bool":
      return { data: new Uint8Array(t.data as Uint8Array), dims, type: "bool" };
    case "uint8":
      return { data: new Uint8Array(t.data as Uint8Array), dims };
    case "float16":
      // The caller computes in float32 (velocity, actions).
      return { data: f16ToF32(t.data as Uint16Array), dims };
    case "int32":
      return { data: Float32Array.from(t.data as Int32Array), dims };
    default:
      return { data: new Float32Array(t.data as Float32Array), dims };
  }
}

async function runModel(model: string, feeds: Feeds, reuse?: string): Promise<Record<string, ort.Tensor>> {
  const session = sessions.get(model);
  if (session === undefined) throw new LoadError("unknown_model", `No model "${model}" loaded (loaded: ${[...sessions.keys()].join(", ") || "none"})`, model);
  const types = inputTypes.get(model);
  const ortFeeds: Record<string, ort.Tensor> = {};
  if (reuse !== undefined) {
    const k = kept.get(reuse);
    if (k === undefined) throw new LoadError("unknown_kept", `No outputs kept under "${reuse}" (run the prefix with keep first)`, model);
    for (const [name, t] of Object.entries(k)) if (session.inputNames.includes(name)) ortFeeds[name] = t;
  }
  for (const [name, t] of Object.entries(feeds)) ortFeeds[name] = toOrt(name, t, types?.get(name));
  return session.run(ortFeeds);
}

function toWire(results: Record<string, ort.Tensor>): Feeds {
  const outputs: Feeds = {};
  for (const [name, t] of Object.entries(results)) outputs[name] = fromOrt(t);
  return outputs;
}

async function handle(req: WorkerRequest): Promise<void> {
  try {
    if (req.type === "load") {
      const chosen: Record<string, string> = {};
      const inputs: Record<string, string[]> = {};
      const types: Record<string, Record<string, string>> = {};
      for (const [key, path] of Object.entries(req.models)) {
        const { session, provider } = await createSession(key, path, req.providers, req.intraOpThreads);
        const old = sessions.get(key);
        sessions.set(key, session);
        if (old !== undefined) await old.release();
        chosen[key] = provider;
        inputs[key] = [...session.inputNames];
        types[key] = {};
        const declared = new Map<string, string>();
        for (const [what, list] of [["input", session.inputMetadata], ["output", session.outputMetadata]] as const) {
          for (const m of list) {
            const type = m.isTensor ? m.type : "a non-tensor value";
            if (!WIRE_TYPES.includes(type as WireType)) {
              throw new LoadError("unsupported_type", unsupportedMessage(path, what, m.name, type), path);
            }
            if (what === "input") {
              declared.set(m.name, type);
              types[key][m.name] = type;
            }
          }
        }
        inputTypes.set(key, declared);
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
            outputs = toWire(await runModel(key, warm));
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
      post({ type: "loaded", id: req.id, providers: chosen, inputs, inputTypes: types });
    } else if (req.type === "close") {
      // Queued behind every run: no session is computing now, so releasing them (and then terminating this thread)
      // never pulls a session out from under a native run — which aborts the whole process with a Napi::Error.
      const all = [...sessions.values()];
      sessions.clear();
      kept.clear();
      for (const s of all) await s.release().catch(() => undefined);
      post({ type: "closed", id: req.id });
    } else {
      const t0 = performance.now();
      const results = await runModel(req.model, req.feeds, req.reuse);
      const ms = performance.now() - t0;
      if (req.keep !== undefined) {
        // The tensors stay here: the next runs take them by name instead of a copy through the main thread.
        kept.set(req.keep, results);
        const info: Record<string, KeptTensor> = {};
        for (const [name, t] of Object.entries(results)) info[name] = { dims: [...t.dims], type: t.type, bytes: (t.data as ArrayBufferView).byteLength };
        post({ type: "result", id: req.id, outputs: {}, ms, kept: info });
      } else {
        const outputs = toWire(results);
        post({ type: "result", id: req.id, outputs, ms }, Object.values(outputs).map((o) => o.data.buffer as ArrayBuffer));
      }
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
