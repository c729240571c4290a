/**
 * The `rlft-exp/1` wire format (docs/contracts.md): `[msgpack header, ...raw little-endian float32 tensor frames]`.
 * Validation mirrors learner/rlft_learner/protocol.py rule for rule; test/golden/rlft-exp-1/ holds frames both sides decode.
 */
import { decode as msgpackDecode, encode as msgpackEncode } from "@msgpack/msgpack";
import { endianness } from "node:os";

export const PROTOCOL = "rlft-exp/1";
const DTYPE = "float32";
/** A header is a small map; anything bigger is not ours. */
export const MAX_HEADER_BYTES = 1 << 20;

type FieldType = "string" | "int" | "bool" | "list";
/** Required header fields per message type, besides `type`, `protocol` and `seq`. */
const REQUIRED_FIELDS: Record<string, Record<string, FieldType[]>> = {
  hello: { robot_id: ["string"], config_hash: ["string"], obs_names: ["list"], action_names: ["list"], task: ["string"] },
  episode: { episode_id: ["string", "int"], seed: ["int"], task: ["string"], length: ["int"], success: ["bool"] },
  end: { episodes: ["int"] },
  welcome: { learner: ["string"] },
  ack: {},
  error: { reason: ["string"] },
};
/** Tensors an episode must carry, with their rank. */
const EPISODE_TENSORS: [string, number][] = [["obs", 2], ["action", 2], ["reward", 1]];

export type MessageType = "hello" | "episode" | "end" | "welcome" | "ack" | "error";

/** A decoded header; other fields stay as msgpack decoded them. */
export interface Header {
  type: MessageType;
  protocol: string;
  seq: number;
  [field: string]: unknown;
}

/** A row-major float32 tensor. */
export interface Tensor {
  shape: number[];
  data: Float32Array;
}

/** One decoded message; `tensors` keeps frame order. */
export interface Message {
  header: Header;
  tensors: Map<string, Tensor>;
}

/** A message that does not follow rlft-exp/1; `seq` is the offending message's seq when it could be read. */
export class WireError extends Error {
  readonly code = "malformed_message";
  readonly seq: number | undefined;

  constructor(message: string, options: { seq?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "WireError";
    this.seq = options.seq;
  }
}

if (endianness() !== "LE") throw new Error("bridge/wire.ts assumes a little-endian host (rlft-exp/1 tensors are little-endian float32)");

/** Encodes a message; `protocol` is filled in and `tensors` specs are written from `tensors` (in order). */
export function encodeMessage(header: Record<string, unknown>, tensors: Iterable<[string, Tensor]> = []): Buffer[] {
  const head: Record<string, unknown> = { ...header };
  if (head.protocol === undefined) head.protocol = PROTOCOL;
  const specs: { name: string; shape: number[]; dtype: string }[] = [];
  const frames: Buffer[] = [];
  for (const [name, t] of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (t.data.length !== n) throw new WireError(`tensor ${JSON.stringify(name)}: shape [${t.shape.join(", ")}] needs ${n} values; found ${t.data.length}`);
    specs.push({ name, shape: [...t.shape], dtype: DTYPE });
    frames.push(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  }
  if (specs.length > 0 || "tensors" in head) head.tensors = specs;
  return [Buffer.from(msgpackEncode(head, { ignoreUndefined: true })), ...frames];
}

/** Decodes and validates one multipart message; throws {@link WireError} on anything malformed. */
export function decodeMessage(frames: readonly Uint8Array[]): Message {
  if (frames.length === 0) throw new WireError("empty message; expected [header, ...tensor frames]");
  const header = decodeHeader(frames[0]);
  const rawSeq = header.seq;
  const seq = isInt(rawSeq) ? rawSeq : undefined;
  if (header.protocol !== PROTOCOL) throw new WireError(`protocol must be ${repr(PROTOCOL)}; found ${repr(header.protocol)}`, { seq });
  // The learner answers `error` with seq -1 when it could not read the offending header (learner/rlft_learner/server.py).
  const seqOk = seq !== undefined && (seq >= 0 || (seq === -1 && header.type === "error"));
  if (!seqOk) throw new WireError(`seq must be a non-negative integer; found ${repr(rawSeq)}`);
  const type = checkFields(header, seq);
  const specs = checkSpecs(header, frames.length - 1, seq);
  const tensors = new Map<string, Tensor>();
  specs.forEach(([name, shape], i) => {
    const frame = frames[i + 1];
    const n = shape.reduce((a, b) => a * b, 1);
    if (frame.byteLength !== 4 * n) throw new WireError(`tensor ${repr(name)} with shape [${shape.join(", ")}] needs ${4 * n} bytes of float32; frame has ${frame.byteLength}`, { seq });
    // Copy: frames from zeromq need not be 4-byte aligned, and the caller keeps its buffer.
    const data = new Float32Array(n);
    new Uint8Array(data.buffer).set(frame);
    let bad = 0;
    for (let j = 0; j < n; j++) if (!Number.isFinite(data[j])) bad++;
    if (bad > 0) throw new WireError(`tensor ${repr(name)} has ${bad} non-finite values (NaN/Inf)`, { seq });
    tensors.set(name, { shape, data });
  });
  if (type === "episode") checkEpisode(header, tensors, seq);
  return { header: header as Header, tensors };
}

/** Rows (T × D, rectangular, finite) as a [T, D] tensor. */
export function tensorFromRows(name: string, rows: readonly (readonly number[])[], width?: number): Tensor {
  const d = width ?? rows[0]?.length ?? 0;
  const data = new Float32Array(rows.length * d);
  rows.forEach((row, t) => {
    if (row.length !== d) throw new WireError(`${name}[${t}]: expected ${d} values, found ${row.length}`);
    for (let j = 0; j < d; j++) {
      if (!Number.isFinite(row[j])) throw new WireError(`${name}[${t}][${j}] is ${row[j]}; tensors must be finite`);
      data[t * d + j] = row[j];
    }
  });
  return { shape: [rows.length, d], data };
}

/** Rows of a [T, D] tensor as number[][]. */
export function tensorToRows(t: Tensor): number[][] {
  if (t.shape.length !== 2) throw new WireError(`expected a rank-2 tensor, found shape [${t.shape.join(", ")}]`);
  const [n, d] = t.shape;
  return Array.from({ length: n }, (_, i) => Array.from(t.data.subarray(i * d, (i + 1) * d)));
}

function decodeHeader(frame: Uint8Array): Record<string, unknown> {
  if (frame.byteLength > MAX_HEADER_BYTES) throw new WireError(`header frame is ${frame.byteLength} bytes; expected at most ${MAX_HEADER_BYTES}`);
  let header: unknown;
  try {
    header = msgpackDecode(frame, { mapKeyConverter: stringKeysOnly });
  } catch (cause) {
    if (cause instanceof WireError) throw cause;
    throw new WireError(`header frame is not valid msgpack (${(cause as Error).message})`, { cause });
  }
  if (header === null || typeof header !== "object" || Array.isArray(header) || header instanceof Uint8Array) {
    throw new WireError(`header must be a msgpack map; found ${typeName(header)}`);
  }
  return header as Record<string, unknown>;
}

/** Python's `strict_map_key=True` and the key check: every map key must be a string. */
function stringKeysOnly(key: unknown): string {
  if (typeof key !== "string") throw new WireError("header keys must be strings");
  return key;
}

function checkFields(header: Record<string, unknown>, seq: number): MessageType {
  const type = header.type;
  if (typeof type !== "string" || !(type in REQUIRED_FIELDS)) {
    throw new WireError(`unknown message type ${repr(type)}; expected one of ${Object.keys(REQUIRED_FIELDS).sort().join(", ")}`, { seq });
  }
  for (const [field, types] of Object.entries(REQUIRED_FIELDS[type])) {
    if (!(field in header)) throw new WireError(`${type} header lacks required field ${repr(field)}`, { seq });
    const v = header[field];
    if (!types.some((t) => hasType(v, t))) throw new WireError(`${type}.${field} must be ${types.join(" or ")}; found ${typeName(v)}`, { seq });
  }
  if (type === "hello") {
    for (const field of ["obs_names", "action_names"]) {
      const names = header[field] as unknown[];
      if (names.length === 0 || !names.every((n) => typeof n === "string")) throw new WireError(`hello.${field} must be a non-empty list of strings`, { seq });
    }
  }
  return type as MessageType;
}

function checkSpecs(header: Record<string, unknown>, nFrames: number, seq: number): [string, number[]][] {
  const specs = header.tensors ?? [];
  if (!Array.isArray(specs)) throw new WireError(`header.tensors must be a list; found ${typeName(specs)}`, { seq });
  if (specs.length !== nFrames) throw new WireError(`header lists ${specs.length} tensors but the message has ${nFrames} tensor frames`, { seq });
  const out: [string, number[]][] = [];
  specs.forEach((spec: unknown, i) => {
    if (spec === null || typeof spec !== "object" || Array.isArray(spec) || typeof (spec as { name?: unknown }).name !== "string") {
      throw new WireError(`tensors[${i}] must be a map with a string name`, { seq });
    }
    const { name, dtype, shape } = spec as { name: string; dtype?: unknown; shape?: unknown };
    if (dtype !== DTYPE) throw new WireError(`tensor ${repr(name)}: dtype must be ${repr(DTYPE)}; found ${repr(dtype)}`, { seq });
    if (!Array.isArray(shape) || !shape.every((d) => isInt(d) && d >= 0)) throw new WireError(`tensor ${repr(name)}: shape must be a list of non-negative ints; found ${repr(shape)}`, { seq });
    if (out.some(([seen]) => seen === name)) throw new WireError(`tensor name ${repr(name)} appears twice`, { seq });
    out.push([name, shape as number[]]);
  });
  return out;
}

function checkEpisode(header: Record<string, unknown>, tensors: Map<string, Tensor>, seq: number): void {
  const length = header.length as number;
  if (length < 1) throw new WireError(`episode.length must be >= 1; found ${length}`, { seq });
  for (const [name, rank] of EPISODE_TENSORS) {
    const t = tensors.get(name);
    if (t === undefined) throw new WireError(`episode lacks tensor ${repr(name)}; expected ${EPISODE_TENSORS.map(([n]) => n).join(", ")}`, { seq });
    const s = t.shape;
    if (s.length !== rank || s[0] !== length || (rank === 2 && s[1] < 1)) {
      const want = rank === 2 ? `[${length}, >=1]` : `[${length}]`;
      throw new WireError(`episode tensor ${repr(name)}: shape must be ${want}; found [${s.join(", ")}]`, { seq });
    }
  }
}

function isInt(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v);
}

function hasType(v: unknown, t: FieldType): boolean {
  switch (t) {
    case "string":
      return typeof v === "string";
    case "int":
      return isInt(v);
    case "bool":
      return typeof v === "boolean";
    case "list":
      return Array.isArray(v);
  }
}

function typeName(v: unknown): string {
  if (v === null) return "nil";
  if (Array.isArray(v)) return "list";
  if (v instanceof Uint8Array) return "bytes";
  if (isInt(v)) return "int";
  if (typeof v === "number") return "float";
  if (typeof v === "object") return "map";
  return typeof v;
}

function repr(v: unknown): string {
  return v === undefined ? "nothing" : JSON.stringify(v) ?? String(v);
}
