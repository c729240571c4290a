import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { decode as msgpackDecode, encode as msgpackEncode } from "@msgpack/msgpack";
import { deflateSync } from "node:zlib";
import { inflateFrame } from "./frameCodec.ts";
import { compressBound, decodeMessage, encodeMessage, tensorFromRows, tensorToRows, MAX_FRAMES_PER_MESSAGE, PROTOCOL, WireError, type ImageTensor, type Tensor } from "./wire.ts";

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "test", "golden", "rlft-exp-1");

interface Golden {
  description: string;
  frames_b64: string[];
  header?: Record<string, unknown>;
  tensors?: Record<string, { shape: number[]; values: number[] }>;
  expect_error?: boolean;
  error?: string;
}

const goldens = readdirSync(GOLDEN_DIR)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => ({ file: f, g: JSON.parse(readFileSync(join(GOLDEN_DIR, f), "utf8")) as Golden }));

test("the golden directory has valid and invalid frames", () => {
  assert.ok(goldens.some(({ g }) => !g.expect_error), "no valid golden");
  assert.ok(goldens.some(({ g }) => g.expect_error), "no invalid golden");
});

for (const { file, g } of goldens) {
  const frames = g.frames_b64.map((b) => Buffer.from(b, "base64"));
  if (g.expect_error) {
    test(`golden ${file} (${g.description}) is rejected with a WireError`, () => {
      assert.throws(() => decodeMessage(frames), WireError);
      // Hostile zlib frames: the reason names the camera and what is wrong, as the learner's does.
      if (file.startsWith("bad-zlib-")) assert.throws(() => decodeMessage(frames), (e: Error) => e.message.includes(g.error!) && e.message.includes("front"));
    });
    continue;
  }
  test(`golden ${file} (${g.description}) decodes like the Python side, and re-encodes byte for byte`, () => {
    const { header, tensors, images } = decodeMessage(frames);
    assert.deepEqual(header, g.header);
    // Camera frames (uint8 image.<camera>) are decoded into `images`, everything else into `tensors`; frame order kept.
    const all = new Map<string, { shape: number[]; data: Float32Array | Uint8Array }>([...tensors, ...(images ?? [])]);
    const order = (header.tensors as { name: string }[] | undefined)?.map((s) => s.name) ?? [];
    assert.deepEqual([...all.keys()].sort(), Object.keys(g.tensors ?? {}).sort());
    for (const [name, want] of Object.entries(g.tensors ?? {})) {
      const t = all.get(name)!;
      assert.deepEqual(t.shape, want.shape);
      assert.deepEqual(Array.from(t.data), want.values);
    }
    const again = encodeMessage(header, order.map((n) => [n, all.get(n)!] as [string, Tensor | ImageTensor]));
    assert.equal(again.length, frames.length);
    // A Python float with an integral value (welcome.heartbeat_sec 2.0) decodes to a JS number that msgpack-js
    // re-encodes as an int: the header must then decode the same, the tensor frames still match byte for byte.
    if (!again[0].equals(frames[0])) assert.deepEqual(decodeMessage(again).header, header, "frame 0 differs and decodes differently");
    again.slice(1).forEach((f, i) => assert.ok(f.equals(frames[i + 1]), `frame ${i + 1} differs`));
  });
}

test("encode → decode round trip keeps header, tensor order and values", () => {
  const obs = tensorFromRows("obs", [[1, 2, 3], [4, 5, 6]]);
  const action = tensorFromRows("action", [[0.5], [-0.5]]);
  const reward: Tensor = { shape: [2], data: Float32Array.from([0, 1]) };
  const frames = encodeMessage({ type: "episode", seq: 9, episode_id: 12, seed: 1, task: "reach", length: 2, success: false }, [["obs", obs], ["action", action], ["reward", reward]]);
  const { header, tensors } = decodeMessage(frames);
  assert.equal(header.protocol, PROTOCOL);
  assert.equal(header.seq, 9);
  assert.equal(header.episode_id, 12);
  assert.deepEqual([...tensors.keys()], ["obs", "action", "reward"]);
  assert.deepEqual(tensorToRows(tensors.get("obs")!), [[1, 2, 3], [4, 5, 6]]);
  assert.deepEqual(Array.from(tensors.get("reward")!.data), [0, 1]);
});

test("frames that are views into a larger, unaligned buffer decode", () => {
  const [head, data] = encodeMessage({ type: "episode", seq: 1, episode_id: "e", seed: 0, task: "t", length: 1, success: true }, [
    ["obs", tensorFromRows("obs", [[1.5]])],
  ]);
  const big = Buffer.alloc(data.length + 3);
  data.copy(big, 3);
  // Episode lacks action/reward → rejected, but only after the unaligned tensor decoded.
  assert.throws(() => decodeMessage([head, big.subarray(3)]), /lacks tensor "action"/);
});

const header = (h: Record<string, unknown>) => Buffer.from(msgpackEncode(h));
const hello = { type: "hello", protocol: PROTOCOL, seq: 1, robot_id: "r", config_hash: "c", obs_names: ["a"], action_names: ["b"], task: "t" };

const { task: _task, ...withoutTask } = hello;

test("malformed messages are rejected with what was expected and found", () => {
  const cases: [Buffer[], RegExp][] = [
    [[], /empty message/],
    [[Buffer.from([0xc1])], /not valid msgpack/],
    [[Buffer.from(msgpackEncode([1, 2]))], /must be a msgpack map; found list/],
    [[Buffer.from([0x81, 0x01, 0xa1, 0x78])], /keys must be strings/], // {1: "x"},
    [[header({ ...hello, protocol: "rlft-exp/0" })], /protocol must be "rlft-exp\/1"; found "rlft-exp\/0"/],
    [[header({ ...hello, seq: -3 })], /seq must be a non-negative integer/],
    [[header({ ...hello, seq: "1" })], /seq must be a non-negative integer/],
    [[header({ ...hello, type: "bye" })], /unknown message type "bye"/],
    [[header(withoutTask)], /lacks required field "task"/],
    [[header({ ...hello, task: null })], /hello\.task must be string; found nil/],
    [[header({ ...hello, obs_names: [] })], /obs_names must be a non-empty list of strings/],
    [[header({ type: "end", protocol: PROTOCOL, seq: 1, episodes: true })], /end\.episodes must be int; found bool/],
    [[header({ type: "end", protocol: PROTOCOL, seq: 1, episodes: 1.5 })], /end\.episodes must be int; found float/],
    [[header({ ...hello, tensors: [{ name: "x", shape: [1], dtype: "float32" }] })], /lists 1 tensors but the message has 0 tensor frames/],
    [[header({ ...hello, tensors: [{ name: "x", shape: [1], dtype: "float64" }] }), Buffer.alloc(4)], /dtype must be "float32"/],
    [[header({ ...hello, tensors: [{ name: "x", shape: [-1], dtype: "float32" }] }), Buffer.alloc(4)], /shape must be a list of non-negative ints/],
    [[header({ ...hello, tensors: [{ name: "x", shape: [1], dtype: "float32" }, { name: "x", shape: [1], dtype: "float32" }] }), Buffer.alloc(4), Buffer.alloc(4)], /appears twice/],
    [[header({ ...hello, tensors: [{ name: "x", shape: [1], dtype: "float32" }] }), Buffer.from(new Float32Array([NaN]).buffer)], /1 non-finite values/],
    [[header({ ...hello, tensors: [{ name: "x", shape: [1], dtype: "float32" }] }), Buffer.from(new Float32Array([3e38]).buffer)], /1 values beyond ±1000000/],
    [[header({ type: "episode", protocol: PROTOCOL, seq: 1, episode_id: "e", seed: 0, task: "t", length: 0, success: true })], /length must be >= 1/],
  ];
  for (const [frames, re] of cases) assert.throws(() => decodeMessage(frames), (e: unknown) => e instanceof WireError && re.test(e.message), String(re));
});

test("an episode whose tensor shapes disagree with its length is rejected", () => {
  const frames = encodeMessage({ type: "episode", seq: 4, episode_id: "e", seed: 0, task: "t", length: 2, success: true }, [
    ["obs", tensorFromRows("obs", [[1], [2]])],
    ["action", tensorFromRows("action", [[1]])],
    ["reward", { shape: [2], data: new Float32Array(2) }],
  ]);
  assert.throws(() => decodeMessage(frames), (e: unknown) => e instanceof WireError && e.seq === 4 && /tensor "action": shape must be \[2, >=1\]; found \[1, 1\]/.test(e.message));
});

test("the learner's error reply with seq -1 (unreadable request) decodes", () => {
  const decoded = decodeMessage([header({ type: "error", protocol: PROTOCOL, seq: -1, reason: "bad" })]);
  assert.equal(decoded.header.seq, -1);
  assert.throws(() => decodeMessage([header({ type: "ack", protocol: PROTOCOL, seq: -1 })]), /seq must be a non-negative integer/);
});

// -- zlib camera frames: what is refused before anything is inflated ---------------------------------------------------

/** The zlib transitions golden (image.front then next_image.front last, [2, 2, 3, 3]) with its header changed by `edit`. */
function zlibGolden(edit: (h: Record<string, unknown>, specs: Record<string, unknown>[]) => void, last?: (f: Buffer[]) => void): Buffer[] {
  const frames = goldens.find(({ file }) => file === "transitions-images-zlib.json")!.g.frames_b64.map((b) => Buffer.from(b, "base64"));
  const h = msgpackDecode(frames[0]) as Record<string, unknown>;
  edit(h, h.tensors as Record<string, unknown>[]);
  frames[0] = Buffer.from(msgpackEncode(h));
  last?.(frames);
  return frames;
}

test("compressBound is zlib's; a stream padded past it is refused uninflated, naming the camera", () => {
  assert.equal(compressBound(18), 31);
  assert.equal(compressBound(84 * 84 * 3), 21168 + 5 + 1 + 13);
  const stream = deflateSync(Buffer.alloc(2 * 3 * 3, 7), { level: 1 });
  const padded = Buffer.concat([stream.subarray(0, 2), Buffer.from("000000ffff".repeat(100), "hex"), stream.subarray(2)]);
  const frames = zlibGolden((_h, specs) => {
    specs[specs.length - 1].sizes = [padded.byteLength, padded.byteLength];
  }, (f) => (f[f.length - 1] = Buffer.concat([padded, padded])));
  assert.throws(() => decodeMessage(frames), (e: Error) => e instanceof WireError && /next_image.front" \(camera "front", encoding zlib\): frame 0 is a 511-byte stream, longer than zlib's compressBound \(31 bytes\)/.test(e.message));
});

test("a zlib tensor carries at least one frame, and a message at most MAX_FRAMES_PER_MESSAGE", () => {
  const empty = zlibGolden((_h, specs) => Object.assign(specs[specs.length - 1], { shape: [0, 2, 3, 3], sizes: [] }), (f) => (f[f.length - 1] = Buffer.alloc(0)));
  assert.throws(() => decodeMessage(empty), /next_image.front" \(camera "front", encoding zlib\): a zlib tensor carries at least one frame/);
  assert.equal(MAX_FRAMES_PER_MESSAGE, 8192);
  const many = zlibGolden((_h, specs) => {
    for (const s of specs.slice(-2)) Object.assign(s, { shape: [MAX_FRAMES_PER_MESSAGE / 2 + 1, 1, 1, 3], sizes: Array(MAX_FRAMES_PER_MESSAGE / 2 + 1).fill(1) });
  });
  assert.throws(() => decodeMessage(many), /next_image.front" \(camera "front"\): the message carries more than 8192 zlib frames; send smaller batches/);
});

test("camera frames on a message type that carries none are refused before inflating", () => {
  // Streams that would fail to inflate: the type is refused first.
  const frames = zlibGolden((h) => Object.assign(h, { type: "heartbeat", robot_id: "r" }), (f) => (f[f.length - 1] = Buffer.alloc(f[f.length - 1].byteLength, 0xff)));
  assert.throws(() => decodeMessage(frames), /tensor "image.front": camera frames travel only on transitions and episode messages; found one on "heartbeat"/);
});

test("an inflated frame is an exact-size copy, not a view of zlib's output chunk", () => {
  const m = decodeMessage(zlibGolden(() => undefined));
  for (const t of m.images!.values()) assert.equal(t.data.buffer.byteLength, t.data.byteLength);
  const raw = inflateFrame(deflateSync(Buffer.alloc(18, 7)), 18, "camera front");
  assert.equal(raw.buffer.byteLength, 18); // zlib's own output is a view of a 16 KiB chunk
});

test("duplicate tensor names among many specs are found in linear time", () => {
  const specs = Array.from({ length: 24000 }, (_, i) => ({ name: `t${i}`, shape: [0], dtype: "float32" }));
  specs.push({ name: "t5", shape: [0], dtype: "float32" });
  const frames = [header({ type: "heartbeat", protocol: PROTOCOL, seq: 1, robot_id: "r", tensors: specs }), ...specs.map(() => Buffer.alloc(0))];
  const t0 = process.cpuUsage();
  assert.throws(() => decodeMessage(frames), /tensor name "t5" appears twice/);
  const used = process.cpuUsage(t0);
  assert.ok(used.user + used.system < 2e6, `took ${used.user + used.system} µs`);
});
