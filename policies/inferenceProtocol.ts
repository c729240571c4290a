/** Messages between {@link InferenceClient} (main thread) and inferenceWorker.ts (worker thread). */

/** A tensor as it crosses the thread boundary (buffers are transferred, not copied, where possible). */
export interface WireTensor {
  /** float32, int64, uint8 (camera frames, HWC; bool tensors), or float16 bits (Uint16Array). */
  data: Float32Array | BigInt64Array | Uint8Array | Uint16Array;
  dims: number[];
  /**
   * Element type when the array alone does not say it: "bool" for a Uint8Array of 0/1, "float16" for a Uint16Array.
   * The worker converts a feed to the type the graph declares for that input (float32 → float16, 0/1 → bool, …).
   */
  type?: WireType;
}

/** Element types that cross the worker boundary (what onnxruntime-node can feed and fetch; it has no bfloat16). */
export type WireType = "float32" | "float16" | "int64" | "int32" | "uint8" | "bool";

export const WIRE_TYPES: readonly WireType[] = ["float32", "float16", "int64", "int32", "uint8", "bool"];

export type Feeds = Record<string, WireTensor>;

/** Main → worker. */
export type WorkerRequest =
  | {
      type: "load";
      id: number;
      /** model key → absolute .onnx path */
      models: Record<string, string>;
      /** Tried in order; CPU is the last resort. */
      providers: string[];
      intraOpThreads: number;
      /** model key → feeds run once after loading, so the first real call is not the slow one. */
      warmup: Record<string, Feeds>;
      /** model key → the input names policy.json implies; a graph with other inputs is refused before warm-up. */
      expectInputs?: Record<string, string[]>;
    }
  | {
      type: "run";
      id: number;
      model: string;
      feeds: Feeds;
      /** Keep the outputs in the worker under this name (onnxruntime tensors, never copied out); the reply lists them. */
      keep?: string;
      /** Add the outputs kept under this name to `feeds` (a KV cache computed once, fed to every flow step). */
      reuse?: string;
    }
  /** After every request before it: release the sessions and answer "closed"; the worker is then idle and can be terminated. */
  | { type: "close"; id: number };

/** Worker → main. */
export type WorkerReply =
  | { type: "loaded"; id: number; providers: Record<string, string>; inputs: Record<string, string[]>; inputTypes: Record<string, Record<string, string>> }
  | { type: "result"; id: number; outputs: Feeds; ms: number; kept?: Record<string, KeptTensor> }
  | { type: "closed"; id: number }
  | { type: "error"; id: number; code: string; message: string; file?: string }
  | { type: "log"; level: "warn" | "info"; message: string };

/** What a run with `keep` left in the worker, per output. */
export interface KeptTensor {
  dims: number[];
  type: string;
  bytes: number;
}
