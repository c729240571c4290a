/**
 * Writes one episode to one MCAP file the way `ros2 bag` does (profile "ros2", `ros2msg`
 * schemas, `cdr` messages), in chunks: a chunk is closed when it exceeds `chunkSize` bytes or
 * spans `chunkIntervalSec` of log time, and every closed chunk is on disk at once, so a crash
 * loses at most the open chunk. Metadata: `rlft.log_format` and `rlft.episode` at start, `rlft.episode_result` at close.
 */
import { McapWriter } from "@mcap/core";
import { MessageRegistry } from "../runtime/msgs/MessageRegistry.ts";
import { FileWritable, type DiskQuota } from "./FileWritable.ts";
import { LOG_FORMAT_RECORD, LOG_FORMAT_VERSION } from "./logFormat.ts";

/** What `rlft.episode` records (all values are stored as strings). */
export interface EpisodeInfo {
  task: string;
  seed: number | bigint;
  robot: string;
  policy_version: string;
  git_revision: string;
  /** ISO time; default: now. */
  started_at?: string;
  [extra: string]: string | number | bigint | boolean | undefined;
}

/** What `rlft.episode_result` records. */
export interface EpisodeResult {
  success: boolean;
  length: number;
  reason: string;
  [extra: string]: string | number | bigint | boolean | undefined;
}

/** Options of McapEpisodeWriter.create. */
export interface McapEpisodeWriterOptions {
  episode: EpisodeInfo;
  /** Close a chunk once it holds more than this many bytes (default 1 MiB). */
  chunkSize?: number;
  /** Close a chunk once it spans this much log time, in seconds (default 1). */
  chunkIntervalSec?: number;
  /** fdatasync after every write (default false: a process crash is covered, a power cut may not be). */
  sync?: boolean;
  registry?: MessageRegistry;
  /** Shared byte budget of the session (see FileWritable). */
  quota?: DiskQuota;
}

function toStringMap(rec: Record<string, unknown>): Map<string, string> {
  const m = new Map<string, string>();
  for (const [k, v] of Object.entries(rec)) if (v !== undefined) m.set(k, String(v));
  return m;
}

export class McapEpisodeWriter {
  #writer: McapWriter;
  #file: FileWritable;
  #registry: MessageRegistry;
  #channels = new Map<string, { id: number; type: string; seq: number }>();
  #schemas = new Map<string, number>();
  #queue: Promise<void> = Promise.resolve();
  #error: unknown;
  #closed = false;
  #chunkStartNs: bigint | undefined;
  #intervalNs: bigint;
  #forceFlush = false;
  #count = 0;

  private constructor(
    readonly path: string,
    file: FileWritable,
    opts: McapEpisodeWriterOptions,
  ) {
    this.#file = file;
    this.#registry = opts.registry ?? MessageRegistry.default();
    this.#intervalNs = BigInt(Math.round((opts.chunkIntervalSec ?? 1) * 1e9));
    const size = opts.chunkSize ?? 1024 * 1024;
    // McapWriter has no public flush: it closes a chunk when `byteLength > chunkSize` after a
    // message. A chunkSize that reads 0 while a time-based flush is due closes the chunk there
    // (McapWriter.addMessage, @mcap/core 2.x); recording.test.ts checks the chunk count.
    const dynamicChunkSize = { valueOf: () => (this.#forceFlush ? -1 : size) } as unknown as number;
    this.#writer = new McapWriter({ writable: file, chunkSize: dynamicChunkSize, useChunks: true });
  }

  /** Creates the file, writes the header and the `rlft.episode` metadata. */
  static async create(path: string, opts: McapEpisodeWriterOptions): Promise<McapEpisodeWriter> {
    const file = await FileWritable.create(path, { sync: opts.sync, quota: opts.quota });
    const w = new McapEpisodeWriter(path, file, opts);
    try {
      await w.#writer.start({ profile: "ros2", library: "rlft recording" });
      await w.#writer.addMetadata({ name: LOG_FORMAT_RECORD, metadata: toStringMap({ format: "rlft-episode", version: LOG_FORMAT_VERSION }) });
      await w.#writer.addMetadata({
        name: "rlft.episode",
        metadata: toStringMap({ started_at: new Date().toISOString(), ...opts.episode }),
      });
    } catch (err) {
      await file.close();
      throw new Error(`Cannot start episode file ${path}: ${(err as Error).message}`, { cause: err });
    }
    return w;
  }

  /** Number of messages written so far. */
  get messageCount(): number {
    return this.#count;
  }

  #enqueue(what: string, fn: () => Promise<void>): Promise<void> {
    if (this.#closed) return Promise.reject(new Error(`Cannot ${what}: episode file ${this.path} is closed`));
    const run = this.#queue.then(async () => {
      if (this.#error) throw this.#error;
      try {
        await fn();
      } catch (err) {
        this.#error = new Error(`Writing episode file ${this.path} failed (${what}): ${(err as Error).message}`, { cause: err });
        throw this.#error;
      }
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Registers a topic (schema from the registry). Optional: write() adds unknown topics itself. */
  addChannel(topic: string, type: string): Promise<void> {
    const canonical = this.#registry.assertKnown(type);
    return this.#enqueue(`add channel ${topic}`, () => this.#addChannel(topic, canonical));
  }

  async #addChannel(topic: string, type: string): Promise<void> {
    const existing = this.#channels.get(topic);
    if (existing) {
      if (existing.type !== type) throw new Error(`topic ${topic} is recorded as ${existing.type}, not ${type}`);
      return;
    }
    let schemaId = this.#schemas.get(type);
    if (schemaId === undefined) {
      schemaId = await this.#writer.registerSchema({
        name: this.#registry.schemaName(type),
        encoding: "ros2msg",
        data: new TextEncoder().encode(this.#registry.schemaText(type)),
      });
      this.#schemas.set(type, schemaId);
    }
    const id = await this.#writer.registerChannel({ topic, schemaId, messageEncoding: "cdr", metadata: new Map() });
    this.#channels.set(topic, { id, type, seq: 0 });
  }

  /**
   * Appends one message (CDR-encoded with the topic's type). Calls are queued in order, so
   * subscription callbacks may call it without awaiting; errors surface on the next call and at close.
   */
  write(topic: string, msg: unknown, logTimeNs: bigint, opts: { type?: string; publishTimeNs?: bigint } = {}): Promise<void> {
    return this.#enqueue(`write ${topic}`, async () => {
      let ch = this.#channels.get(topic);
      if (!ch) {
        if (!opts.type) throw new Error(`topic ${topic} has no channel: call addChannel(topic, type) or pass { type }`);
        await this.#addChannel(topic, this.#registry.assertKnown(opts.type));
        ch = this.#channels.get(topic)!;
      }
      const data = this.#registry.encode(ch.type, msg);
      if (this.#chunkStartNs === undefined) this.#chunkStartNs = logTimeNs;
      this.#forceFlush = logTimeNs - this.#chunkStartNs >= this.#intervalNs;
      const before = this.#file.position();
      await this.#writer.addMessage({ channelId: ch.id, sequence: ch.seq++, logTime: logTimeNs, publishTime: opts.publishTimeNs ?? logTimeNs, data });
      this.#forceFlush = false;
      if (this.#file.position() !== before) this.#chunkStartNs = undefined; // a chunk went to disk
      this.#count++;
    });
  }

  /** Writes `rlft.episode_result`, the summary and footer, and closes the file. */
  async close(result: EpisodeResult): Promise<void> {
    const done = this.#enqueue("close", async () => {
      await this.#writer.addMetadata({ name: "rlft.episode_result", metadata: toStringMap({ ...result }) });
      await this.#writer.end();
    });
    this.#closed = true;
    try {
      await done;
    } finally {
      await this.#file.close();
    }
  }
}

/** A ROS 2 stamp as nanoseconds, for write()'s logTimeNs. */
export function stampToNs(stamp: { sec: number; nanosec: number }): bigint {
  return BigInt(stamp.sec) * 1_000_000_000n + BigInt(stamp.nanosec);
}
