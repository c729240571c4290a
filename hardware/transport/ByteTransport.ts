/**
 * A byte pipe to a device (serial port, TCP socket, in-memory pair). Drivers and protocol code take one
 * of these, so tests inject a pty pair or loopback socket instead of hardware.
 */

/** An open, bidirectional byte stream. */
export interface ByteTransport {
  /** What it is connected to, for messages ("/dev/ttyACM0", "192.168.1.10:30004"). */
  readonly name: string;
  /** Writes bytes; resolves when they are handed to the OS. */
  write(data: Uint8Array): Promise<void>;
  /** Calls `cb` with every chunk received; returns the function that stops it. */
  onData(cb: (chunk: Uint8Array) => void): () => void;
  /** Calls `cb` once when the link closes (with the error when it failed: cable pulled, peer gone). */
  onClose(cb: (err?: Error) => void): () => void;
  /** True until closed. */
  readonly isOpen: boolean;
  close(): Promise<void>;
}
