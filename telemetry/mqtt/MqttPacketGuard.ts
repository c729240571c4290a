/**
 * A size limit on MQTT packets in front of a broker that has none (aedes 1.x buffers a PUBLISH whole, whatever its
 * length: one anonymous 150 MB publish took the robot from 380 MB to 1.2 GB, issue 24). The guard follows the packet
 * framing of MQTT 3.1.1 §2.2 / MQTT 5 §2.1 (one fixed-header byte, then the Remaining Length as a variable byte
 * integer of at most four bytes, then that many bytes) as the bytes arrive, passes them through unchanged, and cuts
 * the connection as soon as a header announces more than the limit, before the body is read, so nothing of an
 * oversize packet is buffered. A malformed length (a fifth continuation byte) cuts it too.
 */
import { Duplex, Transform } from "node:stream";
import type { Socket } from "node:net";

/** Why a connection was cut. */
export interface PacketRefusal {
  /** The announced packet length in bytes, or -1 for a malformed length. */
  bytes: number;
}

/** Tracks packet boundaries in a byte stream; {@link feed} returns the first refusal, or null. */
export class MqttFrameSizer {
  readonly #max: number;
  /** Bytes of the current packet body still to skip. */
  #skip = 0;
  /** 0: expecting a fixed-header byte; 1..4: reading the length's bytes. */
  #lenBytes = 0;
  #len = 0;
  #mult = 1;

  constructor(maxPacketBytes: number) {
    this.#max = maxPacketBytes;
  }

  feed(chunk: Buffer): PacketRefusal | null {
    let i = 0;
    while (i < chunk.length) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, chunk.length - i);
        this.#skip -= n;
        i += n;
        continue;
      }
      const b = chunk[i++];
      if (this.#lenBytes === 0) {
        // The fixed header's first byte (type and flags); the length follows.
        this.#lenBytes = 1;
        this.#len = 0;
        this.#mult = 1;
        continue;
      }
      this.#len += (b & 0x7f) * this.#mult;
      this.#mult *= 128;
      if (this.#len > this.#max) return { bytes: this.#len };
      if (b & 0x80) {
        if (++this.#lenBytes > 4) return { bytes: -1 };
        continue;
      }
      this.#lenBytes = 0;
      this.#skip = this.#len;
    }
    return null;
  }
}

/** `socket` as a Duplex whose readable side passes only packets up to `maxPacketBytes`; `onRefuse` hears each cut. */
export function guardMqttSocket(socket: Socket, maxPacketBytes: number, onRefuse: (r: PacketRefusal) => void): Duplex {
  const sizer = new MqttFrameSizer(maxPacketBytes);
  const guard = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      const refused = sizer.feed(chunk);
      if (refused === null) return cb(null, chunk);
      onRefuse(refused);
      socket.destroy();
      cb();
    },
  });
  socket.pipe(guard);
  const conn = Duplex.from({ readable: guard, writable: socket });
  // The broker watches `conn`: a closed or failed socket must end it too (a piped Transform does not end on destroy).
  socket.on("error", () => undefined);
  socket.on("close", () => conn.destroy());
  conn.on("error", () => undefined);
  conn.on("close", () => socket.destroy());
  return conn;
}
