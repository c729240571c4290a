/**
 * A real VLA's export through the robot's runtime: a randomly initialised SmolVLA (LeRobot 0.4's architecture at test
 * size) exported by `export-smolvla` from a checkpoint directory in LeRobot's layout. Checks LeRobot's letterbox
 * preprocessing, image masks and optional cameras, state/action padding, the prompt template, the KV cache kept in
 * the worker, and the whole chunk against PyTorch within 1e-4.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeSmolVlaFixture, runLearner } from "../testing/smolvlaFixture.ts";
import { VlaPolicy } from "./VlaPolicy.ts";
import { VlaPackage, assertVlaCompatible } from "./VlaPackage.ts";
import { preprocessFrame } from "./preprocess.ts";
import { PolicyPackageError } from "../PolicyPackageError.ts";
import { VlaActor } from "../actors/VlaActor.ts";
import { maxAbs } from "../testing/maxAbs.ts";

interface Vectors {
  instructions: string[];
  input_ids: number[][];
  state: number[][];
  frames: Record<string, (number[] | null)[]>;
  present: boolean[][];
  images: Record<string, (number[] | null)[]>;
  noise: number[][];
  actions: number[][][];
}

let fixture: { root: string; dir: string; cleanup(): Promise<void> };
let vec: Vectors;
let pkg: VlaPackage;
const scratch: string[] = [];

before(async () => {
  fixture = await makeSmolVlaFixture();
  vec = JSON.parse(await readFile(join(fixture.dir, "test_vectors.json"), "utf8")) as Vectors;
  pkg = await VlaPackage.load(fixture.dir);
});
after(async () => {
  await fixture?.cleanup();
  for (const d of scratch) await rm(d, { recursive: true, force: true });
});


function frameOf(camera: string, v: number) {
  const t = pkg.transforms.find((c) => c.name === camera)!;
  const data = vec.frames[camera][v];
  return data === null ? undefined : { width: t.crop[3], height: t.crop[2], data: Uint8Array.from(data) };
}

test("letterbox: LeRobot's resize_with_pad (aspect kept, padded left and top, x·2 − 1) equals the TS preprocessing", () => {
  for (const t of pkg.transforms) {
    const frame = frameOf(t.name, 0);
    if (!frame) continue;
    assert.equal(t.resize, "letterbox");
    const x = preprocessFrame(frame, t);
    assert.ok(maxAbs(x, vec.images[t.name][0]!) < 1e-5, `camera ${t.name}: ${maxAbs(x, vec.images[t.name][0]!)}`);
  }
  // front is 40×56 into 64²: 45×64 at the bottom, 19 rows of black (−1) on top.
  const front = pkg.transforms.find((t) => t.name === "front")!;
  const x = preprocessFrame(frameOf("front", 0)!, front);
  assert.equal(x[18 * 64 + 5], -1);
  assert.notEqual(x[19 * 64 + 5], -1);
});

test("the prompt template (instruction + newline) tokenises to the Rust tokenizer's ids, padded to max_length", async () => {
  const policy = await VlaPolicy.create(fixture.dir);
  try {
    for (let v = 0; v < vec.instructions.length; v++) {
      const { encoding } = policy.prefixFeeds({ state: vec.state[v], instruction: vec.instructions[v], images: { front: frameOf("front", 0)! } });
      assert.deepEqual(encoding.ids.slice(0, vec.input_ids[v].length), vec.input_ids[v]);
      assert.equal(encoding.ids.length, pkg.json.language.max_length);
    }
  } finally {
    await policy.close();
  }
});

test("ONNX (onnxruntime-node) agrees with PyTorch within 1e-4 on the whole chunk, with an optional camera absent; the KV cache stays in the worker", async () => {
  const kept = await VlaPolicy.create(fixture.dir);
  const copied = await VlaPolicy.create(fixture.dir, { keepPrefix: false });
  try {
    const W = pkg.actionWidth;
    assert.equal(W, 8, "actions padded to the model's 8");
    assert.equal(pkg.stateWidth, 8, "state padded to the model's 8");
    assert.deepEqual(vec.present, [[true, true, false], [true, false, false]], "vector 1 runs without the optional wrist camera; empty_camera_0 never sends");
    for (let v = 0; v < vec.state.length; v++) {
      const images: Record<string, { width: number; height: number; data: Uint8Array }> = {};
      for (const t of pkg.transforms) {
        const f = frameOf(t.name, v);
        if (f) images[t.name] = f;
      }
      assert.equal(Object.keys(images).length, vec.present[v].filter(Boolean).length);
      const input = { state: vec.state[v], instruction: vec.instructions[v], images, noise: Float32Array.from(vec.noise[v]) };
      const a = await kept.sampleChunk(input);
      const b = await copied.sampleChunk(input);
      assert.equal(a.actions.length, pkg.json.action.horizon);
      assert.equal(a.actions[0].length, 5, "the robot's 5 dims of the 8 predicted");
      const err = maxAbs(a.actions.flat(), vec.actions[v].flat());
      assert.ok(err < 1e-4, `vector ${v}: ${err}`);
      assert.ok(maxAbs(a.actions.flat(), b.actions.flat()) < 1e-6, "kept and copied prefix give the same chunk");
      // Per Euler step only x and t cross to the worker when the cache is kept; all of it otherwise.
      assert.equal(a.stepFeedBytes, pkg.json.action.horizon * W * 4 + 4);
      assert.equal(b.stepFeedBytes, a.stepFeedBytes + a.prefixBytes);
      assert.ok(a.prefixBytes > 0);
    }
  } finally {
    await kept.close();
    await copied.close();
  }
});

test("optional cameras: a robot without them is accepted (fed masked); a missing required camera is refused, naming it", async () => {
  const robot = { jointNames: ["j0", "j1", "j2", "j3", "j4"], observationNames: ["q.j0", "q.j1", "q.j2", "q.j3", "q.j4"] };
  assertVlaCompatible(pkg, { observationNames: robot.observationNames, actionNames: robot.jointNames, cameras: ["front"] });
  assert.throws(
    () => assertVlaCompatible(pkg, { observationNames: robot.observationNames, actionNames: robot.jointNames, cameras: ["wrist"] }),
    (e: unknown) => e instanceof PolicyPackageError && e.code === "incompatible" && /needs camera\(s\) \[front\] but the robot has \[wrist\]/.test(e.message),
  );
  const actor = await VlaActor.create(fixture.dir, { ...robot, cameras: ["front"], logger: { info: () => undefined, warn: () => undefined } });
  try {
    assert.deepEqual(actor.cameras, ["front"], "the actor waits only for the cameras the robot has");
    const f = frameOf("front", 0)!;
    actor.setInstruction("pick up the red cube");
    const stamp = { sec: 1, nanosec: 0 };
    const a = await actor.act({ names: robot.observationNames, values: [0, 0, 0, 0, 0], stamp, images: { front: { width: f.width, height: f.height, encoding: "rgb8", step: f.width * 3, data: f.data, stamp } } });
    assert.equal(a.length, 5);
  } finally {
    await actor.close();
  }
});

async function edited(edit: (dir: string) => Promise<void>, rehash = true): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "rlft-smolvla-edit-"));
  scratch.push(root);
  const dir = join(root, "pkg");
  await cp(fixture.dir, dir, { recursive: true });
  await edit(dir);
  if (rehash) {
    const pj = JSON.parse(await readFile(join(dir, "policy.json"), "utf8")) as { sha256: Record<string, string> };
    for (const f of Object.keys(pj.sha256)) pj.sha256[f] = createHash("sha256").update(await readFile(join(dir, f))).digest("hex");
    await writeFile(join(dir, "policy.json"), JSON.stringify(pj));
  }
  return dir;
}

test("bad layouts are refused at load with one sentence: optional camera without a mask, padding below the names, unknown template field", async () => {
  // policy.json edited as plain JSON (the point is to write what the schema refuses).
  type Pj = { cameras: Record<string, unknown>[]; state: Record<string, unknown>; language: Record<string, unknown> };
  const cases: [string, (pj: Pj) => void, RegExp][] = [
    ["mask", (pj) => delete pj.cameras[1].mask_input, /camera wrist is optional but has no mask_input/],
    ["pad", (pj) => (pj.state.pad_to = 3), /state.pad_to 3 is below the 5 state names/],
    ["template", (pj) => (pj.language.template = "{task}\n"), /language.template has field\(s\) \{task\}/],
    ["bins", (pj) => (pj.language.template = "Task: {instruction}, State: {state};\nAction: "), /writes \{state\} but language.state_bins is not set/],
  ];
  for (const [, edit, re] of cases) {
    const dir = await edited(async (d) => {
      const pj = JSON.parse(await readFile(join(d, "policy.json"), "utf8")) as Pj;
      edit(pj);
      await writeFile(join(d, "policy.json"), JSON.stringify(pj));
    });
    await assert.rejects(VlaPackage.load(dir), (e: unknown) => e instanceof PolicyPackageError && re.test(e.message), String(re));
  }
});

test("pi0.5's state in the prompt: each normalised value digitised into state_bins bins over [-1, 1]", async () => {
  const dir = await edited(async (d) => {
    const pj = JSON.parse(await readFile(join(d, "policy.json"), "utf8")) as { language: Record<string, unknown> };
    pj.language.template = "Task: {instruction}, State: {state};\nAction: ";
    pj.language.state_bins = 256;
    await writeFile(join(d, "policy.json"), JSON.stringify(pj));
  });
  const policy = await VlaPolicy.create(dir);
  try {
    // numpy: np.digitize(x, np.linspace(-1, 1, 257)[:-1]) - 1
    assert.equal(policy.prompt("pick", Float32Array.from([-1, -0.99, 0, 0.5, 0.999, 0, 0, 0])), "Task: pick, State: 0 1 128 192 255;\nAction: ");
  } finally {
    await policy.close();
  }
});

test("external data (graphs over 2 GB): the weights file is hashed and covered; unhashed or outside the package is refused", async () => {
  const toExternal = async (d: string, location: string): Promise<void> => {
    const script = `import onnx, sys\nm = onnx.load(sys.argv[1])\nonnx.save_model(m, sys.argv[1], save_as_external_data=True, all_tensors_to_one_file=True, location=sys.argv[2], size_threshold=1024)`;
    await runLearner(["-c", script, join(d, "prefix.onnx"), location]);
  };
  const addHash = async (d: string, file: string): Promise<void> => {
    const pj = JSON.parse(await readFile(join(d, "policy.json"), "utf8")) as { sha256: Record<string, string> };
    pj.sha256[file] = "0".repeat(64);
    await writeFile(join(d, "policy.json"), JSON.stringify(pj));
  };
  const ok = await edited(async (d) => {
    await toExternal(d, "prefix.onnx.data");
    await addHash(d, "prefix.onnx.data");
  });
  const policy = await VlaPolicy.create(ok);
  try {
    const chunk = await policy.sampleChunk({ state: vec.state[0], instruction: vec.instructions[0], images: { front: frameOf("front", 0)!, wrist: frameOf("wrist", 0)! }, noise: Float32Array.from(vec.noise[0]) });
    assert.ok(maxAbs(chunk.actions.flat(), vec.actions[0].flat()) < 1e-4);
  } finally {
    await policy.close();
  }
  const unhashed = await edited((d) => toExternal(d, "prefix.onnx.data"));
  await assert.rejects(VlaPackage.load(unhashed), /reads external data prefix.onnx.data, which policy.json sha256 does not list/);
  const outside = await edited(async (d) => {
    await toExternal(d, "prefix.onnx.data");
    const script = `import onnx, sys\nm = onnx.load(sys.argv[1], load_external_data=False)\nfor t in m.graph.initializer:\n    for e in t.external_data:\n        if e.key == "location": e.value = "../weights.data"\nonnx.save_model(m, sys.argv[1])`;
    await runLearner(["-c", script, join(d, "prefix.onnx")]);
  });
  await assert.rejects(VlaPackage.load(outside), /reads external data from "..\/weights.data", which is not a plain file name inside the package/);
});

test("a tampered external-data file fails the package hash check", async () => {
  const dir = await edited(async (d) => {
    const script = `import onnx, sys\nm = onnx.load(sys.argv[1])\nonnx.save_model(m, sys.argv[1], save_as_external_data=True, location="prefix.onnx.data", size_threshold=1024)`;
    await runLearner(["-c", script, join(d, "prefix.onnx")]);
    const pj = JSON.parse(await readFile(join(d, "policy.json"), "utf8")) as { sha256: Record<string, string> };
    pj.sha256["prefix.onnx.data"] = "0".repeat(64);
    await writeFile(join(d, "policy.json"), JSON.stringify(pj));
  });
  const bytes = await readFile(join(dir, "prefix.onnx.data"));
  bytes[bytes.length - 1] ^= 1;
  await writeFile(join(dir, "prefix.onnx.data"), bytes);
  await assert.rejects(VlaPackage.load(dir), (e: unknown) => e instanceof PolicyPackageError && e.code === "sha256_mismatch" && /prefix.onnx.data/.test(e.message));
});
