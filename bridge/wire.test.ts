import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { encode as msgpackEncode } from "@msgpack/msgpack";
import { decodeMessage, encodeMessage, tensorFromRows, tensorToRows, PROTOCOL, WireError, type ImageTensor, type Tensor } from "./wire.ts";

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
