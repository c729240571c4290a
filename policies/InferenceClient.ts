/**
 * Main-thread handle on a worker_thread that owns onnxruntime-node sessions.
 * Requests carry ids; results come back as transferred Float32Array buffers.
 */
import { Worker } from "node:worker_threads";
import type { Feeds, KeptTensor, WireTensor, WorkerReply, WorkerRequest } from "./inferenceProtocol.ts";

export type { Feeds, KeptTensor, WireTensor } from "./inferenceProtocol.ts";

/** Why inference failed; `file` names the model when it is about one. */
export class InferenceError extends Error {
  readonly code: string;
  readonly file: string | undefined;

  constructor(code: string, message: string, options: { cause?: unknown; file?: string } = {}) {
    super(message, { cause: options.cause });
    this.name = "InferenceError";
    this.code = code;
    this.file = options.file;
  }
}

/** Options of {@link InferenceClient.create}. */
export interface InferenceClientOptions {
  /** Execution providers in order of preference (`["cuda", "cpu"]`); CPU is always the last resort. Default `["cpu"]`. */
  providers?: readonly string[];
  /** onnxruntime intra-op threads per session. Default 1 (leaves cores to the control loop). */
  threads?: number;
  /** model key → inputs for one warm-up run at load. */
  warmup?: Record<string, Feeds>;
  /** model key → the input names the graph must have (exactly); checked before the warm-up, error code `input_mismatch`. */
  expectInputs?: Record<string, string[]>;
  /** Where provider fallbacks are reported. Default console. */
  logger?: { warn(msg: string): void; info(msg: string): void };
}

/** Result of one {@link InferenceClient.run}. */
export interface RunResult {
  outputs: Record<string, WireTensor>;
  /** Time spent in session.run inside the worker. */
  ms: number;
  /** With `keep`: what stayed in the worker (outputs is then empty). */
  kept?: Record<string, KeptTensor>;
}

/** Options of {@link InferenceClient.run}. */
export interface RunOptions {
  /** Keep the outputs in the worker under this name instead of sending them back. */
  keep?: string;
  /** Feed the outputs kept under this name (in addition to `feeds`) without copying them. */
  reuse?: string;
}

interface Pending {
  resolve(reply: WorkerReply): void;
  reject(err: Error): void;
}

/** Runs ONNX models off the event loop. */
export class InferenceClient {
  #worker: Worker;
  #nextId = 1;
  #pending = new Map<number, Pending>();
  #closed = false;
  #closing: Promise<void> | undefined;
  #exited = false;
  #logger: NonNullable<InferenceClientOptions["logger"]>;
  #providers: Record<string, string> = {};
  #inputs: Record<string, string[]> = {};
  #inputTypes: Record<string, Record<string, string>> = {};

  private constructor(worker: Worker, logger: NonNullable<InferenceClientOptions["logger"]>) {
    this.#worker = worker;
    this.#logger = logger;
    worker.on("message", (reply: WorkerReply) => {
      if (reply.type === "log") {
        logger[reply.level](`[inference] ${reply.message}`);
        return;
      }
      const p = this.#pending.get(reply.id);
      if (p === undefined) return; // a reply for a request nobody waits for any more
      this.#pending.delete(reply.id);
      if (reply.type === "error") p.reject(new InferenceError(reply.code, reply.message, { file: reply.file }));
      else p.resolve(reply);
    });
    worker.on("error", (e) => this.#failAll(new InferenceError("worker_crashed", `Inference worker crashed: ${e.message}`, { cause: e })));
    worker.on("exit", (code) => {
      this.#exited = true;
      this.#failAll(new InferenceError("worker_exited", `Inference worker exited (code ${code})`));
    });
  }

  /** Starts the worker and loads `models` (key → .onnx path); rejects with an error naming the file that failed. */
  static async create(models: Record<string, string>, options: InferenceClientOptions = {}): Promise<InferenceClient> {
    const worker = new Worker(new URL("./inferenceWorker.mjs", import.meta.url));
    const client = new InferenceClient(worker, options.logger ?? console);
    try {
      const reply = await client.#request({
        type: "load",
        id: 0,
        models,
        providers: [...(options.providers ?? ["cpu"])],
        intraOpThreads: options.threads ?? 1,
        warmup: options.warmup ?? {},
        expectInputs: options.expectInputs,
      });
      if (reply.type === "loaded") {
        client.#providers = reply.providers;
        client.#inputs = reply.inputs;
        client.#inputTypes = reply.inputTypes;
      }
    } catch (e) {
      await client.close();
      throw e;
    }
    return client;
  }

  /** model key → the execution provider it actually runs on. */
  get providers(): Readonly<Record<string, string>> {
    return this.#providers;
  }

  /** model key → the input names of its graph, in graph order. */
  get inputNames(): Readonly<Record<string, readonly string[]>> {
    return this.#inputs;
  }

  /** model key → input name → the element type its graph declares (float32, float16, int64, bool, …). */
  get inputTypes(): Readonly<Record<string, Readonly<Record<string, string>>>> {
    return this.#inputTypes;
  }

  /** Runs `model` on `feeds`. Feed buffers that span a whole ArrayBuffer are transferred (detached here). */
  async run(model: string, feeds: Feeds, options: RunOptions = {}): Promise<RunResult> {
    const reply = await this.#request({ type: "run", id: 0, model, feeds, ...options });
    if (reply.type !== "result") throw new InferenceError("protocol", `Inference worker answered ${reply.type} to a run request`);
    return { outputs: reply.outputs, ms: reply.ms, kept: reply.kept };
  }

  /**
   * Stops the worker. New requests reject at once; requests already sent finish first (their promises settle as
   * usual), then the worker releases its sessions and only then is terminated: terminating it while a native
   * session.run computes aborts the whole process (an uncaught Napi::Error), so a run in flight at episode end or
   * shutdown is always waited for. A worker that does not answer within `graceMs` (a hung execution provider) is
   * terminated anyway, with a warning.
   */
  close(graceMs = 30_000): Promise<void> {
    this.#closing ??= this.#shutDown(graceMs);
    return this.#closing;
  }

  async #shutDown(graceMs: number): Promise<void> {
    this.#closed = true;
    if (!this.#exited) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const drained = this.#send({ type: "close", id: 0 }).then(
        () => true,
        () => true, // the worker died meanwhile: nothing left to wait for
      );
      const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
      const inTime = await Promise.race([drained, late]);
      clearTimeout(timer);
      if (!inTime) this.#logger.warn(`[inference] the inference worker did not finish its requests within ${graceMs} ms of close(); terminating it`);
    }
    await this.#worker.terminate();
    this.#failAll(new InferenceError("closed", "InferenceClient closed"));
  }

  #request(req: WorkerRequest): Promise<WorkerReply> {
    if (this.#closed) return Promise.reject(new InferenceError("closed", "InferenceClient is closed"));
    return this.#send(req);
  }

  #send(req: WorkerRequest): Promise<WorkerReply> {
    const id = this.#nextId++;
    const msg = { ...req, id };
    const transfer: ArrayBuffer[] = [];
    if (msg.type === "run") {
      for (const t of Object.values(msg.feeds)) {
        const buf = t.data.buffer;
        if (buf instanceof ArrayBuffer && t.data.byteOffset === 0 && t.data.byteLength === buf.byteLength && !transfer.includes(buf)) transfer.push(buf);
      }
    }
    return new Promise<WorkerReply>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage(msg, transfer);
    });
  }

  #failAll(err: Error): void {
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }
}
