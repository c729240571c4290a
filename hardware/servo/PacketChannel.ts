/**
 * Request/response over a half-duplex servo bus: one transaction at a time, stale bytes dropped before each
 * request, replies cut out of the byte stream by a protocol decoder, a deadline per transaction.
 */
import type { ByteTransport } from "../transport/ByteTransport.ts";

/** What a decoder found at the start of a buffer. */
export type DecodeResult<P> =
  | { kind: "need_more" }
  | { kind: "skip"; bytes: number }
  | { kind: "packet"; packet: P; bytes: number }
  | { kind: "corrupt"; bytes: number; error: string };

/** Cuts one packet off the front of a byte buffer. */
export type PacketDecoder<P> = (buf: Uint8Array) => DecodeResult<P>;

/** One reply of a transaction, in arrival order; a timeout ends the list. */
export type Reply<P> = { ok: true; packet: P } | { ok: false; error: "timeout" | "corrupt"; detail: string };

/** Serialises transactions on one transport. */
export class PacketChannel<P> {
  readonly transport: ByteTransport;
  #decode: PacketDecoder<P>;
  #buf = new Uint8Array(0);
  #queue: Promise<unknown> = Promise.resolve();
  #wake: (() => void) | null = null;
  #off: () => void;
  /** Bytes that were skipped while hunting for a header (line noise, echoes). */
  skippedBytes = 0;

  constructor(transport: ByteTransport, decode: PacketDecoder<P>) {
    this.transport = transport;
    this.#decode = decode;
    this.#off = transport.onData((chunk) => {
      const next = new Uint8Array(this.#buf.length + chunk.length);
      next.set(this.#buf);
      next.set(chunk, this.#buf.length);
      // Bounded: a bus that floods us with garbage cannot grow memory without end.
      this.#buf = next.length > 65536 ? next.subarray(next.length - 65536) : next;
      this.#wake?.();
    });
  }

  /** Sends `request` and collects up to `replies` packets (0 for broadcasts), each within `timeoutMs` of the previous. */
  transact(request: Uint8Array, opts: { replies: number; timeoutMs: number; accept?: (p: P) => boolean }): Promise<Reply<P>[]> {
    const run = async () => {
      this.#buf = new Uint8Array(0);
      await this.transport.write(request);
      const out: Reply<P>[] = [];
      for (let i = 0; i < opts.replies; i++) {
        const r = await this.#next(opts.timeoutMs, opts.accept);
        out.push(r);
        // A silent servo: nothing more is coming within the deadline.
        if (!r.ok && r.error === "timeout") break;
      }
      return out;
    };
    const p = this.#queue.then(run, run);
    this.#queue = p.catch(() => undefined);
    return p;
  }

  async #next(timeoutMs: number, accept?: (p: P) => boolean): Promise<Reply<P>> {
    const deadline = Date.now() + timeoutMs;
    let graced = false;
    for (;;) {
      const r = this.#decode(this.#buf);
      if (r.kind === "skip") {
        this.skippedBytes += r.bytes;
        this.#buf = this.#buf.subarray(r.bytes);
        continue;
      }
      if (r.kind === "corrupt") {
        this.#buf = this.#buf.subarray(r.bytes);
        return { ok: false, error: "corrupt", detail: r.error };
      }
      if (r.kind === "packet") {
        this.#buf = this.#buf.subarray(r.bytes);
        if (accept && !accept(r.packet)) continue;
        return { ok: true, packet: r.packet };
      }
      const left = deadline - Date.now();
      if (left <= 0 && !graced) {
        // On a busy host the deadline timer can run before the data callback of a reply that already arrived: let
        // pending I/O callbacks run once, so that reply is not declared late and then read as the next request's.
        graced = true;
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      if (left <= 0) return { ok: false, error: "timeout", detail: `no reply in ${timeoutMs} ms` };
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          this.#wake = null;
          resolve();
        }, left);
        this.#wake = () => {
          clearTimeout(t);
          this.#wake = null;
          resolve();
        };
      });
    }
  }

  /** Stops listening (the transport stays open; its owner closes it). */
  dispose(): void {
    this.#off();
  }
}
