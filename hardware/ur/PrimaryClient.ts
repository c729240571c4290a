/**
 * A client of the UR primary interface (30001; primaryInterface.ts cites the format): sends URScript programs and
 * reads what the controller says back — ROBOT_MODE_DATA (program running / paused, protective stop, e-stop) and
 * robot messages (program started / stopped, compile errors, refusals, safety mode changes). A client that sends
 * a program must read these: they are the only place a refused program shows up with the controller's reason.
 */
import type { ByteTransport } from "../transport/ByteTransport.ts";
import { splitPrimary, type RobotMessage, type RobotModeData } from "./primaryInterface.ts";

/** The primary interface on one connection. */
export class PrimaryClient {
  readonly transport: ByteTransport;
  /** Latest ROBOT_MODE_DATA (null until the first state message). */
  mode: RobotModeData | null = null;
  /** Controller version from the VERSION message ("" until it came). */
  version = "";
  /** Robot messages received, oldest first (bounded). */
  readonly messages: RobotMessage[] = [];
  /** Robot messages received in all (a sequence number for `lastReason`). */
  received = 0;
  #buf: Uint8Array = new Uint8Array(0);
  #listeners: ((m: RobotMessage) => void)[] = [];
  #off: () => void;
  #error = "";

  constructor(transport: ByteTransport) {
    this.transport = transport;
    this.#off = transport.onData((c) => this.#onBytes(c));
  }

  /** A stream that is not the primary interface ("" while fine). */
  get error(): string {
    return this.#error;
  }

  /** Calls `cb` with every robot message. */
  onMessage(cb: (m: RobotMessage) => void): () => void {
    this.#listeners.push(cb);
    return () => (this.#listeners = this.#listeners.filter((x) => x !== cb));
  }

  /** Whether a PROGRAM_XXX_STARTED key message for `program` came after message number `sinceReceived`. */
  started(program: string, sinceReceived = 0): boolean {
    const first = this.received - this.messages.length;
    return this.messages.some((m, i) => first + i >= sinceReceived && m.kind === "key" && /STARTED/.test(m.title) && m.text.startsWith(program));
  }

  /** The latest error code or runtime exception (a refused program, a compile error), or "". */
  refusal(sinceReceived = 0): string {
    const first = this.received - this.messages.length;
    for (let i = this.messages.length - 1; i >= Math.max(0, sinceReceived - first); i--) {
      const m = this.messages[i];
      if (m.kind === "error_code" || m.kind === "runtime_exception") return m.text;
    }
    return "";
  }

  /**
   * What explains a refused or stopped program, or "": the latest error code or runtime exception (the cause, e.g.
   * C162A0 for an e-stop), followed by the PROGRAM_XXX_STOPPED message that came after it, if any; a stopped
   * program with no error before it (another program replaced it) gives the stop alone.
   */
  lastReason(sinceReceived = 0): string {
    const first = this.received - this.messages.length;
    let stopped = "";
    for (let i = this.messages.length - 1; i >= Math.max(0, sinceReceived - first); i--) {
      const m = this.messages[i];
      if (m.kind === "error_code" || m.kind === "runtime_exception") return stopped ? `${m.text}; ${stopped}` : m.text;
      if (!stopped && m.kind === "key" && /STOPPED/.test(m.title)) stopped = `program stopped (${m.text})`;
    }
    return stopped;
  }

  /** Sends a program (the text is sent as is; it should end with a newline). */
  async send(program: string): Promise<void> {
    await this.transport.write(new TextEncoder().encode(program));
  }

  dispose(): void {
    this.#off();
  }

  #onBytes(chunk: Uint8Array): void {
    const b = new Uint8Array(this.#buf.length + chunk.length);
    b.set(this.#buf);
    b.set(chunk, this.#buf.length);
    const { messages, rest, error } = splitPrimary(b);
    this.#buf = rest;
    if (error) this.#error = error;
    for (const m of messages) {
      if (m.type === "state") this.mode = m.mode;
      else if (m.type === "message") {
        if (m.message.kind === "version") this.version = m.message.text;
        this.messages.push(m.message);
        this.received++;
        if (this.messages.length > 100) this.messages.shift();
        for (const cb of this.#listeners) cb(m.message);
      }
    }
  }
}
