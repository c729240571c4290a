/**
 * Reads an episode file back. A complete file is read through its index; a file cut short by a
 * crash (no footer) is streamed from the start, recovering every complete chunk. Messages are
 * decoded with the schema text stored in the file, so old recordings stay readable.
 */
import { open, type FileHandle } from "node:fs/promises";
import { McapIndexedReader, McapStreamReader, type McapTypes } from "@mcap/core";
import { MessageReader } from "@foxglove/rosmsg2-serialization";
import { parse } from "@foxglove/rosmsg";
import { plainArrays } from "../runtime/msgs/MessageRegistry.ts";

/** One decoded message. */
export interface EpisodeMessage<T = Record<string, unknown>> {
  topic: string;
  /** Schema name, e.g. "sensor_msgs/msg/JointState". */
  type: string;
  logTimeNs: bigint;
  message: T;
}

const MCAP_MAGIC = [0x89, 0x4d, 0x43, 0x41, 0x50]; // "\x89MCAP"

/** Thrown when a file is not an MCAP episode or is damaged beyond a truncated tail. */
export class EpisodeReadError extends Error {
  readonly code = "RLFT_EPISODE_READ";
  constructor(
    readonly path: string,
    detail: string,
    cause?: unknown,
  ) {
    super(`Cannot read episode ${path}: ${detail}`, { cause });
    this.name = "EpisodeReadError";
  }
}

export class EpisodeReader {
  /** True when the file had no valid footer and was recovered by streaming (crash during recording). */
  readonly recovered: boolean;
  readonly #schemas: Map<number, McapTypes.Schema>;
  readonly #channels: Map<number, McapTypes.Channel>;
  readonly #metadata: Map<string, Record<string, string>>;
  readonly #messages: McapTypes.Message[] | undefined;
  readonly #indexed: McapIndexedReader | undefined;
  readonly #handle: FileHandle | undefined;
  #decoders = new Map<number, MessageReader>();

  private constructor(
    readonly path: string,
    parts: {
      recovered: boolean;
      schemas: Map<number, McapTypes.Schema>;
      channels: Map<number, McapTypes.Channel>;
      metadata: Map<string, Record<string, string>>;
      messages?: McapTypes.Message[];
      indexed?: McapIndexedReader;
      handle?: FileHandle;
    },
  ) {
    this.recovered = parts.recovered;
    this.#schemas = parts.schemas;
    this.#channels = parts.channels;
    this.#metadata = parts.metadata;
    this.#messages = parts.messages;
    this.#indexed = parts.indexed;
    this.#handle = parts.handle;
  }

  /** Opens a file: indexed when complete, streamed when truncated. */
  static async open(path: string): Promise<EpisodeReader> {
    let handle: FileHandle;
    try {
      handle = await open(path, "r");
    } catch (err) {
      throw new EpisodeReadError(path, (err as Error).message, err);
    }
    const size = (await handle.stat()).size;
    const head = Buffer.alloc(8);
    await handle.read(head, 0, 8, 0);
    if (size < 8 || !MCAP_MAGIC.every((b, i) => head[i] === b)) {
      await handle.close();
      throw new EpisodeReadError(path, `not an MCAP file (expected the magic bytes \\x89MCAP0 at offset 0, found ${JSON.stringify(head.subarray(0, 8).toString("latin1"))})`);
    }
    try {
      const indexed = await McapIndexedReader.Initialize({
        readable: {
          size: async () => BigInt(size),
          read: async (offset, length) => {
            const buf = Buffer.alloc(Number(length));
            await handle.read(buf, 0, Number(length), Number(offset));
            return buf;
          },
        },
      });
      const metadata = new Map<string, Record<string, string>>();
      for await (const m of indexed.readMetadata()) metadata.set(m.name, Object.fromEntries(m.metadata));
      return new EpisodeReader(path, {
        recovered: false,
        schemas: new Map(indexed.schemasById),
        channels: new Map(indexed.channelsById),
        metadata,
        indexed,
        handle,
      });
    } catch {
      // No usable footer/index (crash while recording): stream the data section instead.
    }
    try {
      return await EpisodeReader.#stream(path, handle, size);
    } finally {
      await handle.close();
    }
  }

  static async #stream(path: string, handle: FileHandle, size: number): Promise<EpisodeReader> {
    const reader = new McapStreamReader({ validateCrcs: true });
    const schemas = new Map<number, McapTypes.Schema>();
    const channels = new Map<number, McapTypes.Channel>();
    const metadata = new Map<string, Record<string, string>>();
    const messages: McapTypes.Message[] = [];
    const piece = Buffer.alloc(1 << 20);
    let offset = 0;
    try {
      while (offset < size) {
        const { bytesRead } = await handle.read(piece, 0, piece.length, offset);
        if (bytesRead === 0) break;
        offset += bytesRead;
        reader.append(piece.subarray(0, bytesRead));
        for (let rec; (rec = reader.nextRecord()); ) {
          if (rec.type === "Schema") schemas.set(rec.id, rec);
          else if (rec.type === "Channel") channels.set(rec.id, rec);
          else if (rec.type === "Message") messages.push(rec);
          else if (rec.type === "Metadata") metadata.set(rec.name, Object.fromEntries(rec.metadata));
        }
      }
    } catch (err) {
      throw new EpisodeReadError(path, `corrupt MCAP data near byte ${offset - reader.bytesRemaining()} (${(err as Error).message})`, err);
    }
    return new EpisodeReader(path, { recovered: !reader.done(), schemas, channels, metadata, messages });
  }

  /** All metadata records by name (e.g. "rlft.episode", "rlft.episode_result"). */
  get metadata(): ReadonlyMap<string, Record<string, string>> {
    return this.#metadata;
  }

  /** The `rlft.episode` record. */
  get episode(): Record<string, string> | undefined {
    return this.#metadata.get("rlft.episode");
  }

  /** The `rlft.episode_result` record (absent when recording crashed). */
  get result(): Record<string, string> | undefined {
    return this.#metadata.get("rlft.episode_result");
  }

  /** Recorded topics and their schema names. */
  topics(): { topic: string; type: string }[] {
    return [...this.#channels.values()].map((c) => ({ topic: c.topic, type: this.#schemas.get(c.schemaId)?.name ?? "" }));
  }

  #decode(msg: McapTypes.Message): EpisodeMessage {
    const ch = this.#channels.get(msg.channelId);
    if (!ch) throw new EpisodeReadError(this.path, `message refers to unknown channel ${msg.channelId}`);
    const schema = this.#schemas.get(ch.schemaId);
    if (!schema) throw new EpisodeReadError(this.path, `channel ${ch.topic} refers to unknown schema ${ch.schemaId}`);
    let dec = this.#decoders.get(ch.id);
    if (!dec) {
      if (schema.encoding !== "ros2msg" || ch.messageEncoding !== "cdr") {
        throw new EpisodeReadError(this.path, `${ch.topic} uses ${schema.encoding}/${ch.messageEncoding}; expected ros2msg/cdr`);
      }
      dec = new MessageReader(parse(new TextDecoder().decode(schema.data), { ros2: true }));
      this.#decoders.set(ch.id, dec);
    }
    return { topic: ch.topic, type: schema.name, logTimeNs: msg.logTime, message: plainArrays(dec.readMessage(msg.data)) as Record<string, unknown> };
  }

  /** Decoded messages in log-time order, optionally only some topics. */
  async *messages(opts: { topics?: string[] } = {}): AsyncGenerator<EpisodeMessage> {
    if (this.#indexed) {
      try {
        for await (const m of this.#indexed.readMessages({ topics: opts.topics })) yield this.#decode(m);
      } catch (err) {
        if (err instanceof EpisodeReadError) throw err;
        throw new EpisodeReadError(this.path, `corrupt chunk (${(err as Error).message})`, err);
      }
      return;
    }
    const wanted = opts.topics ? new Set(opts.topics) : undefined;
    const sorted = [...this.#messages!].sort((a, b) => (a.logTime < b.logTime ? -1 : a.logTime > b.logTime ? 1 : 0));
    for (const m of sorted) {
      if (wanted && !wanted.has(this.#channels.get(m.channelId)?.topic ?? "")) continue;
      yield this.#decode(m);
    }
  }

  /** Every decoded message, grouped by topic. */
  async byTopic(): Promise<Map<string, EpisodeMessage[]>> {
    const out = new Map<string, EpisodeMessage[]>();
    for await (const m of this.messages()) {
      let list = out.get(m.topic);
      if (!list) out.set(m.topic, (list = []));
      list.push(m);
    }
    return out;
  }

  /** Releases the file. */
  async close(): Promise<void> {
    await this.#handle?.close();
  }
}
