/**
 * Forwards selected topics of one embedded runtime to other processes through a ZmqProxy.
 * Wire format (multipart): [topic, type ("pkg/Type"), CDR bytes, origin id]. The origin frame
 * lets a bridge drop its own messages coming back; messages that arrived from another process
 * are never forwarded again, so bridges cannot loop.
 */
import { randomUUID } from "node:crypto";
import * as zmq from "zeromq";
import type { Logger } from "../Runtime.ts";
import type { TopicBus } from "./TopicBus.ts";

/** Options of a bridge. */
export interface ZmqBridgeOptions {
  /** The proxy's XSUB endpoint (our PUB connects there). */
  xsub: string;
  /** The proxy's XPUB endpoint (our SUB connects there). */
  xpub: string;
  /** Local topics sent to other processes. */
  publish?: string[];
  /** Topics received from other processes and published locally. */
  subscribe?: string[];
  /** Bound on messages waiting to be sent; the oldest are dropped beyond it (default 1000). */
  maxQueue?: number;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

export class ZmqBridge {
  readonly id = randomUUID();
  /** Counters for telemetry: sent, received, dropped (queue full), rejected (bad frames). */
  readonly stats = { sent: 0, received: 0, dropped: 0, rejected: 0 };
  #pub = new zmq.Publisher();
  #sub = new zmq.Subscriber();
  #untap: (() => void)[] = [];
  #queue: zmq.MessageLike[][] = [];
  #sending = false;
  #closed = false;
  #recvLoop: Promise<void> = Promise.resolve();

  private constructor(
    readonly bus: TopicBus,
    readonly opts: ZmqBridgeOptions,
    readonly logger: Logger,
  ) {}

  /** Connects both sockets and starts forwarding. */
  static async connect(bus: TopicBus, opts: ZmqBridgeOptions, logger: Logger): Promise<ZmqBridge> {
    const b = new ZmqBridge(bus, opts, logger);
    b.#pub.connect(opts.xsub);
    b.#sub.connect(opts.xpub);
    const wanted = new Set(opts.subscribe ?? []);
    for (const t of wanted) b.#sub.subscribe(t);
    for (const topic of opts.publish ?? []) {
      b.#untap.push(
        bus.tap(topic, (type, env) => {
          if (env.origin !== undefined) return; // came from another process: never re-forward
          b.#enqueue(topic, type, env.msg);
        }),
      );
    }
    if (wanted.size > 0) b.#recvLoop = b.#receive(wanted);
    return b;
  }

  #enqueue(topic: string, type: string, msg: unknown): void {
    if (this.#closed) return;
    let bytes: Uint8Array;
    try {
      bytes = this.bus.registry.encode(type, msg);
    } catch (err) {
      this.stats.rejected++;
      this.logger.warn(`not forwarding ${topic}: ${(err as Error).message}`);
      return;
    }
    this.#queue.push([enc.encode(topic), enc.encode(type), bytes, enc.encode(this.id)]);
    if (this.#queue.length > (this.opts.maxQueue ?? 1000)) {
      this.#queue.shift();
      this.stats.dropped++;
    }
    if (!this.#sending) void this.#drain();
  }

  async #drain(): Promise<void> {
    this.#sending = true;
    try {
      while (this.#queue.length > 0 && !this.#closed) {
        const frames = this.#queue.shift()!;
        await this.#pub.send(frames);
        this.stats.sent++;
      }
    } catch (err) {
      if (!this.#closed) this.logger.error(`send failed: ${(err as Error).message}`);
    } finally {
      this.#sending = false;
    }
  }

  async #receive(wanted: Set<string>): Promise<void> {
    try {
      for await (const frames of this.#sub) {
        const [topicF, typeF, data, originF] = frames;
        if (!topicF || !typeF || !data || !originF || frames.length !== 4) {
          this.stats.rejected++;
          continue;
        }
        const topic = dec.decode(topicF);
        const origin = dec.decode(originF);
        if (origin === this.id || !wanted.has(topic)) continue; // own echo, or a prefix match
        const type = dec.decode(typeF);
        try {
          const msg = this.bus.registry.decode(type, data);
          this.bus.publish(topic, type, msg, { origin });
          this.stats.received++;
        } catch (err) {
          this.stats.rejected++;
          this.logger.warn(`dropped a message on ${topic} from another process: ${(err as Error).message}`);
        }
      }
    } catch (err) {
      if (!this.#closed) this.logger.error(`receive loop stopped: ${(err as Error).message}`);
    }
  }

  /** Stops forwarding and closes the sockets. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#untap.forEach((u) => u());
    this.#pub.close();
    this.#sub.close();
    await this.#recvLoop;
  }
}
