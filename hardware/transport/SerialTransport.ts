/**
 * A serial port (USB–TTL servo adapter, U2D2, Waveshare bus servo board) as a ByteTransport, through the
 * `serialport` package. The port is opened exclusively (`lock: true`), so a second program gets PORT_BUSY
 * instead of interleaving bytes on the bus.
 */
import { SerialPort } from "serialport";
import type { ByteTransport } from "./ByteTransport.ts";
import { serialOpenError, TransportError } from "./TransportError.ts";

/** Options of a serial port. */
export interface SerialTransportOptions {
  /** Bits per second; Feetech STS and Dynamixel X default to 1 Mbps / 57600 bps. */
  baudRate: number;
}

/** ByteTransport over a serial port. */
export class SerialTransport implements ByteTransport {
  readonly name: string;
  #port: SerialPort;
  #closed = false;

  private constructor(path: string, port: SerialPort) {
    this.name = path;
    this.#port = port;
  }

  /** Opens `path`; rejects with a TransportError naming the fix (dialout group, busy port, wrong name). */
  static async open(path: string, opts: SerialTransportOptions): Promise<SerialTransport> {
    const port = await new Promise<SerialPort>((resolve, reject) => {
      const p = new SerialPort({ path, baudRate: opts.baudRate, autoOpen: false, lock: true });
      p.open((err) => (err ? reject(serialOpenError(path, err)) : resolve(p)));
    });
    const t = new SerialTransport(path, port);
    // Keep an 'error' listener so an unplugged adapter never becomes an uncaught exception.
    port.on("error", () => undefined);
    port.on("close", () => (t.#closed = true));
    return t;
  }

  get isOpen(): boolean {
    return !this.#closed && this.#port.isOpen;
  }

  write(data: Uint8Array): Promise<void> {
    if (!this.isOpen) return Promise.reject(new TransportError("DISCONNECTED", `${this.name} is closed — check the USB cable, then restart`));
    return new Promise((resolve, reject) => {
      this.#port.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength), (err) =>
        err ? reject(new TransportError("DISCONNECTED", `write to ${this.name} failed: ${err.message} — check the USB cable`, { cause: err })) : resolve(),
      );
    });
  }

  onData(cb: (chunk: Uint8Array) => void): () => void {
    const h = (d: Buffer) => cb(new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
    this.#port.on("data", h);
    return () => this.#port.off("data", h);
  }

  onClose(cb: (err?: Error) => void): () => void {
    const h = (err?: Error | null) => cb(err ?? undefined);
    this.#port.once("close", h);
    return () => this.#port.off("close", h);
  }

  async close(): Promise<void> {
    if (this.#closed || !this.#port.isOpen) {
      this.#closed = true;
      return;
    }
    this.#closed = true;
    await new Promise<void>((resolve) => this.#port.close(() => resolve()));
  }
}
