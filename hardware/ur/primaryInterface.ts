/**
 * The UR primary (30001) and secondary (30002) client interfaces, from Universal Robots' "Client Interfaces"
 * document for e-Series (5.x), §"Primary and Secondary Client Interface" (what rlft reads and the simulator sends):
 *
 *   message      int32 size (header included), uint8 message type, body        (big-endian)
 *   ROBOT_STATE (16): sub-packages, each int32 length, uint8 package type, contents
 *     ROBOT_MODE_DATA (0): uint64 timestamp, bool isRealRobotConnected, isRealRobotEnabled, isRobotPowerOn,
 *       isEmergencyStopped, isProtectiveStopped, isProgramRunning, isProgramPaused, uint8 robotMode,
 *       uint8 controlMode, double targetSpeedFraction, speedScaling, targetSpeedFractionLimit, uint8 reserved
 *   ROBOT_MESSAGE (20): uint64 timestamp, int8 source, uint8 robot message type, then by type
 *     TEXT (0): text · VERSION (3): uint8 name length, name, uint8 major, uint8 minor, int32 bugfix, int32 build,
 *     build date · SAFETY_MODE (5): int32 code, int32 argument, uint8 safety mode, uint32 report type, uint32 data
 *     ERROR_CODE (6): int32 code, int32 argument, int32 warning level, uint8 data type, uint32 data, text
 *     KEY (7): int32 code, int32 argument, uint8 title length, title, text (PROGRAM_XXX_STARTED / _STOPPED)
 *     RUNTIME_EXCEPTION (10): int32 line, int32 column, text
 *
 * The primary interface sends robot state and robot messages, the secondary robot state only; both take
 * URScript programs (§"Sending URScript", URScript manual §"Scripting" / client interfaces).
 */

/** Message types (§Message types). */
export const PRIMARY = { ROBOT_STATE: 16, ROBOT_MESSAGE: 20 } as const;
/** Robot message types (§ROBOT_MESSAGE). */
export const ROBOT_MESSAGE = { TEXT: 0, VERSION: 3, SAFETY_MODE: 5, ERROR_CODE: 6, KEY: 7, RUNTIME_EXCEPTION: 10 } as const;

/** ROBOT_MODE_DATA contents. */
export interface RobotModeData {
  timestampUs: bigint;
  realRobotConnected: boolean;
  realRobotEnabled: boolean;
  powerOn: boolean;
  emergencyStopped: boolean;
  protectiveStopped: boolean;
  programRunning: boolean;
  programPaused: boolean;
  robotMode: number;
  controlMode: number;
  targetSpeedFraction: number;
  speedScaling: number;
  targetSpeedFractionLimit: number;
}

/** A robot message, reduced to what a client shows: its kind, a title (KEY) and its text. */
export interface RobotMessage {
  kind: "text" | "version" | "safety_mode" | "error_code" | "key" | "runtime_exception" | "other";
  title: string;
  text: string;
  /** SAFETY_MODE: the new safety mode; ERROR_CODE: the warning level; RUNTIME_EXCEPTION: the line. */
  value: number;
}

/** One decoded primary/secondary message. */
export type PrimaryMessage = { type: "state"; mode: RobotModeData } | { type: "message"; message: RobotMessage } | { type: "other"; messageType: number };

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Big-endian field writer; each method returns the writer, so a message's layout reads as one chain. */
class Writer {
  parts: number[] = [];
  u8(v: number): this {
    this.parts.push(v & 0xff);
    return this;
  }
  i8(v: number): this {
    return this.u8(v < 0 ? v + 256 : v);
  }
  bool(v: boolean): this {
    return this.u8(v ? 1 : 0);
  }
  #bytes(n: number, set: (dv: DataView) => void): this {
    const b = new Uint8Array(n);
    set(new DataView(b.buffer));
    this.parts.push(...b);
    return this;
  }
  i32(v: number): this {
    return this.#bytes(4, (dv) => dv.setInt32(0, v));
  }
  u32(v: number): this {
    return this.#bytes(4, (dv) => dv.setUint32(0, v >>> 0));
  }
  u64(v: bigint): this {
    return this.#bytes(8, (dv) => dv.setBigUint64(0, v));
  }
  f64(v: number): this {
    return this.#bytes(8, (dv) => dv.setFloat64(0, v));
  }
  str(s: string): this {
    this.parts.push(...enc.encode(s));
    return this;
  }
  /** A length-prefixed (uint8) string. */
  pstr(s: string): this {
    return this.u8(s.length).str(s);
  }
}

function message(type: number, body: number[]): Uint8Array {
  const out = new Uint8Array(5 + body.length);
  new DataView(out.buffer).setInt32(0, out.length);
  out[4] = type;
  out.set(body, 5);
  return out;
}

/** A ROBOT_STATE message holding ROBOT_MODE_DATA. */
export function encodeRobotState(m: RobotModeData): Uint8Array {
  const w = new Writer().u64(m.timestampUs);
  for (const b of [m.realRobotConnected, m.realRobotEnabled, m.powerOn, m.emergencyStopped, m.protectiveStopped, m.programRunning, m.programPaused]) w.bool(b);
  w.u8(m.robotMode).u8(m.controlMode).f64(m.targetSpeedFraction).f64(m.speedScaling).f64(m.targetSpeedFractionLimit).u8(0);
  const pkg = new Writer().i32(5 + w.parts.length).u8(0); // ROBOT_MODE_DATA
  pkg.parts.push(...w.parts);
  return message(PRIMARY.ROBOT_STATE, pkg.parts);
}

/** A ROBOT_MESSAGE of the given kind (source -2: the controller). */
export function encodeRobotMessage(timestampUs: bigint, m: Omit<RobotMessage, "kind"> & { kind: Exclude<RobotMessage["kind"], "other"> }, version?: [number, number, number, number]): Uint8Array {
  const w = new Writer().u64(timestampUs).i8(-2);
  // Every coded message starts with int32 code and int32 argument; rlft's simulator sends 0 for both.
  switch (m.kind) {
    case "text":
      w.u8(ROBOT_MESSAGE.TEXT).str(m.text);
      break;
    case "version": {
      const [major, minor, bugfix, build] = version ?? [5, 15, 0, 0];
      w.u8(ROBOT_MESSAGE.VERSION).pstr(m.title).u8(major).u8(minor).i32(bugfix).i32(build).str(m.text);
      break;
    }
    case "safety_mode":
      w.u8(ROBOT_MESSAGE.SAFETY_MODE).i32(0).i32(0).u8(m.value).u32(0).u32(0);
      break;
    case "error_code":
      w.u8(ROBOT_MESSAGE.ERROR_CODE).i32(0).i32(0).i32(m.value).u8(0).u32(0).str(m.text);
      break;
    case "key":
      w.u8(ROBOT_MESSAGE.KEY).i32(0).i32(0).pstr(m.title).str(m.text);
      break;
    case "runtime_exception":
      w.u8(ROBOT_MESSAGE.RUNTIME_EXCEPTION).i32(m.value).i32(0).str(m.text);
      break;
  }
  return message(PRIMARY.ROBOT_MESSAGE, w.parts);
}

function decodeRobotMessage(b: Uint8Array): RobotMessage {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const type = b[9];
  const rest = (o: number) => dec.decode(b.subarray(o));
  switch (type) {
    case ROBOT_MESSAGE.TEXT:
      return { kind: "text", title: "", text: rest(10), value: 0 };
    case ROBOT_MESSAGE.VERSION: {
      const n = b[10];
      return { kind: "version", title: dec.decode(b.subarray(11, 11 + n)), text: `${b[11 + n]}.${b[12 + n]}.${dv.getInt32(13 + n)}.${dv.getInt32(17 + n)}`, value: 0 };
    }
    case ROBOT_MESSAGE.SAFETY_MODE:
      return { kind: "safety_mode", title: "", text: "", value: b[18] ?? 0 };
    case ROBOT_MESSAGE.ERROR_CODE:
      return { kind: "error_code", title: "", text: rest(27), value: b.length >= 22 ? dv.getInt32(18) : 0 };
    case ROBOT_MESSAGE.KEY: {
      const n = b[18] ?? 0;
      return { kind: "key", title: dec.decode(b.subarray(19, 19 + n)), text: rest(19 + n), value: 0 };
    }
    case ROBOT_MESSAGE.RUNTIME_EXCEPTION:
      return { kind: "runtime_exception", title: "", text: rest(18), value: b.length >= 14 ? dv.getInt32(10) : 0 };
    default:
      return { kind: "other", title: "", text: "", value: type };
  }
}

function decodeRobotState(b: Uint8Array): RobotModeData | null {
  let o = 0;
  while (o + 5 <= b.length) {
    const dv = new DataView(b.buffer, b.byteOffset + o, b.byteLength - o);
    const len = dv.getInt32(0);
    if (len < 5 || o + len > b.length) return null;
    if (b[o + 4] === 0 && len >= 5 + 8 + 7 + 2 + 24) {
      const p = o + 5;
      const v = new DataView(b.buffer, b.byteOffset + p, len - 5);
      const flag = (k: number) => b[p + 8 + k] !== 0;
      return {
        timestampUs: v.getBigUint64(0),
        realRobotConnected: flag(0),
        realRobotEnabled: flag(1),
        powerOn: flag(2),
        emergencyStopped: flag(3),
        protectiveStopped: flag(4),
        programRunning: flag(5),
        programPaused: flag(6),
        robotMode: b[p + 15],
        controlMode: b[p + 16],
        targetSpeedFraction: v.getFloat64(17),
        speedScaling: v.getFloat64(25),
        targetSpeedFractionLimit: v.getFloat64(33),
      };
    }
    o += len;
  }
  return null;
}

/** Cuts complete messages off a stream buffer. A size below 5 or above 1 MB means the stream is out of sync. */
export function splitPrimary(buf: Uint8Array): { messages: PrimaryMessage[]; rest: Uint8Array; error?: string } {
  const messages: PrimaryMessage[] = [];
  let o = 0;
  while (buf.length - o >= 5) {
    const size = new DataView(buf.buffer, buf.byteOffset + o).getInt32(0);
    if (size < 5 || size > 1 << 20) return { messages, rest: new Uint8Array(0), error: `message size ${size} at byte ${o}: not a UR primary/secondary interface stream` };
    if (buf.length - o < size) break;
    const body = buf.subarray(o, o + size);
    const type = body[4];
    if (type === PRIMARY.ROBOT_STATE) {
      const mode = decodeRobotState(body.subarray(5));
      messages.push(mode ? { type: "state", mode } : { type: "other", messageType: type });
    } else if (type === PRIMARY.ROBOT_MESSAGE && size >= 15) {
      messages.push({ type: "message", message: decodeRobotMessage(body.subarray(5)) });
    } else messages.push({ type: "other", messageType: type });
    o += size;
  }
  return { messages, rest: buf.slice(o) };
}
