/**
 * Uploads demonstration episodes to the learner over `rlft-exp/1` (docs/contracts.md): a DEALER socket that says
 * hello, sends episodes and `end`, and awaits each reply with a deadline. Every request carries a fresh seq and a
 * reply is matched to its request by seq only, so a late reply is never applied to another request.
 */
import { Dealer } from "zeromq";
import { curveClientOptions, type CurveClientKeys } from "./CurveCertificate.ts";
import { decodeMessage, encodeMessage, tensorFromRows, WireError, type Header, type ImageTensor, type Tensor } from "./wire.ts";

/** Why a learner exchange failed. */
export class DatasetClientError extends Error {
  readonly code: "timeout" | "rejected" | "closed" | "bad_input";

  constructor(code: DatasetClientError["code"], message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "DatasetClientError";
    this.code = code;
  }
}

/** Options of {@link DatasetClient.connect}. */
export interface DatasetClientOptions {
  robotId: string;
  /** Hash of the robot/task config; the learner records it with the dataset. */
  configHash: string;
  obsNames: readonly string[];
  actionNames: readonly string[];
  task: string;
  /** Deadline of every exchange (hello, each episode, end). Default 10 000 ms. */
  timeoutMs?: number;
  /** Where dropped replies are reported. Default console. */
  logger?: { warn(msg: string): void };
  /** CURVE keys (docs/security.md) for a learner started with curve_secret / curve_authorized (train-bc, recap). */
  curve?: CurveClientKeys;
}

/** One episode as recorded: obs T × obs_dim, action T × action_dim, reward T. */
export interface EpisodeUpload {
  episodeId: string | number;
  seed: number;
  task: string;
  success: boolean;
  obs: readonly (readonly number[])[];
  action: readonly (readonly number[])[];
  reward: readonly number[];
  /** Optional, T values 0/1: who acted per step (1 = operator), for RECAP's intervention-forced positives. */
  intervention?: readonly number[];
  /** Optional: where the episode came from (scripted_expert, recap_collect, ...). */
  source?: string;
  /** Optional camera frames, one per step: camera → T frames of width × height rgb8 back to back (uint8 on the wire). */
  images?: Readonly<Record<string, EpisodeFrames>>;
}

/** One camera's frames of an episode. */
export interface EpisodeFrames {
  width: number;
  height: number;
  /** T × height × width × 3 bytes. */
  data: Uint8Array;
}

type ResolvedOptions = DatasetClientOptions & { timeoutMs: number };

interface Pending {
  what: string;
  /** The reply type that completes this request (`error` always rejects it). */
  expect: "welcome" | "ack";
  resolve(header: Header): void;
  reject(err: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/** A connected, greeted dataset uploader. */
export class DatasetClient {
  readonly endpoint: string;
  /** The learner's self-description from `welcome`. */
  readonly learner: string;
  #socket: Dealer;
  #options: ResolvedOptions;
  #seq = 0;
  #pending = new Map<number, Pending>();
  #episodes = 0;
  #closed = false;
  /** Replies that matched no waiting request, or did not decode. */
  droppedReplies = 0;

  private constructor(endpoint: string, socket: Dealer, options: ResolvedOptions, learner: string) {
    this.endpoint = endpoint;
    this.#socket = socket;
    this.#options = options;
    this.learner = learner;
  }

  /** Connects a DEALER to `endpoint` and does the hello handshake; rejects when no learner answers within timeoutMs. */
  static async connect(endpoint: string, options: DatasetClientOptions): Promise<DatasetClient> {
    const opts = { timeoutMs: 10_000, ...options };
    const socket = new Dealer({ linger: 0, sendHighWaterMark: 1000, ...curveClientOptions(opts.curve) });
    socket.connect(endpoint);
    const client = new DatasetClient(endpoint, socket, opts, "");
    void client.#receiveLoop();
    try {
      const welcome = await client.#request(
        { type: "hello", robot_id: opts.robotId, config_hash: opts.configHash, obs_names: [...opts.obsNames], action_names: [...opts.actionNames], task: opts.task },
        [],
        "hello",
        "welcome",
        `no learner answered at ${endpoint} within ${opts.timeoutMs / 1000} s — is \`python3 -m rlft_learner train-bc\` running and bound to that address?`,
      );
      (client as { learner: string }).learner = String(welcome.learner);
    } catch (e) {
      client.close();
      throw e;
    }
    return client;
  }

  /** Sends one episode and waits for its ack. */
  async sendEpisode(ep: EpisodeUpload): Promise<void> {
    const T = ep.obs.length;
    if (T < 1) throw new DatasetClientError("bad_input", `episode ${ep.episodeId}: an episode needs at least one step`);
    if (ep.action.length !== T || ep.reward.length !== T) {
      throw new DatasetClientError("bad_input", `episode ${ep.episodeId}: obs, action and reward must have one length T; found ${T}, ${ep.action.length}, ${ep.reward.length}`);
    }
    let tensors;
    try {
      tensors = [
        ["obs", tensorFromRows("obs", ep.obs, this.#options.obsNames.length)],
        ["action", tensorFromRows("action", ep.action, this.#options.actionNames.length)],
        ["reward", tensorFromRows("reward", ep.reward.map((r) => [r]), 1)],
      ] as const;
    } catch (e) {
      throw new DatasetClientError("bad_input", `episode ${ep.episodeId}: ${(e as Error).message}`, { cause: e });
    }
    const reward = { shape: [T], data: tensors[2][1].data };
    const frames: [string, Tensor | ImageTensor][] = [["obs", tensors[0][1]], ["action", tensors[1][1]], ["reward", reward]];
    if (ep.intervention !== undefined) {
      if (ep.intervention.length !== T || !ep.intervention.every((x) => x === 0 || x === 1)) {
        throw new DatasetClientError("bad_input", `episode ${ep.episodeId}: intervention must hold T = ${T} values, each 0 or 1; found ${ep.intervention.length} values`);
      }
      frames.push(["intervention", { shape: [T], data: Float32Array.from(ep.intervention) }]);
    }
    for (const [cam, f] of Object.entries(ep.images ?? {})) {
      if (!/^[a-z][a-z0-9_]{0,31}$/.test(cam)) throw new DatasetClientError("bad_input", `episode ${ep.episodeId}: camera name "${cam}" must be lowercase letters, digits and _ (it names the image.<camera> tensor)`);
      if (f.data.length !== T * f.height * f.width * 3) {
        throw new DatasetClientError("bad_input", `episode ${ep.episodeId}: camera ${cam} needs T = ${T} frames of ${f.width}×${f.height} rgb8 (${T * f.height * f.width * 3} bytes); found ${f.data.length} bytes`);
      }
      frames.push([`image.${cam}`, { shape: [T, f.height, f.width, 3], data: f.data }]);
    }
    await this.#request(
      { type: "episode", episode_id: ep.episodeId, seed: ep.seed, task: ep.task, length: T, success: ep.success, ...(ep.source !== undefined ? { source: ep.source } : {}) },
      frames,
      `episode ${ep.episodeId}`,
      "ack",
    );
    this.#episodes++;
  }

  /** Tells the learner the dataset is complete (it starts training) and waits for the ack. */
  async end(): Promise<void> {
    await this.#request({ type: "end", episodes: this.#episodes }, [], "end", "ack");
  }

  /** Closes the socket; waiting requests reject. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket.close();
    for (const p of this.#pending.values()) {
      clearTimeout(p.timer);
      p.reject(new DatasetClientError("closed", `DatasetClient closed while waiting for the reply to ${p.what}`));
    }
    this.#pending.clear();
  }

  #request(header: Record<string, unknown>, tensors: [string, Tensor | ImageTensor][], what: string, expect: Pending["expect"], timeoutMessage?: string): Promise<Header> {
    if (this.#closed) return Promise.reject(new DatasetClientError("closed", `DatasetClient is closed; cannot send ${what}`));
    const seq = ++this.#seq;
    const frames = encodeMessage({ ...header, seq }, tensors);
    const { timeoutMs } = this.#options;
    return new Promise<Header>((resolve, reject) => {
      const timer = setTimeout(() => {
        // The seq is forgotten: a reply arriving later matches nothing and is dropped.
        this.#pending.delete(seq);
        reject(new DatasetClientError("timeout", timeoutMessage ?? `learner at ${this.endpoint} did not acknowledge ${what} (seq ${seq}) within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.#pending.set(seq, { what, expect, resolve, reject, timer });
      // With no peer connected a DEALER send waits; the deadline above covers that too.
      this.#socket.send(frames).catch((e: Error) => {
        const p = this.#pending.get(seq);
        if (p === undefined) return;
        clearTimeout(p.timer);
        this.#pending.delete(seq);
        p.reject(this.#closed ? new DatasetClientError("closed", `DatasetClient closed before ${what} was sent`) : new DatasetClientError("rejected", `cannot send ${what}: ${e.message}`, { cause: e }));
      });
    });
  }

  async #receiveLoop(): Promise<void> {
    try {
      for await (const frames of this.#socket) this.#onReply(frames);
    } catch (e) {
      if (!this.#closed) this.#options.logger?.warn(`DatasetClient: receive loop ended: ${(e as Error).message}`);
    }
  }

  #onReply(frames: Buffer[]): void {
    let header: Header;
    try {
      header = decodeMessage(frames).header;
    } catch (e) {
      this.droppedReplies++;
      (this.#options.logger ?? console).warn(`DatasetClient: dropped a malformed reply from ${this.endpoint}: ${(e as WireError).message}`);
      return;
    }
    const p = this.#pending.get(header.seq);
    if (p === undefined || (header.type !== p.expect && header.type !== "error")) {
      this.droppedReplies++;
      const why = header.type === "error" ? `: ${String(header.reason)}` : "";
      (this.#options.logger ?? console).warn(`DatasetClient: dropped a ${header.type} reply with seq ${header.seq} that matches no waiting request${why}`);
      return;
    }
    this.#pending.delete(header.seq);
    clearTimeout(p.timer);
    if (header.type === "error") p.reject(new DatasetClientError("rejected", `learner at ${this.endpoint} rejected ${p.what}: ${String(header.reason)}`));
    else p.resolve(header);
  }
}
