/**
 * The `rlft-exp/1` wire format (docs/contracts.md): `[msgpack header, ...raw little-endian float32 tensor frames]`;
 * camera frames raw uint8 or zlib-compressed per frame (docs/protocol.md).
 * Validation mirrors learner/rlft_learner/transport/protocol.py rule for rule; test/golden/rlft-exp-1/ holds frames both sides decode.
 */
import { decode as msgpackDecode, encode as msgpackEncode } from "@msgpack/msgpack";
import { endianness } from "node:os";
import { FrameInflateError, inflateFrame } from "./frameCodec.ts";

export const PROTOCOL = "rlft-exp/1";
const DTYPE = "float32";
/**
 * Camera frames: raw uint8 rgb8 bytes, [T, H, W, 3], named `image.<camera>`; a transitions batch pairs each with
 * `next_image.<camera>` (the next observation's frames). learner/rlft_learner/transport/protocol.py checks the same.
 */
const IMAGE_DTYPE = "uint8";
const IMAGE_NAME = /^(next_)?image\.[a-z][a-z0-9_]{0,31}$/;
const MAX_IMAGE_SIDE = 4096;
/**
 * Camera tensors may declare `encoding: "zlib"`: one zlib stream per frame, back to back, their byte counts in the
 * spec's `sizes` (bridge/frameCodec.ts). Decoding inflates each within its declared size; what one message's zlib
 * frames may declare once inflated is bounded (learner/rlft_learner/transport/protocol.py MAX_INFLATED_BYTES).
 */
const FRAME_ENCODINGS = ["zlib"];
const MAX_INFLATED_BYTES = 256 * 2 ** 20;
/** Most zlib streams (camera frames) one message may carry, counted before any is inflated (protocol.py MAX_FRAMES_PER_MESSAGE). */
export const MAX_FRAMES_PER_MESSAGE = 8192;
/** Message types that may carry camera frames (uint8 image.<camera> tensors, raw or zlib); checked before inflating. */
const FRAME_MESSAGE_TYPES: readonly string[] = ["transitions", "episode"];

/** zlib's compressBound(n): the longest stream zlib writes for n bytes; a longer (padded) one is refused uninflated. */
export function compressBound(n: number): number {
  return n + Math.floor(n / 2 ** 12) + Math.floor(n / 2 ** 14) + Math.floor(n / 2 ** 25) + 13;
}
/** A header is a small map; anything bigger is not ours. */
export const MAX_HEADER_BYTES = 1 << 20;
/**
 * Largest |value| a tensor may carry (learner/rlft_learner/transport/protocol.py MAX_ABS_VALUE, where the bound is argued): far
 * beyond any physical reading, small enough that the learner's squares and sums stay finite in float32. The learner
 * refuses a batch holding more, so the robot refuses such a value at push() instead of spooling a batch forever refused.
 */
export const MAX_ABS_VALUE = 1e6;

/** Why `x` may not go on the wire as float32 (non-finite, or beyond ±MAX_ABS_VALUE once rounded), or undefined. */
export function wireValueProblem(x: number): string | undefined {
  if (!Number.isFinite(x)) return `is ${x}; values must be finite`;
  if (Math.abs(Math.fround(x)) > MAX_ABS_VALUE) return `is ${x}; values must be within ±${MAX_ABS_VALUE} (rlft-exp/1), check the sensor and its units`;
  return undefined;
}

type FieldType = "string" | "int" | "bool" | "list" | "nil" | "number" | "map";
/** Required header fields per message type, besides `type`, `protocol` and `seq` (docs/contracts.md, docs/protocol.md). */
const REQUIRED_FIELDS: Record<string, Record<string, FieldType[]>> = {
  hello: { robot_id: ["string"], config_hash: ["string"], obs_names: ["list"], action_names: ["list"], task: ["string"] },
  episode: { episode_id: ["string", "int"], seed: ["int"], task: ["string"], length: ["int"], success: ["bool"] },
  end: { episodes: ["int"] },
  welcome: { learner: ["string"] },
  ack: {},
  error: { reason: ["string"] },
  transitions: {
    robot_id: ["string"], first_seq: ["int"], count: ["int"],
    episode: ["list"], step: ["list"], policy_version: ["list"], intervention_source: ["list"],
  },
  // Request `{robot_id}` or reply `{acked_seq, ...}`: checked in checkOnline.
  heartbeat: {},
  get_policy: {},
  policy: { version: ["string"], kind: ["string"], files: ["list"] },
};
/** Optional fields of the online protocol (docs/protocol.md), checked when present; dataset messages omit them. */
const OPTIONAL_FIELDS: Record<string, Record<string, FieldType[]>> = {
  hello: { mode: ["string"], base_policy_version: ["string", "nil"] },
  welcome: { acked_seq: ["int"], durable_seq: ["int"], latest_policy: ["map", "nil"], heartbeat_sec: ["number"], frame_encodings: ["list"] },
  ack: { acked_seq: ["int"], durable_seq: ["int"] },
  get_policy: { version: ["string", "nil"] },
  policy: { base_version: ["string", "nil"] },
};
/** Tensors an episode must carry, with their rank. */
const EPISODE_TENSORS: [string, number][] = [["obs", 2], ["action", 2], ["reward", 1]];
/** Tensors a transitions batch must carry: name, rank, and the group whose rank-2 tensors share one width. */
const TRANSITION_TENSORS: [string, number, "obs" | "action" | undefined][] = [
  ["obs", 2, "obs"], ["next_obs", 2, "obs"],
  ["base_action", 2, "action"], ["residual_action", 2, "action"], ["action", 2, "action"], ["next_base_action", 2, "action"],
  ["reward", 1, undefined], ["terminated", 1, undefined], ["truncated", 1, undefined], ["intervention", 1, undefined],
];

export type MessageType = "hello" | "episode" | "end" | "welcome" | "ack" | "error" | "transitions" | "heartbeat" | "get_policy" | "policy";

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

/**
 * Camera frames `image.<camera>`: [T, H, W, 3] uint8 rgb8, row-major. Decoded from a zlib-encoded tensor, `zlib` keeps
 * the streams as they came (one per frame), and encoding it again sends them.
 */
export interface ImageTensor {
  shape: number[];
  data: Uint8Array;
  zlib?: readonly Uint8Array[];
}

/** Camera frames to send zlib-encoded: one zlib stream per frame of [T, H, W, 3] (bridge/frameCodec.ts). */
export interface ZlibImageTensor {
  shape: number[];
  zlib: readonly Uint8Array[];
  data?: undefined;
}

/**
 * One decoded message; `tensors` (float32) keeps frame order, camera frames (uint8 `image.<camera>`) are in `images`.
 * A `policy` message has no tensors but raw `files` (header order).
 */
export interface Message {
  header: Header;
  tensors: Map<string, Tensor>;
  images?: Map<string, ImageTensor>;
  files?: Buffer[];
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
export function encodeMessage(header: Record<string, unknown>, tensors: Iterable<[string, Tensor | ImageTensor | ZlibImageTensor]> = []): Buffer[] {
  const head: Record<string, unknown> = { ...header };
  if (head.protocol === undefined) head.protocol = PROTOCOL;
  const specs: { name: string; shape: number[]; dtype: string; encoding?: string; sizes?: number[] }[] = [];
  const frames: Buffer[] = [];
  for (const [name, t] of tensors) {
    if ("zlib" in t && t.zlib !== undefined) {
      if (t.zlib.length !== t.shape[0]) throw new WireError(`tensor ${JSON.stringify(name)}: shape [${t.shape.join(", ")}] needs ${t.shape[0]} zlib streams, one per frame; found ${t.zlib.length}`);
      specs.push({ name, shape: [...t.shape], dtype: IMAGE_DTYPE, encoding: "zlib", sizes: t.zlib.map((z) => z.byteLength) });
      frames.push(Buffer.concat(t.zlib));
      continue;
    }
    if (t.data === undefined) throw new WireError(`tensor ${JSON.stringify(name)} has neither data nor zlib streams`);
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (t.data.length !== n) throw new WireError(`tensor ${JSON.stringify(name)}: shape [${t.shape.join(", ")}] needs ${n} values; found ${t.data.length}`);
    specs.push({ name, shape: [...t.shape], dtype: t.data instanceof Uint8Array ? IMAGE_DTYPE : DTYPE });
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
  // The learner answers `error` with seq -1 when it could not read the offending header (learner/rlft_learner/transport/server.py).
  const seqOk = seq !== undefined && (seq >= 0 || (seq === -1 && header.type === "error"));
  if (!seqOk) throw new WireError(`seq must be a non-negative integer; found ${repr(rawSeq)}`);
  const type = checkFields(header, seq);
  checkOnline(type, header, seq);
  // A policy message carries one raw frame per file (docs/protocol.md), not float32 tensors.
  if (type === "policy") return { header: header as Header, tensors: new Map(), files: checkPolicyFiles(header, frames.slice(1), seq) };
  const specs = checkSpecs(header, frames.length - 1, seq);
  if (!FRAME_MESSAGE_TYPES.includes(type)) {
    const frame = specs.find(([, , dtype]) => dtype === IMAGE_DTYPE);
    if (frame !== undefined) throw new WireError(`tensor ${repr(frame[0])}: camera frames travel only on transitions and episode messages; found one on ${repr(type)}`, { seq });
  }
  const tensors = new Map<string, Tensor>();
  const images = new Map<string, ImageTensor>();
  const inflated = new Map<string, Buffer>(); // a transition's next_image is the next one's image: inflate each stream once
  let declared = 0; // what the zlib frames declare once inflated, checked before anything is inflated
  let streams = 0;
  for (const [name, shape, , sizes] of specs) {
    if (sizes === undefined) continue;
    streams += shape[0];
    if (streams > MAX_FRAMES_PER_MESSAGE) throw new WireError(`tensor ${repr(name)} (camera ${repr(name.slice(name.indexOf(".") + 1))}): the message carries more than ${MAX_FRAMES_PER_MESSAGE} zlib frames; send smaller batches`, { seq });
    declared += shape.reduce((a, b) => a * b, 1);
    if (declared > MAX_INFLATED_BYTES) throw new WireError(`tensor ${repr(name)} (camera ${repr(name.slice(name.indexOf(".") + 1))}): the message's zlib frames declare more than ${MAX_INFLATED_BYTES / 2 ** 20} MiB once inflated; send smaller batches`, { seq });
  }
  specs.forEach(([name, shape, dtype, sizes], i) => {
    const frame = frames[i + 1];
    const n = shape.reduce((a, b) => a * b, 1);
    if (sizes !== undefined) {
      images.set(name, inflateTensor(name, shape, sizes, frame, inflated, seq));
      return;
    }
    if (dtype === IMAGE_DTYPE) {
      if (frame.byteLength !== n) throw new WireError(`tensor ${repr(name)} with shape [${shape.join(", ")}] needs ${n} bytes of uint8; frame has ${frame.byteLength}`, { seq });
      images.set(name, { shape, data: new Uint8Array(frame) });
      return;
    }
    if (frame.byteLength !== 4 * n) throw new WireError(`tensor ${repr(name)} with shape [${shape.join(", ")}] needs ${4 * n} bytes of float32; frame has ${frame.byteLength}`, { seq });
    // Copy: frames from zeromq need not be 4-byte aligned, and the caller keeps its buffer.
    const data = new Float32Array(n);
    new Uint8Array(data.buffer).set(frame);
    let bad = 0;
    let big = 0;
    for (let j = 0; j < n; j++) {
      if (!Number.isFinite(data[j])) bad++;
      else if (Math.abs(data[j]) > MAX_ABS_VALUE) big++;
    }
    if (bad > 0) throw new WireError(`tensor ${repr(name)} has ${bad} non-finite values (NaN/Inf)`, { seq });
    if (big > 0) throw new WireError(`tensor ${repr(name)} has ${big} values beyond ±${MAX_ABS_VALUE}`, { seq });
    tensors.set(name, { shape, data });
  });
  if (type === "episode") checkEpisode(header, tensors, seq);
  if (type === "transitions") {
    checkTransitions(header, tensors, seq);
    checkTransitionFrames(images, header.count as number, seq);
  }
  if (type === "episode") {
    for (const [name, t] of images) {
      if (name.startsWith("next_")) throw new WireError(`episode tensor ${repr(name)}: next_image.<camera> belongs to transitions; an episode carries image.<camera>, one frame per step`, { seq });
      if (t.shape[0] !== header.length) throw new WireError(`episode tensor ${repr(name)}: one frame per step, [${String(header.length)}, H, W, 3]; found [${t.shape.join(", ")}]`, { seq });
    }
  }
  return images.size > 0 ? { header: header as Header, tensors, images } : { header: header as Header, tensors };
}

/** Rows (T × D, rectangular, finite) as a [T, D] tensor. */
export function tensorFromRows(name: string, rows: readonly (readonly number[])[], width?: number): Tensor {
  const d = width ?? rows[0]?.length ?? 0;
  const data = new Float32Array(rows.length * d);
  rows.forEach((row, t) => {
    if (row.length !== d) throw new WireError(`${name}[${t}]: expected ${d} values, found ${row.length}`);
    for (let j = 0; j < d; j++) {
      const problem = wireValueProblem(row[j]);
      if (problem !== undefined) throw new WireError(`${name}[${t}][${j}] ${problem}`);
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

/** Checks of the online protocol (docs/protocol.md) that go beyond a required field's type. */
function checkOnline(type: MessageType, header: Record<string, unknown>, seq: number): void {
  for (const [field, types] of Object.entries(OPTIONAL_FIELDS[type] ?? {})) {
    if (!(field in header)) continue;
    const v = header[field];
    if (!types.some((t) => hasType(v, t))) throw new WireError(`${type}.${field} must be ${types.join(" or ")}; found ${typeName(v)}`, { seq });
  }
  const ackedSeq = header.acked_seq;
  if (ackedSeq !== undefined && isInt(ackedSeq) && ackedSeq < -1) throw new WireError(`${type}.acked_seq must be >= -1; found ${ackedSeq}`, { seq });
  const durableSeq = header.durable_seq;
  if (durableSeq !== undefined && type !== "heartbeat") {
    if (isInt(durableSeq) && durableSeq < -1) throw new WireError(`${type}.durable_seq must be >= -1; found ${durableSeq}`, { seq });
    if (isInt(durableSeq) && isInt(ackedSeq) && durableSeq > ackedSeq) throw new WireError(`${type}.durable_seq ${durableSeq} exceeds acked_seq ${ackedSeq}; a checkpoint holds only what was stored`, { seq });
  }
  if (type === "welcome") {
    const latest = header.latest_policy;
    if (latest !== undefined && latest !== null) {
      const { version, kind } = latest as Record<string, unknown>;
      if (typeof version !== "string" || typeof kind !== "string") throw new WireError(`welcome.latest_policy must be nil or {version: string, kind: string}; found ${repr(latest)}`, { seq });
    }
    const hb = header.heartbeat_sec;
    if (hb !== undefined && !((hb as number) > 0)) throw new WireError(`welcome.heartbeat_sec must be > 0; found ${repr(hb)}`, { seq });
  }
  if (type === "heartbeat") {
    if ("robot_id" in header) {
      if (typeof header.robot_id !== "string") throw new WireError(`heartbeat.robot_id must be string; found ${typeName(header.robot_id)}`, { seq });
      return;
    }
    // The reply: what the learner has stored and learned so far.
    const want: [string, FieldType[]][] = [["acked_seq", ["int"]], ["policy_version", ["string", "nil"]], ["updates", ["int"]], ["online_transitions", ["int"]], ["offline_transitions", ["int"]]];
    for (const [field, types] of want) {
      if (!(field in header)) throw new WireError(`heartbeat header lacks required field ${repr(field)} (a request carries robot_id, a reply acked_seq, policy_version, updates, online_transitions, offline_transitions)`, { seq });
      if (!types.some((t) => hasType(header[field], t))) throw new WireError(`heartbeat.${field} must be ${types.join(" or ")}; found ${typeName(header[field])}`, { seq });
    }
    if ((header.acked_seq as number) < -1) throw new WireError(`heartbeat.acked_seq must be >= -1; found ${String(header.acked_seq)}`, { seq });
    // Optional (learners before durable_seq omit it): the highest seq in the learner's last completed checkpoint.
    if ("durable_seq" in header) {
      const d = header.durable_seq;
      if (!isInt(d)) throw new WireError(`heartbeat.durable_seq must be int; found ${typeName(d)}`, { seq });
      if (d < -1 || d > (header.acked_seq as number)) throw new WireError(`heartbeat.durable_seq must be in -1..acked_seq (${String(header.acked_seq)}); found ${d}`, { seq });
    }
  }
}

/** A policy message's file list against its raw frames: names, sha256 hex, byte counts. */
function checkPolicyFiles(header: Record<string, unknown>, frames: readonly Uint8Array[], seq: number): Buffer[] {
  if ("tensors" in header && !(Array.isArray(header.tensors) && header.tensors.length === 0)) throw new WireError("policy carries files, not tensors; header.tensors must be absent or empty", { seq });
  const files = header.files as unknown[];
  if (files.length !== frames.length) throw new WireError(`policy header lists ${files.length} files but the message has ${frames.length} file frames`, { seq });
  const seen = new Set<string>();
  return files.map((f, i) => {
    if (f === null || typeof f !== "object" || Array.isArray(f)) throw new WireError(`policy.files[${i}] must be a map {name, sha256, bytes}; found ${typeName(f)}`, { seq });
    const { name, sha256, bytes } = f as Record<string, unknown>;
    if (typeof name !== "string" || !/^[A-Za-z0-9_.-]+$/.test(name) || name === "." || name === "..") throw new WireError(`policy.files[${i}].name must be a plain file name; found ${repr(name)}`, { seq });
    if (seen.has(name)) throw new WireError(`policy file ${repr(name)} appears twice`, { seq });
    seen.add(name);
    if (typeof sha256 !== "string" || !/^[0-9a-f]{64}$/.test(sha256)) throw new WireError(`policy.files[${i}].sha256 must be 64 lowercase hex digits; found ${repr(sha256)}`, { seq });
    if (!isInt(bytes) || bytes < 0) throw new WireError(`policy.files[${i}].bytes must be a non-negative int; found ${repr(bytes)}`, { seq });
    const frame = frames[i];
    if (frame.byteLength !== bytes) throw new WireError(`policy file ${repr(name)} should be ${bytes} bytes; its frame has ${frame.byteLength}`, { seq });
    return Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
  });
}

/** Per-transition fields and tensors against `count` (docs/protocol.md § transitions). */
function checkTransitions(header: Record<string, unknown>, tensors: Map<string, Tensor>, seq: number): void {
  const n = header.count as number;
  if (n < 1) throw new WireError(`transitions.count must be >= 1; found ${n}`, { seq });
  if ((header.first_seq as number) < 0) throw new WireError(`transitions.first_seq must be >= 0; found ${String(header.first_seq)}`, { seq });
  const lists: [string, FieldType][] = [["episode", "int"], ["step", "int"], ["policy_version", "string"], ["intervention_source", "string"]];
  for (const [field, t] of lists) {
    const v = header[field] as unknown[];
    if (v.length !== n || !v.every((x) => hasType(x, t))) throw new WireError(`transitions.${field} must be a list of ${n} ${t}s (count); found ${repr(v).slice(0, 200)}`, { seq });
  }
  const dims: Record<string, number | undefined> = {};
  for (const [name, rank, group] of TRANSITION_TENSORS) {
    const t = tensors.get(name);
    if (t === undefined) throw new WireError(`transitions lacks tensor ${repr(name)}; expected ${TRANSITION_TENSORS.map(([x]) => x).join(", ")}`, { seq });
    const s = t.shape;
    const width = group === undefined ? undefined : (dims[group] ??= s[1]);
    if (s.length !== rank || s[0] !== n || (rank === 2 && (s[1] < 1 || s[1] !== width))) {
      const want = rank === 2 ? `[${n}, ${width !== undefined && width >= 1 ? width : ">=1"}]` : `[${n}]`;
      throw new WireError(`transitions tensor ${repr(name)}: shape must be ${want}; found [${s.join(", ")}]`, { seq });
    }
    if (group === undefined && name !== "reward") {
      for (const v of t.data) if (v !== 0 && v !== 1) throw new WireError(`transitions tensor ${repr(name)} must hold 0 or 1; found ${v}`, { seq });
    }
  }
}

/** Each camera's `image.<cam>` and `next_image.<cam>` of a transitions batch: both present, [count, H, W, 3], same size. */
function checkTransitionFrames(images: Map<string, ImageTensor>, n: number, seq: number): void {
  const cams = new Set([...images.keys()].map((k) => k.slice(k.indexOf(".") + 1)));
  for (const cam of [...cams].sort()) {
    const a = images.get(`image.${cam}`);
    const b = images.get(`next_image.${cam}`);
    if (a === undefined || b === undefined) {
      const [have, lack] = b === undefined ? ["image", "next_image"] : ["next_image", "image"];
      throw new WireError(`transitions carry ${have}.${cam} without ${lack}.${cam}: camera ${repr(cam)} needs both, the frame of each obs and of each next_obs (rlft-exp/1 transitions)`, { seq });
    }
    for (const [t, name] of [[a, "image"], [b, "next_image"]] as const) {
      if (t.shape[0] !== n) throw new WireError(`transitions tensor ${name}.${cam}: one frame per transition, [${n}, H, W, 3]; found [${t.shape.join(", ")}]`, { seq });
    }
    if (a.shape[1] !== b.shape[1] || a.shape[2] !== b.shape[2]) throw new WireError(`camera ${repr(cam)}: image is ${a.shape[1]}x${a.shape[2]} but next_image ${b.shape[1]}x${b.shape[2]}; both are frames of the same camera, same size`, { seq });
  }
}

/** A zlib-encoded camera tensor: each of its streams inflated (within its declared size) into one [T, H, W, 3] tensor. */
function inflateTensor(name: string, shape: number[], sizes: number[], frame: Uint8Array, inflated: Map<string, Buffer>, seq: number): ImageTensor {
  const cam = name.slice(name.indexOf(".") + 1);
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total !== frame.byteLength) throw new WireError(`tensor ${repr(name)} (camera ${repr(cam)}, encoding zlib): sizes add up to ${total} bytes; its frame has ${frame.byteLength}`, { seq });
  const size = shape[1] * shape[2] * 3;
  const data = new Uint8Array(shape[0] * size);
  const zlib: Uint8Array[] = [];
  let at = 0;
  sizes.forEach((bytes, i) => {
    const blob = new Uint8Array(frame.buffer, frame.byteOffset + at, bytes).slice();
    at += bytes;
    const key = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString("latin1");
    let raw = inflated.get(key);
    if (raw === undefined) {
      try {
        raw = inflateFrame(blob, size, `camera ${repr(cam)}: ${name} frame ${i} of ${sizes.length} (${shape[1]}x${shape[2]}x3 = ${size} bytes, zlib)`);
      } catch (e) {
        if (e instanceof FrameInflateError) throw new WireError(e.message, { seq });
        throw e;
      }
      inflated.set(key, raw);
    } else if (raw.byteLength !== size) throw new WireError(`camera ${repr(cam)}: ${name} frame ${i} inflates to ${raw.byteLength} bytes; its declared shape needs ${size}`, { seq });
    data.set(raw, i * size);
    zlib.push(blob);
  });
  return { shape, data, zlib };
}

/** A camera tensor's `encoding` and `sizes` (one positive byte count per frame); undefined for a raw one. */
function checkEncoding(name: string, spec: Record<string, unknown>, dtype: unknown, shape: number[], seq: number): number[] | undefined {
  if (!("encoding" in spec) && !("sizes" in spec)) return undefined;
  const encoding = spec.encoding;
  if (dtype !== IMAGE_DTYPE) throw new WireError(`tensor ${repr(name)}: only camera frames (uint8 image.<camera>) may carry an encoding; found encoding ${repr(encoding)} on a ${String(dtype)} tensor`, { seq });
  const cam = name.slice(name.indexOf(".") + 1);
  if (typeof encoding !== "string" || !FRAME_ENCODINGS.includes(encoding)) {
    throw new WireError(`tensor ${repr(name)}: camera ${repr(cam)} frames declare encoding ${repr(encoding)}; rlft-exp/1 knows raw frames (no encoding) and "zlib" (one zlib stream per frame, their byte counts in sizes) — set the robot's learner.frame_encoding to raw or zlib`, { seq });
  }
  if (shape[0] < 1) throw new WireError(`tensor ${repr(name)} (camera ${repr(cam)}, encoding zlib): a zlib tensor carries at least one frame; found shape [${shape.join(", ")}]`, { seq });
  const sizes = spec.sizes;
  if (!Array.isArray(sizes) || sizes.length !== shape[0] || !sizes.every((b) => isInt(b) && b > 0)) {
    throw new WireError(`tensor ${repr(name)} (camera ${repr(cam)}, encoding zlib): sizes must list ${shape[0]} positive byte counts, one per frame; found ${repr(sizes).slice(0, 80)}`, { seq });
  }
  const n = shape[1] * shape[2] * 3;
  const bound = compressBound(n);
  const long = (sizes as number[]).findIndex((b) => b > bound);
  if (long >= 0) throw new WireError(`tensor ${repr(name)} (camera ${repr(cam)}, encoding zlib): frame ${long} is a ${String(sizes[long])}-byte stream, longer than zlib's compressBound (${bound} bytes) for a ${shape[1]}x${shape[2]}x3 frame (${n} bytes); compress each frame once with zlib (bridge/frameCodec.ts), without padding`, { seq });
  return sizes as number[];
}

function checkSpecs(header: Record<string, unknown>, nFrames: number, seq: number): [string, number[], string, number[] | undefined][] {
  const specs = header.tensors ?? [];
  if (!Array.isArray(specs)) throw new WireError(`header.tensors must be a list; found ${typeName(specs)}`, { seq });
  if (specs.length !== nFrames) throw new WireError(`header lists ${specs.length} tensors but the message has ${nFrames} tensor frames`, { seq });
  const out: [string, number[], string, number[] | undefined][] = [];
  const names = new Set<string>();
  specs.forEach((spec: unknown, i) => {
    if (spec === null || typeof spec !== "object" || Array.isArray(spec) || typeof (spec as { name?: unknown }).name !== "string") {
      throw new WireError(`tensors[${i}] must be a map with a string name`, { seq });
    }
    const { name, dtype, shape } = spec as { name: string; dtype?: unknown; shape?: unknown };
    if (!Array.isArray(shape) || !shape.every((d) => isInt(d) && d >= 0)) throw new WireError(`tensor ${repr(name)}: shape must be a list of non-negative ints; found ${repr(shape)}`, { seq });
    if (IMAGE_NAME.test(name) && dtype !== IMAGE_DTYPE) throw new WireError(`tensor ${repr(name)}: camera ${repr(name.split(".")[1])} frames must travel as raw uint8 rgb8 (0..255, [T, H, W, 3]); found dtype ${repr(dtype)} — send the camera's bytes as they are, not normalised floats`, { seq });
    if (dtype === IMAGE_DTYPE) {
      if (!IMAGE_NAME.test(name)) throw new WireError(`tensor ${repr(name.slice(0, 64))}: uint8 tensors are camera frames named image.<camera> (lowercase letters, digits, _); other tensors are ${DTYPE}`, { seq });
      const s = shape as number[];
      if (s.length !== 4 || s[3] !== 3 || s[1] < 1 || s[1] > MAX_IMAGE_SIDE || s[2] < 1 || s[2] > MAX_IMAGE_SIDE) {
        throw new WireError(`tensor ${repr(name)}: camera frames must be [T, H, W, 3] rgb8 with sides in [1, ${MAX_IMAGE_SIDE}]; found [${s.join(", ")}]`, { seq });
      }
    } else if (dtype !== DTYPE) throw new WireError(`tensor ${repr(name)}: dtype must be ${repr(DTYPE)} (${repr(IMAGE_DTYPE)} for image.<camera> frames); found ${repr(dtype)}`, { seq });
    const sizes = checkEncoding(name, spec as Record<string, unknown>, dtype, shape as number[], seq);
    if (names.has(name)) throw new WireError(`tensor name ${repr(name.slice(0, 64))} appears twice`, { seq });
    names.add(name);
    out.push([name, shape as number[], dtype, sizes]);
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
    case "nil":
      return v === null;
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "map":
      return v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Uint8Array);
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
