/** A TCP connection (UR RTDE on port 30004, the primary interface on 30001) as a ByteTransport. */
import { Socket, connect } from "node:net";
import type { ByteTransport } from "./ByteTransport.ts";
import { TransportError } from "./TransportError.ts";

/** ByteTransport over a TCP socket (Nagle off: control packets go out at once). */
export class TcpTransport implements ByteTransport {
  readonly name: string;
  #sock: Socket;
  #closed = false;

  private constructor(name: string, sock: Socket) {
    this.name = name;
    this.#sock = sock;
    sock.on("error", () => undefined);
    sock.on("close", () => (this.#closed = true));
  }

  /** Connects to host:port within `timeoutMs`; rejects with a TransportError naming the fix. */
  static async connect(host: string, port: number, opts: { timeoutMs?: number; what?: string } = {}): Promise<TcpTransport> {
    const name = `${host}:${port}`;
    const what = opts.what ?? "the device";
    const sock = await new Promise<Socket>((resolve, reject) => {
      const s = connect({ host, port, noDelay: true });
      const timer = setTimeout(() => {
        s.destroy();
        reject(new TransportError("CONNECT_FAILED", `Cannot connect to ${what} at ${name}: no answer in ${opts.timeoutMs ?? 3000} ms — check the IP address, the cable and that the controller is on`));
      }, opts.timeoutMs ?? 3000);
      s.once("connect", () => {
        clearTimeout(timer);
        resolve(s);
      });
      s.once("error", (e: Error & { code?: string }) => {
        clearTimeout(timer);
        const fix = e.code === "ECONNREFUSED" ? "nothing listens there — is the controller booted, and the port right?" : "check the IP address and the network";
        reject(new TransportError("CONNECT_FAILED", `Cannot connect to ${what} at ${name}: ${e.code ?? e.message} — ${fix}`, { cause: e }));
      });
    });
    return new TcpTransport(name, sock);
  }

  get isOpen(): boolean {
    return !this.#closed;
  }

  write(data: Uint8Array): Promise<void> {
    if (this.#closed) return Promise.reject(new TransportError("DISCONNECTED", `${this.name} is closed — the controller dropped the connection`));
    return new Promise((resolve, reject) => this.#sock.write(data, (err) => (err ? reject(new TransportError("DISCONNECTED", `write to ${this.name} failed: ${err.message}`, { cause: err })) : resolve())));
  }

  onData(cb: (chunk: Uint8Array) => void): () => void {
    const h = (d: Buffer) => cb(new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
    this.#sock.on("data", h);
    return () => this.#sock.off("data", h);
  }

  onClose(cb: (err?: Error) => void): () => void {
    const h = (hadError: boolean) => cb(hadError ? new Error(`${this.name} closed with an error`) : undefined);
    this.#sock.once("close", h);
    return () => this.#sock.off("close", h);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await new Promise<void>((resolve) => {
      this.#sock.once("close", () => resolve());
      this.#sock.end();
      setTimeout(() => {
        this.#sock.destroy();
        resolve();
      }, 200).unref();
    });
  }
}
