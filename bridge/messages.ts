/**
 * Typed encoders and decoders for the online messages of `rlft-exp/1` (docs/protocol.md): hello/welcome,
 * transitions/ack, heartbeat, get_policy/policy. Generic validation lives in wire.ts; these map headers to types.
 */
import { decodeMessage, encodeMessage, WireError, wireValueProblem, type ImageTensor, type Message, type Tensor, type ZlibImageTensor } from "./wire.ts";
import type { Transition, TransitionFrame } from "../contracts/Transition.ts";

/** `hello` of an online robot. */
export interface HelloFields {
  robotId: string;
  configHash: string;
  obsNames: readonly string[];
  actionNames: readonly string[];
  task: string;
  basePolicyVersion: string | null;
}

/** The learner's `welcome` to an online robot. */
export interface Welcome {
  seq: number;
  learner: string;
  /** Highest transition seq of this robot the learner has stored; -1 if none. */
  ackedSeq: number;
  /** Highest seq of this robot in the learner's last completed checkpoint (-1 if none); see {@link durableOf}. */
  durableSeq: number;
  latestPolicy: { version: string; kind: string } | null;
  heartbeatSec: number | undefined;
  /** Camera frame encodings the learner takes besides raw (`["zlib"]`); empty from learners before them. */
  frameEncodings: string[];
}

/** The learner's `heartbeat` reply. */
export interface HeartbeatReply {
  seq: number;
  ackedSeq: number;
  /** See {@link Welcome.durableSeq}. */
  durableSeq: number;
  policyVersion: string | null;
  updates: number;
  onlineTransitions: number;
  offlineTransitions: number;
}

/** One file of a policy message. */
export interface PolicyFile {
  name: string;
  sha256: string;
  bytes: number;
  data: Buffer;
}

/** A `policy` message: a package as header + raw files. */
export interface PolicyMessage {
  seq: number;
  version: string;
  kind: string;
  baseVersion: string | null;
  files: PolicyFile[];
}

/** A decoded `transitions` batch. */
export interface TransitionBatch {
  seq: number;
  robotId: string;
  firstSeq: number;
  transitions: Transition[];
}

/** The PUB topic frame of policy publications. */
export const POLICY_TOPIC = "policy";

/**
 * `durable_seq` of a welcome, ack or heartbeat reply: what survives a hard kill of the learner, so what the robot may
 * delete from its spool. A learner that predates the field kept nothing beyond its acks, so absent means `acked_seq`.
 */
export function durableOf(h: Record<string, unknown>): number {
  return (h.durable_seq as number | undefined) ?? (h.acked_seq as number);
}

/** Encodes an online `hello`. */
export function encodeHello(seq: number, h: HelloFields): Buffer[] {
  return encodeMessage({
    type: "hello", seq, robot_id: h.robotId, config_hash: h.configHash, obs_names: [...h.obsNames], action_names: [...h.actionNames],
    task: h.task, mode: "online", base_policy_version: h.basePolicyVersion,
  });
}

/** A `welcome` that must carry the online fields (acked_seq). */
export function toWelcome(m: Message): Welcome {
  const h = expectType(m, "welcome");
  if (h.acked_seq === undefined) throw new WireError("welcome lacks acked_seq; is the learner serving rlft-exp/1 online mode (`python3 -m rlft_learner serve`)?", { seq: h.seq });
  return {
    seq: h.seq,
    learner: h.learner as string,
    ackedSeq: h.acked_seq as number,
    durableSeq: durableOf(h),
    latestPolicy: (h.latest_policy as Welcome["latestPolicy"] | undefined) ?? null,
    heartbeatSec: h.heartbeat_sec as number | undefined,
    frameEncodings: ((h.frame_encodings as unknown[] | undefined) ?? []).filter((e): e is string => typeof e === "string"),
  };
}

/** `ack {acked_seq, durable_seq}` of a transitions batch. */
export function toAck(m: Message): { seq: number; ackedSeq: number; durableSeq: number } {
  const h = expectType(m, "ack");
  if (h.acked_seq === undefined) throw new WireError("ack of a transitions batch lacks acked_seq", { seq: h.seq });
  return { seq: h.seq, ackedSeq: h.acked_seq as number, durableSeq: durableOf(h) };
}

/** Encodes a `heartbeat` request. */
export function encodeHeartbeat(seq: number, robotId: string): Buffer[] {
  return encodeMessage({ type: "heartbeat", seq, robot_id: robotId });
}

/** The learner's `heartbeat` reply (not a request). */
export function toHeartbeatReply(m: Message): HeartbeatReply {
  const h = expectType(m, "heartbeat");
  if (h.acked_seq === undefined) throw new WireError("expected a heartbeat reply (acked_seq, ...); found a heartbeat request", { seq: h.seq });
  return {
    seq: h.seq,
    ackedSeq: h.acked_seq as number,
    durableSeq: durableOf(h),
    policyVersion: h.policy_version as string | null,
    updates: h.updates as number,
    onlineTransitions: h.online_transitions as number,
    offlineTransitions: h.offline_transitions as number,
  };
}

/** Encodes a `get_policy` request; without `version` the learner sends its latest. */
export function encodeGetPolicy(seq: number, version?: string): Buffer[] {
  return encodeMessage(version === undefined ? { type: "get_policy", seq } : { type: "get_policy", seq, version });
}

/** Encodes a `policy` message (header + one raw frame per file); `topic` prefixes the PUB topic frame. */
export function encodePolicy(seq: number, p: { version: string; kind: string; baseVersion: string | null; files: readonly { name: string; data: Uint8Array; sha256: string }[] }, options: { topic?: boolean } = {}): Buffer[] {
  const frames = encodeMessage({
    type: "policy", seq, version: p.version, kind: p.kind, base_version: p.baseVersion,
    files: p.files.map((f) => ({ name: f.name, sha256: f.sha256, bytes: f.data.byteLength })),
  });
  frames.push(...p.files.map((f) => Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength)));
  return options.topic ? [Buffer.from(POLICY_TOPIC), ...frames] : frames;
}

/** A decoded `policy` message. */
export function toPolicy(m: Message): PolicyMessage {
  const h = expectType(m, "policy");
  const files = (h.files as { name: string; sha256: string; bytes: number }[]).map((f, i) => ({ name: f.name, sha256: f.sha256, bytes: f.bytes, data: m.files![i] }));
  return { seq: h.seq, version: h.version as string, kind: h.kind as string, baseVersion: (h.base_version as string | null | undefined) ?? null, files };
}

/** Decodes a PUB publication `[topic, header, ...files]`. */
export function decodePolicyPublication(frames: readonly Uint8Array[]): PolicyMessage {
  if (frames.length < 2 || Buffer.from(frames[0]).toString() !== POLICY_TOPIC) throw new WireError(`a policy publication is [${JSON.stringify(POLICY_TOPIC)}, header, ...files]; found ${frames.length} frames starting with ${JSON.stringify(frames.length > 0 ? Buffer.from(frames[0]).subarray(0, 32).toString() : "")}`);
  return toPolicy(decodeMessage(frames.slice(1)));
}

/**
 * Encodes a `transitions` batch; dims are taken from the first transition and every other must match. With `zlib`
 * (a frame's rgb bytes → its zlib stream, bridge/frameCodec.ts), camera frames go zlib-encoded, else raw.
 */
export function encodeTransitions(seq: number, robotId: string, firstSeq: number, ts: readonly Transition[], options: { zlib?: (rgb: Uint8Array) => Uint8Array } = {}): Buffer[] {
  const n = ts.length;
  if (n < 1) throw new WireError("a transitions batch needs at least one transition");
  const obsDim = ts[0].obs.length;
  const aDim = ts[0].baseAction.length;
  const rows = (name: string, width: number, get: (t: Transition) => readonly number[]): [string, Tensor] => {
    const data = new Float32Array(n * width);
    ts.forEach((t, i) => {
      const v = get(t);
      if (v.length !== width) throw new WireError(`transition ${i} (episode ${t.episode} step ${t.step}): ${name} has ${v.length} values; expected ${width}`);
      for (let j = 0; j < width; j++) {
        const problem = wireValueProblem(v[j]);
        if (problem !== undefined) throw new WireError(`transition ${i} (episode ${t.episode} step ${t.step}): ${name}[${j}] ${problem}`);
        data[i * width + j] = v[j];
      }
    });
    return [name, { shape: [n, width], data }];
  };
  const column = (name: string, get: (t: Transition) => number): [string, Tensor] => {
    const data = Float32Array.from(ts, get);
    for (let i = 0; i < n; i++) {
      const problem = wireValueProblem(data[i]);
      if (problem !== undefined) throw new WireError(`transition ${i}: ${name} ${problem}`);
    }
    return [name, { shape: [n], data }];
  };
  const tensors: [string, Tensor][] = [
    rows("obs", obsDim, (t) => t.obs),
    rows("next_obs", obsDim, (t) => t.nextObs),
    rows("base_action", aDim, (t) => t.baseAction),
    rows("residual_action", aDim, (t) => t.residualAction),
    rows("action", aDim, (t) => t.action),
    rows("next_base_action", aDim, (t) => t.nextBaseAction),
    column("reward", (t) => t.reward),
    column("terminated", (t) => (t.terminated ? 1 : 0)),
    column("truncated", (t) => (t.truncated ? 1 : 0)),
    column("intervention", (t) => (t.intervention ? 1 : 0)),
  ];
  for (const t of ts) {
    if (!Number.isInteger(t.episode) || !Number.isInteger(t.step)) throw new WireError(`transition episode/step must be integers; found ${t.episode}/${t.step}`);
  }
  return encodeMessage(
    {
      type: "transitions", seq, robot_id: robotId, first_seq: firstSeq, count: n,
      episode: ts.map((t) => t.episode), step: ts.map((t) => t.step),
      policy_version: ts.map((t) => t.policyVersion), intervention_source: ts.map((t) => t.interventionSource),
    },
    [...tensors, ...frameTensors(ts, options.zlib)],
  );
}

/**
 * `image.<cam>` and `next_image.<cam>` [N, H, W, 3] uint8 of a batch whose first transition carries frames (none
 * otherwise: the batch's bytes are those of a camera-less session). Every transition must carry the same cameras at
 * the same size; the error names the transition and the camera.
 */
function frameTensors(ts: readonly Transition[], zlib?: (rgb: Uint8Array) => Uint8Array): [string, ImageTensor | ZlibImageTensor][] {
  const first = ts[0].images;
  if (first === undefined) {
    const i = ts.findIndex((t) => t.images !== undefined || t.nextImages !== undefined);
    if (i >= 0) throw new WireError(`transition ${i} carries camera frames but transition 0 of its batch does not; a session sends frames on every transition or on none`);
    return [];
  }
  const out: [string, ImageTensor | ZlibImageTensor][] = [];
  for (const cam of Object.keys(first).sort()) {
    const { width, height } = first[cam];
    const size = width * height * 3;
    for (const [field, name] of [["images", "image"], ["nextImages", "next_image"]] as const) {
      const data = zlib ? undefined : new Uint8Array(ts.length * size);
      const streams: Uint8Array[] = [];
      ts.forEach((t, i) => {
        const f: TransitionFrame | undefined = t[field]?.[cam];
        const where = `transition ${i} (episode ${t.episode} step ${t.step})`;
        if (f === undefined) throw new WireError(`${where} lacks ${name}.${cam}: every transition of a session with cameras carries each camera's frame of obs and of next_obs`);
        if (f.width !== width || f.height !== height || f.rgb.byteLength !== size) throw new WireError(`${where}: ${name}.${cam} is ${f.width}x${f.height} with ${f.rgb.byteLength} bytes; camera ${JSON.stringify(cam)} sends ${width}x${height} rgb8 (${size} bytes) in this batch — keep one size per camera`);
        if (zlib) streams.push(zlib(f.rgb));
        else data!.set(f.rgb, i * size);
      });
      const shape = [ts.length, height, width, 3];
      out.push([`${name}.${cam}`, data ? { shape, data } : { shape, zlib: streams }]);
    }
  }
  const names = new Set(Object.keys(first));
  ts.forEach((t, i) => {
    const extra = Object.keys(t.images ?? {}).concat(Object.keys(t.nextImages ?? {})).filter((c) => !names.has(c));
    if (extra.length > 0) throw new WireError(`transition ${i} carries frames of camera ${JSON.stringify(extra[0])} that transition 0 of its batch does not; every transition carries the same cameras`);
  });
  return out;
}

/** Per-transition frames of `images` (`image.<cam>` or `next_image.<cam>` tensors) at row `i`, or undefined if none. */
function framesAt(images: Message["images"], prefix: "image." | "next_image.", i: number): Record<string, TransitionFrame> | undefined {
  if (images === undefined) return undefined;
  const out: Record<string, TransitionFrame> = {};
  for (const [name, t] of images) {
    if (!name.startsWith(prefix)) continue;
    const [, height, width] = t.shape;
    const size = height * width * 3;
    out[name.slice(prefix.length)] = { width, height, rgb: t.data.slice(i * size, (i + 1) * size) };
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A decoded `transitions` batch, one {@link Transition} per row. */
export function toTransitions(m: Message): TransitionBatch {
  const h = expectType(m, "transitions");
  const n = h.count as number;
  const row = (name: string, i: number): number[] => {
    const t = m.tensors.get(name)!;
    const d = t.shape[1];
    return Array.from(t.data.subarray(i * d, (i + 1) * d));
  };
  const col = (name: string, i: number): number => m.tensors.get(name)!.data[i];
  const transitions: Transition[] = Array.from({ length: n }, (_, i) => ({
    episode: (h.episode as number[])[i],
    step: (h.step as number[])[i],
    obs: row("obs", i),
    nextObs: row("next_obs", i),
    baseAction: row("base_action", i),
    residualAction: row("residual_action", i),
    action: row("action", i),
    nextBaseAction: row("next_base_action", i),
    reward: col("reward", i),
    terminated: col("terminated", i) === 1,
    truncated: col("truncated", i) === 1,
    intervention: col("intervention", i) === 1,
    interventionSource: (h.intervention_source as string[])[i],
    policyVersion: (h.policy_version as string[])[i],
    ...(m.images !== undefined ? { images: framesAt(m.images, "image.", i), nextImages: framesAt(m.images, "next_image.", i) } : {}),
  }));
  return { seq: h.seq, robotId: h.robot_id as string, firstSeq: h.first_seq as number, transitions };
}

function expectType(m: Message, type: string): Message["header"] {
  if (m.header.type !== type) throw new WireError(`expected a ${type} message; found ${m.header.type}`, { seq: m.header.seq });
  return m.header;
}

/**
 * Why `t` cannot be sent, or undefined when it is fine: widths and values, and its frames — exactly `cameras` (none
 * when empty), each rgb8 at the size of that camera's first frame (remembered in `sizes`).
 */
export function transitionProblem(t: Transition, obsDim: number, aDim: number, cameras: readonly string[] = [], sizes = new Map<string, string>()): string | undefined {
  if (t === null || typeof t !== "object") return "not a transition object";
  for (const [name, v, n] of [["obs", t.obs, obsDim], ["nextObs", t.nextObs, obsDim], ["baseAction", t.baseAction, aDim], ["residualAction", t.residualAction, aDim], ["action", t.action, aDim], ["nextBaseAction", t.nextBaseAction, aDim]] as const) {
    if (!Array.isArray(v) || v.length !== n) return `${name} must have ${n} values; found ${Array.isArray(v) ? v.length : typeof v}`;
    for (const x of v) {
      const problem = typeof x === "number" ? wireValueProblem(x) : `is ${typeof x}`;
      if (problem !== undefined) return `${name} value ${problem}`;
    }
  }
  const rewardProblem = typeof t.reward === "number" ? wireValueProblem(t.reward) : "is not a number";
  if (rewardProblem !== undefined) return `reward ${rewardProblem}`;
  if (!Number.isInteger(t.episode) || !Number.isInteger(t.step)) return `episode/step must be integers; found ${t.episode}/${t.step}`;
  if (typeof t.policyVersion !== "string" || typeof t.interventionSource !== "string") return "policyVersion and interventionSource must be strings";
  return framesProblem(t, cameras, sizes);
}

function framesProblem(t: Transition, cameras: readonly string[], sizes: Map<string, string>): string | undefined {
  for (const [field, frames] of [["images", t.images], ["nextImages", t.nextImages]] as const) {
    if (cameras.length === 0) {
      if (frames !== undefined) return `${field} carries camera frames but this session sends none (learner.cameras is empty); list the cameras in learner.cameras to send them`;
      continue;
    }
    const got = Object.keys(frames ?? {}).sort();
    const want = [...cameras].sort();
    if (got.join(",") !== want.join(",")) return `${field} holds frames of [${got.join(", ")}]; this session sends cameras [${want.join(", ")}] (learner.cameras) — a camera that has not delivered a frame yet leaves its transitions out`;
    for (const cam of want) {
      const f = frames![cam];
      const size = `${f.width}x${f.height}`;
      if (!(f.rgb instanceof Uint8Array) || !(f.width >= 1 && f.height >= 1) || f.rgb.byteLength !== f.width * f.height * 3) return `${field}.${cam} must be rgb8 bytes, ${size} x 3 = ${f.width * f.height * 3}; found ${f.rgb?.byteLength} bytes`;
      const first = sizes.get(cam) ?? (sizes.set(cam, size), size);
      if (first !== size) return `${field}.${cam} is ${size}; camera ${JSON.stringify(cam)} sent ${first} before — keep one size per camera (the learner stores one)`;
    }
  }
  return undefined;
}
