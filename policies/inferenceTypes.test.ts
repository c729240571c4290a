/**
 * Element types across the inference worker: a graph that takes float16 and bool inputs gets them converted from what
 * the caller sends (float32, 0/1), its float16 output comes back as float32; a graph whose inputs onnxruntime-node
 * cannot feed (bfloat16) is refused at load naming the input. Graphs are written by the `onnx` Python package.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InferenceClient } from "./InferenceClient.ts";
import { runLearner } from "./testing/smolvlaFixture.ts";
import { f16ToF32, f32ToF16 } from "./float16.ts";
import { externalDataLocations } from "./onnxExternalData.ts";

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "rlft-types-"));
  const script = `
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper
d = sys.argv[1]
def save(g, name, **kw):
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save_model(m, f"{d}/{name}", **kw)
two = h.make_tensor("two", T.FLOAT16, [], [2.0])
zero = h.make_tensor("zero", T.FLOAT16, [], [0.0])
g = h.make_graph([h.make_node("Mul", ["x", "two"], ["x2"]), h.make_node("Where", ["m", "x2", "zero"], ["y"])], "f16",
                 [h.make_tensor_value_info("x", T.FLOAT16, [2]), h.make_tensor_value_info("m", T.BOOL, [2])],
                 [h.make_tensor_value_info("y", T.FLOAT16, [2])], [two, zero])
save(g, "f16.onnx")
g = h.make_graph([h.make_node("Cast", ["x"], ["y"], to=T.FLOAT)], "bf16",
                 [h.make_tensor_value_info("x", T.BFLOAT16, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])])
save(g, "bf16.onnx")
w = numpy_helper.from_array(np.arange(1024, dtype=np.float32), "w")
g = h.make_graph([h.make_node("Add", ["x", "w"], ["y"])], "ext", [h.make_tensor_value_info("x", T.FLOAT, [1024])],
                 [h.make_tensor_value_info("y", T.FLOAT, [1024])], [w])
save(g, "ext.onnx", save_as_external_data=True, location="ext.onnx.data", size_threshold=0)
`;
  await runLearner(["-c", script, dir]);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test("float16 ⇄ float32: exact for representable values, round to nearest even, overflow to Infinity", () => {
  const xs = [0, -0, 1, -2.5, 65504, 1e-7, 5.960464477539063e-8, 0.1, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 70000, -Infinity, NaN];
  const back = f16ToF32(f32ToF16(xs));
  assert.deepEqual(Array.from(back.slice(0, 5)), [0, -0, 1, -2.5, 65504]);
  assert.equal(back[6], 2 ** -24, "smallest subnormal");
  assert.ok(Math.abs(back[7] - 0.1) < 1e-4);
  assert.equal(back[8], 1, "tie rounds to even (down)");
  assert.equal(back[9], 1 + 2 ** -9, "tie rounds to even (up)");
  assert.equal(back[10], Infinity);
  assert.equal(back[11], -Infinity);
  assert.ok(Number.isNaN(back[12]));
});

test("a float16 + bool graph: float32 and 0/1 feeds are converted to what it declares; its float16 output returns as float32", async () => {
  const client = await InferenceClient.create({ m: join(dir, "f16.onnx") });
  try {
    assert.deepEqual(client.inputTypes.m, { x: "float16", m: "bool" });
    const { outputs } = await client.run("m", { x: { data: Float32Array.from([1.5, -3]), dims: [2] }, m: { data: Uint8Array.from([1, 0]), dims: [2], type: "bool" } });
    assert.ok(outputs.y.data instanceof Float32Array);
    assert.deepEqual(Array.from(outputs.y.data as Float32Array), [3, 0]);
  } finally {
    await client.close();
  }
});

test("a graph with a bfloat16 input is refused at load, naming the input and the fix", async () => {
  await assert.rejects(InferenceClient.create({ m: join(dir, "bf16.onnx") }), (e: Error & { code?: string }) => e.code === "unsupported_type" && /input "x" is bfloat16, which the robot's runtime cannot feed/.test(e.message));
});

test("external data: the scanner finds the weights file onnxruntime reads, and the graph runs with it", async () => {
  assert.deepEqual(externalDataLocations(await readFile(join(dir, "ext.onnx"))), ["ext.onnx.data"]);
  assert.deepEqual(externalDataLocations(await readFile(join(dir, "f16.onnx"))), []);
  const client = await InferenceClient.create({ m: join(dir, "ext.onnx") });
  try {
    const { outputs } = await client.run("m", { x: { data: new Float32Array(1024), dims: [1024] } });
    assert.equal((outputs.y.data as Float32Array)[1023], 1023);
  } finally {
    await client.close();
  }
});
