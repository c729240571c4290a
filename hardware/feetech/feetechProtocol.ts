/**
 * Feetech SCS/STS serial-bus protocol (the Dynamixel 1.0 framing Feetech adopted), from Feetech's
 * "SCS/STS communication protocol manual" (FT-SCS, §2 instruction packet, §3 status packet, §4 instructions):
 *
 *   instruction: 0xFF 0xFF ID LEN INSTR P1..Pn CHK     LEN = n + 2
 *   status:      0xFF 0xFF ID LEN ERR   P1..Pn CHK
 *   CHK = ~(ID + LEN + INSTR/ERR + ΣP) & 0xFF
 *
 * SYNC READ (0x82): ID 0xFE, params [addr, len, id1, id2, ...]; each servo answers with its own status in order.
 * SYNC WRITE (0x83): ID 0xFE, params [addr, len, id1, d1..., id2, d2...]; no reply.
 */
import type { DecodeResult } from "../servo/PacketChannel.ts";
import { setBits, type ServoPacket, type ServoProtocol, type ServoStatus } from "../servo/ServoProtocol.ts";

const INSTRUCTION = { PING: 0x01, READ: 0x02, WRITE: 0x03, REG_WRITE: 0x04, ACTION: 0x05, SYNC_READ: 0x82, SYNC_WRITE: 0x83 } as const;
const BROADCAST = 0xfe;

/**
 * Status error bits (protocol manual §3; the same bits as the STS3215 Status register 65, whose memory-table entry
 * lists bit 0 voltage, 1 sensor, 2 temperature, 3 current, 4 angle, 5 overload). The SCServo SDK names the same
 * bits except 4 (its getRxPacketError has no angle bit). Bits 6 and 7 are not defined; a servo that sets one is
 * still named ("undocumented status bit N") rather than passing as healthy.
 */
const STATUS_BITS: [number, string][] = [
  [0, "input voltage out of range"],
  [1, "angle sensor error (magnetic encoder)"],
  [2, "overheating"],
  [3, "overcurrent"],
  [4, "angle error (position beyond the angle limits)"],
  [5, "overload"],
];

/** ~(sum of bytes) & 0xFF over ID..last parameter. */
export function feetechChecksum(bytes: ArrayLike<number>, from = 0, to = bytes.length): number {
  let s = 0;
  for (let i = from; i < to; i++) s += bytes[i];
  return ~s & 0xff;
}

function frame(id: number, code: number, params: ArrayLike<number>): Uint8Array {
  if (params.length + 2 > 0xff) throw new RangeError(`Feetech packet too long: ${params.length} parameters (max 253)`);
  const out = new Uint8Array(params.length + 6);
  out[0] = 0xff;
  out[1] = 0xff;
  out[2] = id;
  out[3] = params.length + 2;
  out[4] = code;
  out.set(params, 5);
  out[out.length - 1] = feetechChecksum(out, 2, out.length - 1);
  return out;
}

/** Cuts one packet off the front of `buf` (both directions share the framing). */
function decode(buf: Uint8Array): DecodeResult<ServoPacket> {
  if (buf.length < 2) return { kind: "need_more" };
  if (buf[0] !== 0xff || buf[1] !== 0xff) {
    const next = buf.indexOf(0xff, 1);
    return { kind: "skip", bytes: next < 0 ? buf.length : next };
  }
  // 0xFF 0xFF 0xFF ...: a third 0xFF is noise before the real header (ids stop at 0xFE).
  if (buf.length >= 3 && buf[2] === 0xff) return { kind: "skip", bytes: 1 };
  if (buf.length < 4) return { kind: "need_more" };
  const len = buf[3];
  if (len < 2) return { kind: "corrupt", bytes: 4, error: `length byte ${len} (expected ≥ 2)` };
  const total = len + 4;
  if (buf.length < total) return { kind: "need_more" };
  const chk = feetechChecksum(buf, 2, total - 1);
  if (chk !== buf[total - 1]) {
    return { kind: "corrupt", bytes: total, error: `checksum mismatch from id ${buf[2]}: expected 0x${chk.toString(16).padStart(2, "0")}, found 0x${buf[total - 1].toString(16).padStart(2, "0")}` };
  }
  return { kind: "packet", bytes: total, packet: { id: buf[2], instruction: buf[4], params: buf.slice(5, total - 1) } };
}

/** The Feetech protocol. */
export const feetechProtocol: ServoProtocol = {
  name: "feetech",
  broadcastId: BROADCAST,
  INSTRUCTION,
  decode,
  packet: frame,
  statusPacket: (id, error, data) => frame(id, error, data),
  status: (p: ServoPacket): ServoStatus => ({ id: p.id, error: p.instruction, data: p.params }),
  ping: (id) => frame(id, INSTRUCTION.PING, []),
  read: (id, address, length) => frame(id, INSTRUCTION.READ, [address, length]),
  write: (id, address, data) => frame(id, INSTRUCTION.WRITE, [address, ...data]),
  syncRead: (ids, address, length) => frame(BROADCAST, INSTRUCTION.SYNC_READ, [address, length, ...ids]),
  syncWrite: (address, length, entries) => {
    const params: number[] = [address, length];
    for (const e of entries) {
      if (e.data.length !== length) throw new RangeError(`sync write: id ${e.id} has ${e.data.length} bytes, expected ${length}`);
      params.push(e.id, ...e.data);
    }
    return frame(BROADCAST, INSTRUCTION.SYNC_WRITE, params);
  },
  pingModel: () => null,
  errorText: (error) => {
    const { named, unnamed } = setBits(error, STATUS_BITS);
    return [...named.map(([, t]) => t), ...unnamed.map((bit) => `undocumented status bit ${bit}`)].join(", ");
  },
};
