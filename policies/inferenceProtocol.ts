/** Messages between {@link InferenceClient} (main thread) and inferenceWorker.ts (worker thread). */

/** A tensor as it crosses the thread boundary (buffers are transferred, not copied, where possible). */
export interface WireTensor {
  /** float32, int64, or uint8 (camera frames, HWC). */
  data: Float32Array | BigInt64Array | Uint8Array;
  dims: number[];
}

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
  | { type: "run"; id: number; model: string; feeds: Feeds }
  /** After every request before it: release the sessions and answer "closed"; the worker is then idle and can be terminated. */
  | { type: "close"; id: number };

/** Worker → main. */
export type WorkerReply =
  | { type: "loaded"; id: number; providers: Record<string, string>; inputs: Record<string, string[]> }
  | { type: "result"; id: number; outputs: Feeds; ms: number }
  | { type: "closed"; id: number }
  | { type: "error"; id: number; code: string; message: string; file?: string }
  | { type: "log"; level: "warn" | "info"; message: string };
