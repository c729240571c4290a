import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { npy, npyHeader } from "./npy.ts";
import { findPython, learnerEnv } from "../app/python.ts";

test(".npy files load in numpy with their dtype, shape and values; headers pad to 64 bytes", () => {
  const dir = mkdtempSync(join(tmpdir(), "rlft-npy-"));
  try {
    const u8 = Uint8Array.from({ length: 2 * 3 * 4 * 3 }, (_, i) => i % 251);
    const f4 = Float32Array.from([0.5, -1.25, 3e-8, 1e6, Number.NaN, -0]);
    writeFileSync(join(dir, "u8.npy"), npy("|u1", [2, 3, 4, 3], u8));
    writeFileSync(join(dir, "f4.npy"), npy("<f4", [6], new Uint8Array(f4.buffer)));
    writeFileSync(join(dir, "empty.npy"), npy("<f4", [0, 12], new Uint8Array(0)));
    for (const shape of [[1], [123456789, 12], [0, 48, 64, 3]]) assert.equal(npyHeader("<f4", shape).length % 64, 0, String(shape));
    const code = [
      "import json, sys, numpy as np",
      "d = sys.argv[1]",
      "out = {}",
      "for n in ('u8', 'f4', 'empty'):",
      "    a = np.load(f'{d}/{n}.npy')",
      "    out[n] = [a.dtype.str, list(a.shape), [None if x != x else x for x in a.ravel().tolist()]]",
      "print(json.dumps(out))",
    ].join("\n");
    const r = spawnSync(findPython(), ["-c", code, dir], { env: learnerEnv(), encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const got = JSON.parse(r.stdout) as Record<string, [string, number[], (number | null)[]]>;
    assert.deepEqual(got.u8, ["|u1", [2, 3, 4, 3], [...u8]]);
    assert.deepEqual(got.f4, ["<f4", [6], [...f4].map((x) => (Number.isNaN(x) ? null : x))]);
    assert.deepEqual(got.empty, ["<f4", [0, 12], []]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
