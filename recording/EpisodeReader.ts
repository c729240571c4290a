/**
 * Reads an episode file back without loading it into memory. A complete file is read through its MCAP index
 * (chunk by chunk, on demand); a file cut short by a crash (no footer) is streamed from the start, record by
 * record, up to the last complete record. Either way a corrupt chunk ends the read there, and `damage` says at
 * which byte and why: what came before it is still returned. Messages are decoded with the schema text stored in
 * the file, and fields that a newer message version added are filled with their defaults, so old logs stay
 * readable (recording/logFormat.ts).
 */
import { open, type FileHandle } from "node:fs/promises";
import { McapIndexedReader, McapStreamReader, type McapTypes } from "@mcap/core";
import { MessageReader } from "@foxglove/rosmsg2-serialization";
import { parse } from "@foxglove/rosmsg";
import { MessageRegistry, plainArrays } from "../runtime/msgs/MessageRegistry.ts";
import { LOG_FORMAT_RECORD, LOG_FORMAT_VERSION } from "./logFormat.ts";

/** One decoded message. */
export interface EpisodeMessage<T = Record<string, unknown>> {
  topic: string;
  /** Schema name, e.g. "sensor_msgs/msg/JointState". */
  type: string;
  logTimeNs: bigint;
  message: T;
}

/** Where and why valid data ends early in a damaged file. */
export interface EpisodeDamage {
  /** Byte offset where the unreadable part starts. */
  offset: number;
  /** File size in bytes. */
  size: number;
  detail: string;
}

const MCAP_MAGIC = [0x89, 0x4d, 0x43, 0x41, 0x50]; // "\x89MCAP"
const PIECE = 1 << 20;

/** Thrown when a file is not an MCAP episode or holds nothing readable. */
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

interface Decoder {
  reader: MessageReader;
  /** Current type name when the recorded schema differs from this rlft's (fields are then completed). */
  upgradeTo?: string;
}

export class EpisodeReader {
  /** True when the file had no valid footer and was read by streaming (crash during recording). */
  readonly recovered: boolean;
  /** File size in bytes. */
  readonly size: number;
  readonly #schemas: Map<number, McapTypes.Schema>;
  readonly #channels: Map<number, McapTypes.Channel>;
  readonly #metadata: Map<string, Record<string, string>>;
  readonly #indexed: McapIndexedReader | undefined;
  readonly #handle: FileHandle;
  /** Streamed files: bytes from the start that hold complete records. */
  readonly #validEnd: number;
  readonly #counts: Map<number, number> | undefined;
  #damage: EpisodeDamage | undefined;
  #lastRead = 0;
  #decoders = new Map<number, Decoder>();
  #registry = MessageRegistry.default();

  private constructor(
    readonly path: string,
    parts: {
      recovered: boolean;
      size: number;
      schemas: Map<number, McapTypes.Schema>;
      channels: Map<number, McapTypes.Channel>;
      metadata: Map<string, Record<string, string>>;
      indexed?: McapIndexedReader;
      handle: FileHandle;
      validEnd: number;
      counts?: Map<number, number>;
      damage?: EpisodeDamage;
    },
  ) {
    this.recovered = parts.recovered;
    this.size = parts.size;
    this.#schemas = parts.schemas;
    this.#channels = parts.channels;
    this.#metadata = parts.metadata;
    this.#indexed = parts.indexed;
    this.#handle = parts.handle;
    this.#validEnd = parts.validEnd;
    this.#counts = parts.counts;
    this.#damage = parts.damage;
  }

  /** Opens a file: indexed when complete, streamed when truncated. Only the summary (or one scan) is read here. */
  static async open(path: string): Promise<EpisodeReader> {
    let handle: FileHandle;
    try {
      handle = await open(path, "r");
    } catch (err) {
      throw new EpisodeReadError(path, (err as Error).message, err);
    }
    try {
      return await EpisodeReader.#open(path, handle);
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  static async #open(path: string, handle: FileHandle): Promise<EpisodeReader> {
    const size = (await handle.stat()).size;
    const head = Buffer.alloc(8);
    await handle.read(head, 0, 8, 0);
    if (size < 8 || !MCAP_MAGIC.every((b, i) => head[i] === b)) {
      throw new EpisodeReadError(path, `not an MCAP file (expected the magic bytes \\x89MCAP0 at offset 0, found ${JSON.stringify(head.subarray(0, 8).toString("latin1"))})`);
    }
    let reader: EpisodeReader | undefined;
    try {
      let lastRead = 0;
      const indexed = await McapIndexedReader.Initialize({
        readable: {
          size: async () => BigInt(size),
          read: async (offset, length) => {
            lastRead = Number(offset);
            if (reader) reader.#lastRead = lastRead;
            const buf = Buffer.alloc(Number(length));
            await handle.read(buf, 0, Number(length), Number(offset));
            return buf;
          },
        },
      });
      const metadata = new Map<string, Record<string, string>>();
      for await (const m of indexed.readMetadata()) metadata.set(m.name, Object.fromEntries(m.metadata));
      reader = new EpisodeReader(path, {
        recovered: false,
        size,
        schemas: new Map(indexed.schemasById),
        channels: new Map(indexed.channelsById),
        metadata,
        indexed,
        handle,
        validEnd: size,
        counts: indexed.statistics ? new Map([...indexed.statistics.channelMessageCounts].map(([k, v]) => [k, Number(v)])) : undefined,
      });
      reader.#lastRead = lastRead;
    } catch {
      // No usable footer/index (crash while recording): scan the data section instead.
    }
    if (reader) {
      reader.#checkFormat();
      return reader;
    }
    const scan = await EpisodeReader.#scan(path, handle, size);
    reader = new EpisodeReader(path, { recovered: true, size, handle, ...scan });
    reader.#checkFormat();
    return reader;
  }

  /** One pass over a file without an index: schemas, channels, metadata, counts, and where valid data ends. */
  static async #scan(path: string, handle: FileHandle, size: number) {
    const schemas = new Map<number, McapTypes.Schema>();
    const channels = new Map<number, McapTypes.Channel>();
    const metadata = new Map<string, Record<string, string>>();
    const counts = new Map<number, number>();
    let messages = 0;
    const { validEnd, damage } = await EpisodeReader.#records(handle, size, size, (rec) => {
      if (rec.type === "Schema") schemas.set(rec.id, rec);
      else if (rec.type === "Channel") channels.set(rec.id, rec);
      else if (rec.type === "Metadata") metadata.set(rec.name, Object.fromEntries(rec.metadata));
      else if (rec.type === "Message") {
        counts.set(rec.channelId, (counts.get(rec.channelId) ?? 0) + 1);
        messages++;
      }
    });
    if (messages === 0 && metadata.size === 0 && damage) throw new EpisodeReadError(path, `${damage.detail}; nothing before it is readable`);
    return { schemas, channels, metadata, validEnd, counts, damage };
  }

  /**
   * Streams records from the start up to `limit` bytes, calling `onRecord` for each, and reports where the last
   * complete record ends. A CRC mismatch or malformed record stops the stream there (damage), as does the end of a
   * file cut short inside a record.
   */
  static async #records(handle: FileHandle, size: number, limit: number, onRecord: (rec: McapTypes.TypedMcapRecord) => void): Promise<{ validEnd: number; damage?: EpisodeDamage }> {
    const reader = new McapStreamReader({ validateCrcs: true });
    const piece = Buffer.alloc(PIECE);
    let appended = 0;
    let validEnd = 0;
    try {
      while (appended < limit) {
        const { bytesRead } = await handle.read(piece, 0, Math.min(piece.length, limit - appended), appended);
        if (bytesRead === 0) break;
        appended += bytesRead;
        reader.append(piece.subarray(0, bytesRead));
        for (let rec; (rec = reader.nextRecord()); ) {
          onRecord(rec);
          validEnd = appended - reader.bytesRemaining();
        }
        if (reader.done()) return { validEnd: appended - reader.bytesRemaining() };
      }
    } catch (err) {
      return { validEnd, damage: { offset: validEnd, size, detail: `corrupt MCAP record at byte ${validEnd} (${(err as Error).message})` } };
    }
    if (limit < size || validEnd === size) return { validEnd };
    return { validEnd, damage: { offset: validEnd, size, detail: `file ends inside a record at byte ${validEnd} of ${size} (recording stopped uncleanly: ${size - validEnd} bytes of an unfinished chunk lost)` } };
  }

  #checkFormat(): void {
    const v = this.formatVersion;
    if (!(v <= LOG_FORMAT_VERSION)) {
      throw new EpisodeReadError(this.path, `log format version ${this.#metadata.get(LOG_FORMAT_RECORD)?.version} is newer than this rlft reads (up to ${LOG_FORMAT_VERSION}) — upgrade rlft`);
    }
  }

  /** Version of the log format (1 for logs written before `rlft.log_format` existed). */
  get formatVersion(): number {
    const v = this.#metadata.get(LOG_FORMAT_RECORD)?.version;
    return v === undefined ? 1 : Number(v);
  }

  /** Set when valid data ends before the end of the file: where and why. Complete after a full `messages()` pass. */
  get damage(): EpisodeDamage | undefined {
    return this.#damage;
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

  /** Recorded topics, their schema names and message counts (from the summary, or the recovery scan). */
  topics(): { topic: string; type: string; count?: number }[] {
    return [...this.#channels.values()].map((c) => ({ topic: c.topic, type: this.#schemas.get(c.schemaId)?.name ?? "", count: this.#counts?.get(c.id) }));
  }

  /** Log time span [start, end] in ns from the summary (indexed files only). */
  get timeRange(): { startNs: bigint; endNs: bigint } | undefined {
    const s = this.#indexed?.statistics;
    return s ? { startNs: s.messageStartTime, endNs: s.messageEndTime } : undefined;
  }

  #decoder(ch: McapTypes.Channel): Decoder {
    let dec = this.#decoders.get(ch.id);
    if (dec) return dec;
    const schema = this.#schemas.get(ch.schemaId);
    if (!schema) throw new EpisodeReadError(this.path, `channel ${ch.topic} refers to unknown schema ${ch.schemaId}`);
    if (schema.encoding !== "ros2msg" || ch.messageEncoding !== "cdr") {
      throw new EpisodeReadError(this.path, `${ch.topic} uses ${schema.encoding}/${ch.messageEncoding}; expected ros2msg/cdr`);
    }
    const text = new TextDecoder().decode(schema.data);
    dec = { reader: new MessageReader(parse(text, { ros2: true })) };
    if (this.#registry.has(schema.name) && this.#registry.schemaText(schema.name) !== text) dec.upgradeTo = this.#registry.assertKnown(schema.name);
    this.#decoders.set(ch.id, dec);
    return dec;
  }

  #decode(msg: McapTypes.Message): EpisodeMessage {
    const ch = this.#channels.get(msg.channelId);
    if (!ch) throw new EpisodeReadError(this.path, `message refers to unknown channel ${msg.channelId}`);
    const dec = this.#decoder(ch);
    let message = plainArrays(dec.reader.readMessage(msg.data)) as Record<string, unknown>;
    if (dec.upgradeTo) message = this.#upgrade(dec.upgradeTo, message);
    return { topic: ch.topic, type: this.#schemas.get(ch.schemaId)!.name, logTimeNs: msg.logTime, message };
  }

  /** A message of an older schema version in today's shape: fields added since get their ROS 2 defaults. */
  #upgrade(type: string, msg: Record<string, unknown>): Record<string, unknown> {
    try {
      return { ...this.#registry.decode(type, this.#registry.encode(type, msg)), ...msg };
    } catch {
      return msg; // incompatible field types: keep what was recorded
    }
  }

  /**
   * Decoded messages, optionally only some topics. Indexed files: log-time order, one chunk in memory at a time.
   * Recovered files: file order (the recorder writes in log-time order). A corrupt chunk ends the iteration and
   * sets `damage`.
   */
  async *messages(opts: { topics?: string[] } = {}): AsyncGenerator<EpisodeMessage> {
    if (this.#indexed) {
      const it = this.#indexed.readMessages({ topics: opts.topics })[Symbol.asyncIterator]();
      for (;;) {
        let r: IteratorResult<McapTypes.Message>;
        try {
          r = await it.next();
        } catch (err) {
          this.#damage = { offset: this.#lastRead, size: this.size, detail: `corrupt chunk at byte ${this.#lastRead} (${(err as Error).message})` };
          return;
        }
        if (r.done) return;
        yield this.#decode(r.value);
      }
    }
    const wanted = opts.topics ? new Set(opts.topics) : undefined;
    const batch: McapTypes.Message[] = [];
    const reader = new McapStreamReader({ validateCrcs: true });
    const piece = Buffer.alloc(PIECE);
    let pos = 0;
    while (pos < this.#validEnd) {
      const { bytesRead } = await this.#handle.read(piece, 0, Math.min(piece.length, this.#validEnd - pos), pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      reader.append(piece.subarray(0, bytesRead));
      for (let rec; (rec = reader.nextRecord()); ) {
        if (rec.type !== "Message") continue;
        if (wanted && !wanted.has(this.#channels.get(rec.channelId)?.topic ?? "")) continue;
        batch.push(rec);
      }
      for (const m of batch.splice(0)) yield this.#decode(m);
    }
  }

  /** Every decoded message, grouped by topic (loads them all: for small episodes and tests). */
  async byTopic(): Promise<Map<string, EpisodeMessage[]>> {
    const out = new Map<string, EpisodeMessage[]>();
    for await (const m of this.messages()) {
      let list = out.get(m.topic);
      if (!list) out.set(m.topic, (list = []));
      list.push(m);
    }
    return out;
  }

  /** One line for people when the file is damaged or was recovered, else "". */
  describeDamage(): string {
    const d = this.#damage;
    if (d) return `${this.path}: valid data ends at byte ${d.offset} of ${d.size}: ${d.detail}`;
    if (this.recovered) return `${this.path}: no footer (recording did not finish cleanly); every complete record was read`;
    return "";
  }

  /** Releases the file. */
  async close(): Promise<void> {
    await this.#handle.close();
  }
}
