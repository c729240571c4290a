/**
 * Test helper: what a poisoned learner publishes (issue 24 item 2). Takes a package the learner exported and sets every
 * floating-point weight of the named ONNX graphs to NaN with the `onnx` Python package (an independent writer of the
 * format), then rewrites policy.json's sha256 for them, so the package is internally consistent (and may be signed
 * afterwards): only its numbers are poisoned. Done after the export so the learner's own finite-value guards, which
 * refuse to export such a network, are not in the way.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { findPython } from "../../app/python.ts";

const SCRIPT = `
import sys, numpy as np, onnx
from onnx import numpy_helper
n = 0
for path in sys.argv[1:]:
    m = onnx.load(path)
    for init in m.graph.initializer:
        a = numpy_helper.to_array(init)
        if a.dtype.kind == "f":
            init.CopyFrom(numpy_helper.from_array(np.full(a.shape, np.nan, dtype=a.dtype), init.name))
            n += 1
    onnx.save(m, path)
print(n)
`;

/** Copies the package in `src` to `dst` with the weights of `files` (e.g. ["actor.onnx"]) set to NaN; returns how many tensors were poisoned. */
export async function poisonPackage(src: string, dst: string, files: readonly string[]): Promise<number> {
  await cp(src, dst, { recursive: true });
  const paths = files.map((f) => join(dst, f));
  const tensors = Number(
    await new Promise<string>((resolve, reject) => {
      const child = spawn(findPython(), ["-c", SCRIPT, ...paths], { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      child.on("error", reject);
      child.on("exit", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`poisoning ${paths.join(", ")} failed (${code}):\n${err.slice(-1500)}`))));
    }),
  );
  const pjPath = join(dst, "policy.json");
  const pj = JSON.parse(await readFile(pjPath, "utf8")) as { sha256: Record<string, string>; version: string };
  for (const f of files) pj.sha256[f] = createHash("sha256").update(await readFile(join(dst, f))).digest("hex");
  pj.version = `${pj.version}-nan`;
  await writeFile(pjPath, JSON.stringify(pj, null, 2));
  return tensors;
}
