import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeVlaFixture } from "../testing/vlaFixture.ts";
import { VlaPolicy } from "./VlaPolicy.ts";
import { VlaPackage } from "./VlaPackage.ts";
import { preprocessFrame } from "./preprocess.ts";
import { gaussian } from "../gaussian.ts";
import { PolicyPackageError } from "../PolicyPackageError.ts";
import { VlaActor } from "../actors/VlaActor.ts";
import { maxAbs } from "../testing/maxAbs.ts";

interface Vectors {
  instructions: string[];
  input_ids: number[][];
  state: number[][];
  frames: Record<string, number[][]>;
  images: Record<string, number[][]>;
  prefix: number[][];
  noise: number[][][];
  velocity_t1: number[][][];
  actions: number[][][];
}

let fixture: { dir: string; cleanup(): Promise<void> };
let vec: Vectors;
const scratch: string[] = [];

before(async () => {
  fixture = await makeVlaFixture();
  vec = JSON.parse(await readFile(join(fixture.dir, "test_vectors.json"), "utf8")) as Vectors;
});
after(async () => {
  await fixture?.cleanup();
  for (const d of scratch) await rm(d, { recursive: true, force: true });
});


test("preprocessing (crop, bilinear resize, normalise) matches the learner's torch transform", async () => {
  const pkg = await VlaPackage.load(fixture.dir);
  const t = pkg.transforms[0];
  for (let v = 0; v < vec.state.length; v++) {
    const n = vec.frames[t.name][v].length / 3;
    const side = Math.round(Math.sqrt(n));
    const x = preprocessFrame({ width: side, height: side, data: Uint8Array.from(vec.frames[t.name][v]) }, t);
    assert.ok(maxAbs(x, vec.images[t.input][v]) < 1e-5, `frame ${v}`);
  }
});

test("preprocessing arithmetic on a hand-made frame: 2×2 → 1×1 averages, NHWC interleaves", () => {
  const data = Uint8Array.from([0, 0, 0, 255, 255, 255, 255, 255, 255, 0, 0, 0]);
  const one = preprocessFrame({ width: 2, height: 2, data }, { crop: [0, 0, 2, 2], height: 1, width: 1, mean: [0, 0, 0], std: [1, 1, 1], layout: "NCHW" });
  assert.deepEqual(Array.from(one), [0.5, 0.5, 0.5]);
  const same = preprocessFrame({ width: 2, height: 2, data }, { crop: [0, 1, 2, 1], height: 2, width: 1, mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5], layout: "NHWC" });
  assert.deepEqual(Array.from(same), [1, 1, 1, -1, -1, -1]);
  assert.throws(() => preprocessFrame({ width: 2, height: 2, data }, { crop: [0, 0, 3, 2], height: 1, width: 1, mean: [0, 0, 0], std: [1, 1, 1], layout: "NCHW" }), /does not fit a 2×2 frame/);
});

test("letterbox by hand: 2×4 into 4×4 keeps the aspect; centred (openpi) pads a row above and below, bottom_right (LeRobot) two above", () => {
  const data = Uint8Array.from({ length: 2 * 4 * 3 }, (_, i) => Math.floor(i / 3) * 10);
  const base = { crop: [0, 0, 2, 4], height: 4, width: 4, mean: [0, 0, 0], std: [1, 1, 1], layout: "NCHW" as const, resize: "letterbox" as const, padValue: 0.5 };
  const centre = preprocessFrame({ width: 4, height: 2, data }, { ...base, padAlign: "center" });
  const px = (x: Float32Array, y: number) => Array.from(x.slice(y * 4, y * 4 + 4)).map((v) => Math.round(v * 255));
  assert.deepEqual(Array.from(centre.slice(0, 4)), [0.5, 0.5, 0.5, 0.5], "row 0: the fill");
  assert.deepEqual(px(centre, 1), [0, 10, 20, 30]);
  assert.deepEqual(px(centre, 2), [40, 50, 60, 70]);
  assert.deepEqual(Array.from(centre.slice(12, 16)), [0.5, 0.5, 0.5, 0.5]);
  const br = preprocessFrame({ width: 4, height: 2, data }, { ...base, padAlign: "bottom_right" });
  assert.deepEqual(Array.from(br.slice(0, 8)), new Array(8).fill(0.5));
  assert.deepEqual(px(br, 2), [0, 10, 20, 30]);
});

test("ONNX (onnxruntime-node) agrees with PyTorch within 1e-4: prefix, one expert step, the whole 10-step chunk", async () => {
  const policy = await VlaPolicy.create(fixture.dir);
  try {
    const pkg = policy.package;
    const t = pkg.transforms[0];
    const side = Math.round(Math.sqrt(vec.frames[t.name][0].length / 3));
    for (let v = 0; v < vec.state.length; v++) {
      const raw = vec.state[v].map((s, i) => s * pkg.state.scale[i] + pkg.state.offset[i]);
      const input = { state: raw, instruction: vec.instructions[v], images: { [t.name]: { width: side, height: side, data: Uint8Array.from(vec.frames[t.name][v]) } }, noise: Float32Array.from(vec.noise[v].flat()) };
      const { encoding } = policy.prefixFeeds(input);
      assert.deepEqual(encoding.ids, vec.input_ids[v], "tokenizer ids equal the learner's");
      const chunk = await policy.sampleChunk(input);
      // The fixture predicts delta actions: each joint's chunk is relative to its measured position.
      const rel = pkg.json.action.relative_to_state;
      assert.ok(rel && rel.every((n) => n !== null), "the synthetic package uses delta actions for every joint");
      const expected = vec.actions[v].flat().map((x, k) => {
        const a = k % pkg.json.action.names.length;
        const base = raw[pkg.json.state.names.indexOf(rel[a]!)];
        return Math.max(-1, Math.min(1, x)) * pkg.actions.scale[a] + pkg.actions.offset[a] + base;
      });
      assert.ok(maxAbs(chunk.actions.flat(), expected) < 1e-4, `chunk ${v}: ${maxAbs(chunk.actions.flat(), expected)}`);
      assert.equal(chunk.stepMs.length, pkg.json.flow.steps, "one expert call per Euler step");
    }
  } finally {
    await policy.close();
  }
});

test("noiseScale: drawn noise × the temperature (same draws); 0 gives one deterministic chunk; out of range is refused", async () => {
  const half = await VlaPolicy.create(fixture.dir, { seed: 3, noiseScale: 0.5 });
  const zero = await VlaPolicy.create(fixture.dir, { seed: 3, noiseScale: 0 });
  try {
    const pkg = half.package;
    const t = pkg.transforms[0];
    const side = Math.round(Math.sqrt(vec.frames[t.name][0].length / 3));
    const base = { state: vec.state[0].map((s, i) => s * pkg.state.scale[i] + pkg.state.offset[i]), instruction: vec.instructions[0], images: { [t.name]: { width: side, height: side, data: Uint8Array.from(vec.frames[t.name][0]) } } };
    const n = pkg.json.action.horizon * pkg.json.action.names.length;
    // create() warms up with one seeded chunk, so a fresh policy's first sampleChunk uses the second n draws.
    const g = gaussian(3);
    for (let i = 0; i < n; i++) g();
    const drawn = Float32Array.from({ length: n }, () => g() * 0.5);
    const explicit = await half.sampleChunk({ ...base, noise: drawn });
    const half2 = await VlaPolicy.create(fixture.dir, { seed: 3, noiseScale: 0.5 });
    try {
      assert.ok(maxAbs((await half2.sampleChunk(base)).actions.flat(), explicit.actions.flat()) < 1e-6);
    } finally {
      await half2.close();
    }
    const z1 = (await zero.sampleChunk(base)).actions;
    const z2 = (await zero.sampleChunk(base)).actions;
    assert.deepEqual(z1, z2);
  } finally {
    await half.close();
    await zero.close();
  }
  await assert.rejects(VlaPolicy.create(fixture.dir, { noiseScale: -1 }), /noise_scale -1.*\[0, 2\]/);
});

async function copyPackage(edit: (dir: string) => Promise<void>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "rlft-vla-edit-"));
  scratch.push(root);
  const dir = join(root, "pkg");
  await cp(fixture.dir, dir, { recursive: true });
  await edit(dir);
  // Re-hash, so the refusal under test is the mismatch and not the sha256 check.
  const pj = JSON.parse(await readFile(join(dir, "policy.json"), "utf8")) as { sha256: Record<string, string> };
  for (const f of Object.keys(pj.sha256)) pj.sha256[f] = createHash("sha256").update(await readFile(join(dir, f))).digest("hex");
  await writeFile(join(dir, "policy.json"), JSON.stringify(pj));
  return dir;
}

const robot = { jointNames: ["j0", "j1", "j2", "j3", "j4"], observationNames: ["q.j0", "q.j1", "q.j2", "q.j3", "q.j4", "ee.x", "ee.y", "ee.z"] };

test("a package whose camera set does not match the robot is refused at load, naming the camera", async () => {
  await assert.rejects(VlaActor.create(fixture.dir, { ...robot, cameras: ["wrist"] }), (e: unknown) => e instanceof PolicyPackageError && e.code === "incompatible" && /needs camera\(s\) \[front\] but the robot has \[wrist\]/.test(e.message));
});

test("a package whose tokenizer does not match its model is refused at load, naming the mismatch", async () => {
  const dir = await copyPackage(async (d) => {
    const tj = JSON.parse(await readFile(join(d, "tokenizer.json"), "utf8")) as { padding: { strategy: { Fixed: number } }; truncation: { max_length: number } };
    tj.padding.strategy.Fixed = 12;
    tj.truncation.max_length = 12;
    await writeFile(join(d, "tokenizer.json"), JSON.stringify(tj));
  });
  await assert.rejects(VlaPackage.load(dir), (e: unknown) => e instanceof PolicyPackageError && e.code === "tokenizer" && /pads to 12 tokens, the model takes language.max_length = 16/.test(e.message));
  const big = await copyPackage(async (d) => {
    const tj = JSON.parse(await readFile(join(d, "tokenizer.json"), "utf8")) as { model: { vocab: Record<string, number> } };
    tj.model.vocab.zebra = 999;
    await writeFile(join(d, "tokenizer.json"), JSON.stringify(tj));
  });
  await assert.rejects(VlaPackage.load(big), /ids go up to 999, the model's embedding table has language.vocab_size = \d+ rows/);
});

test("delta actions: relative_to_state must name state inputs, one per action; a constant action is replayed exactly", async () => {
  const bad = await copyPackage(async (d) => {
    const pj = JSON.parse(await readFile(join(d, "policy.json"), "utf8")) as { action: { relative_to_state: (string | null)[] } };
    pj.action.relative_to_state[1] = "q.elbow";
    await writeFile(join(d, "policy.json"), JSON.stringify(pj));
  });
  await assert.rejects(VlaPackage.load(bad), (e: unknown) => e instanceof PolicyPackageError && e.code === "dims" && /relative_to_state names \[q\.elbow\], which are not in state.names/.test(e.message));
  const short = await copyPackage(async (d) => {
    const pj = JSON.parse(await readFile(join(d, "policy.json"), "utf8")) as { action: { relative_to_state: (string | null)[] } };
    pj.action.relative_to_state.pop();
    await writeFile(join(d, "policy.json"), JSON.stringify(pj));
  });
  await assert.rejects(VlaPackage.load(short), /relative_to_state has 4 entries, action.names 5/);
  // Absolute j4 with min == max: the runtime outputs exactly that constant, whatever the flow produced.
  const fixed = await copyPackage(async (d) => {
    const pj = JSON.parse(await readFile(join(d, "policy.json"), "utf8")) as { action: { relative_to_state: (string | null)[] } };
    pj.action.relative_to_state[4] = null;
    await writeFile(join(d, "policy.json"), JSON.stringify(pj));
    const ns = JSON.parse(await readFile(join(d, "norm_stats.json"), "utf8")) as { norm_stats: { actions: { min: number[]; max: number[] } } };
    ns.norm_stats.actions.min[4] = 0;
    ns.norm_stats.actions.max[4] = 0;
    await writeFile(join(d, "norm_stats.json"), JSON.stringify(ns));
  });
  const policy = await VlaPolicy.create(fixed);
  try {
    const state = [0.1, -0.2, 0.3, -0.4, 0.5];
    const x = Float32Array.from({ length: policy.package.json.action.horizon * 5 }, (_, k) => (k % 5 === 4 ? -0.7 : 0.25));
    const rows = policy.unnormaliseActions(x, state);
    const { offset, scale } = policy.package.actions;
    for (const row of rows) {
      assert.equal(row[4], 0, "constant gripper replayed exactly");
      for (let a = 0; a < 4; a++) assert.ok(Math.abs(row[a] - (0.25 * scale[a] + offset[a] + state[a])) < 1e-6, "delta joint = unnormalised + state");
    }
    assert.throws(() => policy.unnormaliseActions(x, []), /relative to state q\.j0, but no finite value/);
  } finally {
    await policy.close();
  }
});

test("a missing or stale camera frame makes the VLA hold (measured joints, no model run); a fresh frame resumes", async () => {
  const warnings: string[] = [];
  const actor = await VlaActor.create(fixture.dir, { ...robot, cameras: ["front"], logger: { info: () => undefined, warn: (m) => warnings.push(m) } });
  try {
    const values = [0.1, -0.2, 0.3, -0.4, 0.02, 0.2, 0, 0.1];
    const stamp = { sec: 10, nanosec: 0 };
    actor.setInstruction("push the red cube to the left target");
    const held = await actor.act({ names: robot.observationNames, values, stamp, images: {} });
    assert.deepEqual(held, values.slice(0, 5));
    assert.equal(actor.holds, 1);
    assert.equal(actor.chunkMs.length, 0, "no chunk computed without a frame");
    assert.match(warnings.join("\n"), /holding — no frame from camera front yet/);
    const data = new Uint8Array(64 * 64 * 3).fill(100);
    const old = { width: 64, height: 64, encoding: "rgb8", step: 192, data, stamp: { sec: 9, nanosec: 0 } };
    await actor.act({ names: robot.observationNames, values, stamp, images: { front: old } });
    assert.equal(actor.holds, 2);
    assert.match(actor.lastHold, /1.00 s old/);
    const fresh = { ...old, stamp };
    const a = await actor.act({ names: robot.observationNames, values, stamp, images: { front: fresh } });
    assert.equal(a.length, 5);
    assert.equal(actor.chunkMs.length, 1);
    actor.setInstruction("shove the azure block leftwards");
    assert.match(warnings.join("\n"), /does not know \(shove, azure, .*leftwards\)/);
  } finally {
    await actor.close();
  }
});

test("a RECAP-fine-tuned VLA: the runtime appends 'advantage positive' through the package's template; ids and chunk equal PyTorch's", async () => {
  const recap = await makeVlaFixture({ recap: true });
  const policy = await VlaPolicy.create(recap.dir);
  try {
    const pkg = policy.package;
    assert.equal(pkg.json.language.template, "{instruction} advantage positive");
    const rv = JSON.parse(await readFile(join(recap.dir, "test_vectors.json"), "utf8")) as Vectors;
    const t = pkg.transforms[0];
    const side = Math.round(Math.sqrt(rv.frames[t.name][0].length / 3));
    const vocab = (JSON.parse(await readFile(join(recap.dir, "tokenizer.json"), "utf8")) as { model: { vocab: Record<string, number> } }).model.vocab;
    for (let v = 0; v < rv.state.length; v++) {
      const raw = rv.state[v].map((s, i) => s * pkg.state.scale[i] + pkg.state.offset[i]);
      const input = { state: raw, instruction: rv.instructions[v], images: { [t.name]: { width: side, height: side, data: Uint8Array.from(rv.frames[t.name][v]) } }, noise: Float32Array.from(rv.noise[v].flat()) };
      const { encoding } = policy.prefixFeeds(input);
      assert.deepEqual(encoding.ids, rv.input_ids[v], "tokenizer ids equal the learner's");
      const words = encoding.ids.filter((id) => id === vocab.advantage || id === vocab.positive);
      assert.deepEqual(words, [vocab.advantage, vocab.positive], "the indicator is in the prompt the model reads");
      const chunk = await policy.sampleChunk(input);
      const rel = pkg.json.action.relative_to_state!;
      const expected = rv.actions[v].flat().map((x, k) => {
        const a = k % pkg.json.action.names.length;
        return Math.max(-1, Math.min(1, x)) * pkg.actions.scale[a] + pkg.actions.offset[a] + raw[pkg.json.state.names.indexOf(rel[a]!)];
      });
      assert.ok(maxAbs(chunk.actions.flat(), expected) < 1e-4, `chunk ${v}: ${maxAbs(chunk.actions.flat(), expected)}`);
    }
    // An instruction so long that truncation would cut the indicator off is logged, naming what is cut.
    const warnings: string[] = [];
    const actor = await VlaActor.create(recap.dir, { ...robot, cameras: ["front"], logger: { info: () => undefined, warn: (m) => warnings.push(m) } });
    try {
      actor.setInstruction("push the red cube to the left target");
      assert.equal(warnings.length, 0, warnings.join("\n"));
      actor.setInstruction("push the red cube to the left target and then push the blue cube to the right target");
      assert.match(warnings.join("\n"), /longer than the package's 16 tokens; the tokenizer cuts \[.*advantage, positive\] \(the template "\{instruction\} advantage positive" adds words too\)/);
    } finally {
      await actor.close();
    }
  } finally {
    await policy.close();
    await recap.cleanup();
  }
});
