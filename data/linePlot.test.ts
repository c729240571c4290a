import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { plotSize, writeLinePlot, type LinePlotSpec } from "./linePlot.ts";
import { findPython, learnerEnv } from "../app/python.ts";

const spec: LinePlotSpec = {
  title: "episode_000001.mcap: push_cube seed 5",
  xLabel: "episode time (s)",
  spanLabel: "intervention",
  width: 700,
  panelHeight: 120,
  panels: [
    { title: "shoulder", spans: [{ from: 0.2, to: 0.4 }], series: [{ name: "measured", x: [0, 0.1, 0.2, 0.3], y: [0, 0.1, NaN, 0.3] }, { name: "command", x: [0, 0.1, 0.2, 0.3], y: [0, 0.2, 0.2, 0.3], dashed: true }] },
    { title: "max |dq|", series: [{ name: "max |dq|", x: [0, 0.1], y: [0, 1e-4], color: "tab:red" }], hlines: [{ y: 1e-3, label: "tolerance" }] },
  ],
};

test("writeLinePlot: a PNG of the planned size, read back by Pillow (matplotlib's image reader)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlft-plot-"));
  try {
    const out = join(dir, "p.png");
    const size = await writeLinePlot(spec, out);
    assert.deepEqual(size, plotSize(spec));
    assert.deepEqual(size, { width: 700, height: 40 + 2 * 120 + 40 });
    const r = spawnSync(findPython(), ["-c", "import sys, json\nfrom PIL import Image\nim = Image.open(sys.argv[1]); im.verify()\nim = Image.open(sys.argv[1]); print(json.dumps([im.format, *im.size]))", out], { env: learnerEnv(), encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), ["PNG", size.width, size.height]);
    assert.equal(readFileSync(out).subarray(1, 4).toString("latin1"), "PNG");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("writeLinePlot: Python's complaint reaches the caller, naming the field; a missing interpreter is named", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rlft-plot-"));
  try {
    await assert.rejects(writeLinePlot({ ...spec, width: 5 }, join(dir, "x.png")), /drawing .*x\.png failed[\s\S]*width: expected an integer number of pixels/);
    await assert.rejects(writeLinePlot(spec, join(dir, "no", "such", "dir.png")), /cannot write/);
    await assert.rejects(writeLinePlot(spec, join(dir, "y.png"), { ...process.env, RLFT_PYTHON: join(dir, "no-python") }), /cannot start .*no-python/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
