/**
 * ONNX as the contract between the learner and the robot: every graph kind the learner exports (diffusion sampler and
 * denoiser, RECAP's guided sampler and value head, residual actor, Q and chunk critics, the VLA's prefix and action
 * expert, the success classifier) gives the same outputs in PyTorch (eager), onnxruntime's Python package and
 * onnxruntime-node, which the robot runs, on the same inputs (test/interop/peers/onnx_graphs.py makes them).
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { runPeer } from "./peers.ts";

const TOLERANCE = 1e-4;
const root = mkdtempSync(join(tmpdir(), "rlft-onnx-"));
after(() => rmSync(root, { recursive: true, force: true }));

interface Json {
  dtype: string;
  shape: number[];
  data: number[];
}
interface Case {
  kind: string;
  graph: string;
  inputs: Record<string, Json>;
  outputs: Record<string, { ort: Json; torch: Json }>;
}

function tensor(t: Json): ort.Tensor {
  if (t.dtype === "int64") return new ort.Tensor("int64", BigInt64Array.from(t.data, (x) => BigInt(x)), t.shape);
  if (t.dtype === "uint8") return new ort.Tensor("uint8", Uint8Array.from(t.data), t.shape);
  if (t.dtype === "float32") return new ort.Tensor("float32", Float32Array.from(t.data), t.shape);
  throw new Error(`input dtype ${t.dtype} not handled`);
}

function maxDiff(a: ArrayLike<number | bigint>, b: readonly number[]): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < b.length; i++) m = Math.max(m, Math.abs(Number(a[i]) - b[i]));
  return m;
}

test(`every exported graph kind agrees in PyTorch, onnxruntime (Python) and onnxruntime-node within ${TOLERANCE}`, async () => {
  const r = runPeer<{ file: string }>("onnx_graphs.py", [root], { tmp: root, timeoutMs: 300_000 });
  const { cases, onnxruntime, torch } = JSON.parse(readFileSync(r.file, "utf8")) as { cases: Case[]; onnxruntime: string; torch: string };
  assert.deepEqual([...new Set(cases.map((c) => c.kind))].sort(), ["classifier", "critic", "diffusion", "diffusion (cameras)", "recap", "residual", "vla"]);
  const graphs = cases.map((c) => c.graph.split("/").at(-1));
  for (const g of ["sampler.onnx", "denoiser.onnx", "value.onnx", "residual.onnx", "critic.onnx", "chunk_critic.onnx", "prefix.onnx", "action_expert.onnx", "classifier.onnx"]) assert.ok(graphs.includes(g), `${g} is among the graphs checked`);
  const report: string[] = [];
  for (const c of cases) {
    const session = await ort.InferenceSession.create(join(root, c.graph));
    try {
      assert.deepEqual([...session.inputNames].sort(), Object.keys(c.inputs).sort(), `${c.graph} inputs`);
      const feeds = Object.fromEntries(Object.entries(c.inputs).map(([k, v]) => [k, tensor(v)]));
      const out = await session.run(feeds);
      for (const [name, ref] of Object.entries(c.outputs)) {
        const got = out[name];
        assert.deepEqual([...got.dims], ref.ort.shape, `${c.graph} ${name} shape`);
        const data = got.data as ArrayLike<number>;
        const vsPy = maxDiff(data, ref.ort.data);
        const vsTorch = maxDiff(data, ref.torch.data);
        const pyVsTorch = maxDiff(Float64Array.from(ref.ort.data), ref.torch.data);
        report.push(`${c.kind} ${c.graph.split("/").at(-1)} ${name}: node-py ${vsPy.toExponential(1)}, node-torch ${vsTorch.toExponential(1)}, py-torch ${pyVsTorch.toExponential(1)}`);
        for (const [what, d] of [["onnxruntime-node vs onnxruntime (Python)", vsPy], ["onnxruntime-node vs PyTorch", vsTorch], ["onnxruntime (Python) vs PyTorch", pyVsTorch]] as const) {
          assert.ok(d <= TOLERANCE, `${c.kind} ${c.graph} ${name}: ${what} differ by ${d}`);
        }
      }
    } finally {
      await session.release();
    }
  }
  console.log(`onnxruntime ${onnxruntime} (Python), torch ${torch}:\n  ${report.join("\n  ")}`);
});
