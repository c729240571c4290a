/**
 * Universal Robots RTDE wire format, from the "Real-Time Data Exchange (RTDE) Guide"
 * (https://docs.universal-robots.com/tutorials/communication-protocol-tutorials/rtde-guide.html):
 *
 * §Protocol/Header: every package is uint16 size (header included) + uint8 type + payload, big-endian.
 * §Package types: REQUEST_PROTOCOL_VERSION 'V' 86, GET_URCONTROL_VERSION 'v' 118, TEXT_MESSAGE 'M' 77,
 *   DATA_PACKAGE 'U' 85, CONTROL_PACKAGE_SETUP_OUTPUTS 'O' 79, CONTROL_PACKAGE_SETUP_INPUTS 'I' 73,
 *   CONTROL_PACKAGE_START 'S' 83, CONTROL_PACKAGE_PAUSE 'P' 80.
 * §Data types: BOOL/UINT8 (1 byte), UINT32, INT32, UINT64, DOUBLE, VECTOR3D, VECTOR6D, VECTOR6INT32, VECTOR6UINT32.
 * §Field names: recipes name variables; the reply lists their types, NOT_FOUND for unknown names and IN_USE
 *   for an input another client (or a fieldbus) already controls.
 */

/** Package types (§Package types). */
export const RTDE = {
  REQUEST_PROTOCOL_VERSION: 86,
  GET_URCONTROL_VERSION: 118,
  TEXT_MESSAGE: 77,
  DATA_PACKAGE: 85,
  CONTROL_PACKAGE_SETUP_OUTPUTS: 79,
  CONTROL_PACKAGE_SETUP_INPUTS: 73,
  CONTROL_PACKAGE_START: 83,
  CONTROL_PACKAGE_PAUSE: 80,
} as const;

/** The protocol version we speak (v2: output frequency in the setup, recipe ids in data packages). */
export const RTDE_PROTOCOL_VERSION = 2;

/** A data type name as the controller reports it. */
export type RtdeType = "BOOL" | "UINT8" | "UINT32" | "UINT64" | "INT32" | "DOUBLE" | "VECTOR3D" | "VECTOR6D" | "VECTOR6INT32" | "VECTOR6UINT32";

/** A decoded value. */
export type RtdeValue = number | bigint | boolean | number[];

/** safety_mode values (§Field names: safety_mode). */
export const SAFETY_MODE: Record<number, string> = {
  1: "NORMAL",
  2: "REDUCED",
  3: "PROTECTIVE_STOP",
  4: "RECOVERY",
  5: "SAFEGUARD_STOP",
  6: "SYSTEM_EMERGENCY_STOP",
  7: "ROBOT_EMERGENCY_STOP",
  8: "VIOLATION",
  9: "FAULT",
  10: "VALIDATE_JOINT_ID",
  11: "UNDEFINED_SAFETY_MODE",
  12: "AUTOMATIC_MODE_SAFEGUARD_STOP",
  13: "SYSTEM_THREE_POSITION_ENABLING_STOP",
};

/** robot_mode values (§Field names: robot_mode). */
export const ROBOT_MODE: Record<number, string> = {
  [-1]: "NO_CONTROLLER",
  0: "DISCONNECTED",
  1: "CONFIRM_SAFETY",
  2: "BOOTING",
  3: "POWER_OFF",
  4: "POWER_ON",
  5: "IDLE",
  6: "BACKDRIVE",
  7: "RUNNING",
  8: "UPDATING_FIRMWARE",
};

/** runtime_state values (§Field names: runtime_state). */
export const RUNTIME_STATE: Record<number, string> = { 0: "STOPPING", 1: "STOPPED", 2: "PLAYING", 3: "PAUSING", 4: "PAUSED", 5: "RESUMING" };

const SIZE: Record<RtdeType, number> = { BOOL: 1, UINT8: 1, UINT32: 4, UINT64: 8, INT32: 4, DOUBLE: 8, VECTOR3D: 24, VECTOR6D: 48, VECTOR6INT32: 24, VECTOR6UINT32: 24 };

/** A whole package: header + payload. */
export function rtdePackage(type: number, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  const out = new Uint8Array(3 + payload.length);
  new DataView(out.buffer).setUint16(0, out.length);
  out[2] = type;
  out.set(payload, 3);
  return out;
}

/** Cuts complete packages off the front of a stream buffer; returns them and the rest. */
export function splitPackages(buf: Uint8Array): { packages: { type: number; payload: Uint8Array }[]; rest: Uint8Array; error?: string } {
  const packages: { type: number; payload: Uint8Array }[] = [];
  let o = 0;
  while (buf.length - o >= 3) {
    const size = (buf[o] << 8) | buf[o + 1];
    if (size < 3) return { packages, rest: new Uint8Array(0), error: `package size ${size} < 3 at byte ${o}: the stream is out of sync` };
    if (buf.length - o < size) break;
    packages.push({ type: buf[o + 2], payload: buf.slice(o + 3, o + size) });
    o += size;
  }
  return { packages, rest: buf.slice(o) };
}

/** Byte size of a recipe's data. */
export function recipeSize(types: readonly RtdeType[]): number {
  return types.reduce((a, t) => a + SIZE[t], 0);
}

/** Serialises values in recipe order (§Data types). */
export function encodeValues(types: readonly RtdeType[], values: readonly RtdeValue[]): Uint8Array {
  const out = new Uint8Array(recipeSize(types));
  const dv = new DataView(out.buffer);
  let o = 0;
  types.forEach((t, i) => {
    const v = values[i];
    const arr = (n: number) => {
      const a = v as number[];
      if (!Array.isArray(a) || a.length !== n) throw new TypeError(`RTDE ${t}: expected ${n} numbers, got ${String(v)}`);
      return a;
    };
    switch (t) {
      case "BOOL":
      case "UINT8":
        dv.setUint8(o, Number(v));
        break;
      case "UINT32":
        dv.setUint32(o, Number(v));
        break;
      case "INT32":
        dv.setInt32(o, Number(v));
        break;
      case "UINT64":
        dv.setBigUint64(o, BigInt(v as number | bigint));
        break;
      case "DOUBLE":
        dv.setFloat64(o, Number(v));
        break;
      case "VECTOR3D":
      case "VECTOR6D":
        arr(t === "VECTOR3D" ? 3 : 6).forEach((x, k) => dv.setFloat64(o + 8 * k, x));
        break;
      case "VECTOR6INT32":
        arr(6).forEach((x, k) => dv.setInt32(o + 4 * k, x));
        break;
      case "VECTOR6UINT32":
        arr(6).forEach((x, k) => dv.setUint32(o + 4 * k, x));
        break;
    }
    o += SIZE[t];
  });
  return out;
}

/** Parses values in recipe order; throws when the payload has the wrong length. */
export function decodeValues(types: readonly RtdeType[], data: Uint8Array): RtdeValue[] {
  if (data.length !== recipeSize(types)) throw new RangeError(`RTDE data package: ${data.length} bytes, recipe needs ${recipeSize(types)}`);
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const out: RtdeValue[] = [];
  let o = 0;
  for (const t of types) {
    switch (t) {
      case "BOOL":
        out.push(dv.getUint8(o) !== 0);
        break;
      case "UINT8":
        out.push(dv.getUint8(o));
        break;
      case "UINT32":
        out.push(dv.getUint32(o));
        break;
      case "INT32":
        out.push(dv.getInt32(o));
        break;
      case "UINT64":
        out.push(dv.getBigUint64(o));
        break;
      case "DOUBLE":
        out.push(dv.getFloat64(o));
        break;
      case "VECTOR3D":
      case "VECTOR6D":
        out.push(Array.from({ length: t === "VECTOR3D" ? 3 : 6 }, (_, k) => dv.getFloat64(o + 8 * k)));
        break;
      case "VECTOR6INT32":
        out.push(Array.from({ length: 6 }, (_, k) => dv.getInt32(o + 4 * k)));
        break;
      case "VECTOR6UINT32":
        out.push(Array.from({ length: 6 }, (_, k) => dv.getUint32(o + 4 * k)));
        break;
    }
    o += SIZE[t];
  }
  return out;
}

/** Whether a type name is one of §Data types. */
export function isRtdeType(t: string): t is RtdeType {
  return t in SIZE;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
/** ASCII text of a payload part. */
export const text = (b: Uint8Array) => dec.decode(b);
/** Bytes of ASCII text. */
export const bytes = (s: string) => enc.encode(s);

/** RTDE_TEXT_MESSAGE v2 payload (§RTDE_TEXT_MESSAGE): len + message, len + source, uint8 level. */
export function encodeTextMessage(message: string, source: string, level: number): Uint8Array {
  const m = bytes(message).subarray(0, 255);
  const s = bytes(source).subarray(0, 255);
  return Uint8Array.from([m.length, ...m, s.length, ...s, level]);
}

/** Parses a v2 text message; levels 0 EXCEPTION, 1 ERROR, 2 WARNING, 3 INFO. */
export function decodeTextMessage(p: Uint8Array): { message: string; source: string; level: number } {
  const ml = p[0] ?? 0;
  const message = text(p.subarray(1, 1 + ml));
  const sl = p[1 + ml] ?? 0;
  const source = text(p.subarray(2 + ml, 2 + ml + sl));
  return { message, source, level: p[2 + ml + sl] ?? 3 };
}
