/**
 * Dynamixel Protocol 2.0, from the ROBOTIS e-Manual "DYNAMIXEL Protocol 2.0"
 * (https://emanual.robotis.com/docs/en/dxl/protocol2/):
 *
 *   instruction: FF FF FD 00 ID LEN_L LEN_H INST P1..Pn CRC_L CRC_H      LEN = n + 3 (after stuffing)
 *   status:      FF FF FD 00 ID LEN_L LEN_H 0x55 ERR P1..Pn CRC_L CRC_H
 *
 * §"Byte Stuffing": in INST..Pn every FF FF FD gets an extra FD (FF FF FD FD); LEN counts the stuffed bytes.
 * §"CRC": CRC-16 (polynomial 0x8005, initial value 0, not reflected) over header..last parameter; the
 * e-Manual's `update_crc` table is exactly this polynomial's table, generated below.
 * §"Status Packet" error byte: bit 7 Alert (hardware error, see Hardware Error Status), bits 0–6 error number.
 */
import type { DecodeResult } from "../servo/PacketChannel.ts";
import { setBits, type ServoPacket, type ServoProtocol, type ServoStatus } from "../servo/ServoProtocol.ts";

const INSTRUCTION = { PING: 0x01, READ: 0x02, WRITE: 0x03, REG_WRITE: 0x04, ACTION: 0x05, REBOOT: 0x08, STATUS: 0x55, SYNC_READ: 0x82, SYNC_WRITE: 0x83 } as const;
const BROADCAST = 0xfe;

/** Error numbers of the status packet (e-Manual §"Status Packet", Error). */
const ERROR_NUMBERS: Record<number, string> = {
  1: "Result Fail (the instruction could not be processed)",
  2: "Instruction Error (undefined instruction, or Action without Reg Write)",
  3: "CRC Error (the packet's CRC did not match)",
  4: "Data Range Error (value out of the register's range)",
  5: "Data Length Error (data shorter than the register)",
  6: "Data Limit Error (value beyond the limit register)",
  7: "Access Error (read-only register, or EEPROM write with torque on)",
};

/** Hardware Error Status (70) bits of the X series (e-Manual "Shutdown(63)" table; bits 1, 6 and 7 are unused there). */
const HARDWARE_ERRORS: [number, string][] = [
  [0, "Input Voltage Error (supply outside the voltage limits)"],
  [2, "Overheating Error (internal temperature above Temperature Limit)"],
  [3, "Motor Encoder Error"],
  [4, "Electrical Shock Error (electrical shock on the circuit, or too little power for the motor)"],
  [5, "Overload Error (a persistent load above the maximum output)"],
];

/** Names of the bits set in a Hardware Error Status value. */
export function hardwareErrorText(status: number): string {
  const { named, unnamed } = setBits(status, HARDWARE_ERRORS);
  const names = [...named.map(([bit, t]) => `${t} [bit ${bit}]`), ...unnamed.map((bit) => `undocumented hardware error [bit ${bit}]`)];
  return names.join(", ") || `Hardware Error Status ${status}`;
}

const CRC_TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let k = 0; k < 8; k++) c = c & 0x8000 ? ((c << 1) ^ 0x8005) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

/** CRC-16 of the e-Manual (`update_crc(0, data, size)`). */
export function dynamixelCrc(bytes: ArrayLike<number>, from = 0, to = bytes.length): number {
  let crc = 0;
  for (let j = from; j < to; j++) {
    const i = ((crc >> 8) ^ bytes[j]) & 0xff;
    crc = ((crc << 8) ^ CRC_TABLE[i]) & 0xffff;
  }
  return crc;
}

/** Inserts 0xFD after every FF FF FD in `payload`. */
export function stuff(payload: ArrayLike<number>): number[] {
  const out: number[] = [];
  for (let i = 0; i < payload.length; i++) {
    out.push(payload[i]);
    const n = out.length;
    if (n >= 3 && out[n - 3] === 0xff && out[n - 2] === 0xff && out[n - 1] === 0xfd) out.push(0xfd);
  }
  return out;
}

/** Removes the stuffing bytes (FF FF FD FD → FF FF FD). */
export function unstuff(payload: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < payload.length; i++) {
    const n = out.length;
    if (payload[i] === 0xfd && n >= 3 && out[n - 3] === 0xff && out[n - 2] === 0xff && out[n - 1] === 0xfd) continue;
    out.push(payload[i]);
  }
  return Uint8Array.from(out);
}

function frame(id: number, instruction: number, params: ArrayLike<number>): Uint8Array {
  const body = stuff([instruction, ...Array.from(params)]);
  const len = body.length + 2;
  const out = new Uint8Array(7 + len);
  out.set([0xff, 0xff, 0xfd, 0x00, id, len & 0xff, len >> 8]);
  out.set(body, 7);
  const crc = dynamixelCrc(out, 0, out.length - 2);
  out[out.length - 2] = crc & 0xff;
  out[out.length - 1] = crc >> 8;
  return out;
}

function decode(buf: Uint8Array): DecodeResult<ServoPacket> {
  // Hunt for FF FF FD 00.
  let start = -1;
  for (let i = 0; i + 3 < buf.length; i++) {
    if (buf[i] === 0xff && buf[i + 1] === 0xff && buf[i + 2] === 0xfd && buf[i + 3] === 0x00) {
      start = i;
      break;
    }
  }
  if (start < 0) return buf.length > 3 ? { kind: "skip", bytes: buf.length - 3 } : { kind: "need_more" };
  if (start > 0) return { kind: "skip", bytes: start };
  if (buf.length < 7) return { kind: "need_more" };
  const len = buf[5] | (buf[6] << 8);
  if (len < 3) return { kind: "corrupt", bytes: 7, error: `length ${len} (expected ≥ 3)` };
  const total = 7 + len;
  if (buf.length < total) return { kind: "need_more" };
  const crc = dynamixelCrc(buf, 0, total - 2);
  const got = buf[total - 2] | (buf[total - 1] << 8);
  if (crc !== got) {
    return { kind: "corrupt", bytes: total, error: `CRC mismatch from id ${buf[4]}: expected 0x${crc.toString(16).padStart(4, "0")}, found 0x${got.toString(16).padStart(4, "0")}` };
  }
  const body = unstuff(buf.subarray(7, total - 2));
  return { kind: "packet", bytes: total, packet: { id: buf[4], instruction: body[0], params: body.slice(1) } };
}

const u16 = (v: number) => [v & 0xff, (v >> 8) & 0xff];

/** The Dynamixel 2.0 protocol. */
export const dynamixelProtocol: ServoProtocol = {
  name: "dynamixel",
  broadcastId: BROADCAST,
  INSTRUCTION,
  decode,
  packet: frame,
  statusPacket: (id, error, data) => frame(id, INSTRUCTION.STATUS, [error, ...data]),
  status: (p: ServoPacket): ServoStatus | null =>
    p.instruction === INSTRUCTION.STATUS && p.params.length >= 1 ? { id: p.id, error: p.params[0], data: p.params.slice(1) } : null,
  ping: (id) => frame(id, INSTRUCTION.PING, []),
  // §Reboot: the servo answers, then restarts (RAM to defaults, hardware error cleared).
  reboot: (id) => frame(id, INSTRUCTION.REBOOT, []),
  read: (id, address, length) => frame(id, INSTRUCTION.READ, [...u16(address), ...u16(length)]),
  write: (id, address, data) => frame(id, INSTRUCTION.WRITE, [...u16(address), ...data]),
  syncRead: (ids, address, length) => frame(BROADCAST, INSTRUCTION.SYNC_READ, [...u16(address), ...u16(length), ...ids]),
  syncWrite: (address, length, entries) => {
    const params: number[] = [...u16(address), ...u16(length)];
    for (const e of entries) {
      if (e.data.length !== length) throw new RangeError(`sync write: id ${e.id} has ${e.data.length} bytes, expected ${length}`);
      params.push(e.id, ...e.data);
    }
    return frame(BROADCAST, INSTRUCTION.SYNC_WRITE, params);
  },
  // Ping status parameters: Model Number (2, LE) + Firmware Version (1).
  pingModel: (s) => (s.data.length >= 2 ? s.data[0] | (s.data[1] << 8) : null),
  errorText: (error) => {
    const parts: string[] = [];
    const num = error & 0x7f;
    if (num) parts.push(ERROR_NUMBERS[num] ?? `error number ${num}`);
    if (error & 0x80) parts.push("Alert: hardware error (read Hardware_Error_Status; reboot the servo to clear it)");
    return parts.join("; ");
  },
};
