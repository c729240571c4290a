/**
 * rosbag2 bag folders as rlft inputs, with bags the `rosbags` peer wrote (test/interop/peers/rosbag_write.py):
 * `rlft inspect` takes a bag folder (metadata.yaml + .mcap) as well as the .mcap file; a bag in sqlite3 storage (.db3)
 * is refused by `rlft inspect`, `rlft replay` and `rlft dataset import` with an error naming the fix (rosbags-convert
 * to MCAP), and the fix it names works: the converted bag inspects.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { REPO_ROOT, findPython } from "../../app/python.ts";
import { episodeFiles } from "../../app/dataset.ts";
import { runPeer } from "./peers.ts";

const root = mkdtempSync(join(tmpdir(), "rlft-bags-"));
let written: { file: string; counts: Record<string, number> };

function rlft(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(REPO_ROOT, "bin", "rlft.js"), ...args], { encoding: "utf8", cwd: REPO_ROOT, timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

before(() => {
  written = runPeer("rosbag_write.py", [join(root, "mcap-bag")], { tmp: root });
  runPeer("rosbag_write.py", [join(root, "sqlite-bag"), "sqlite3"], { tmp: root });
});
after(() => rmSync(root, { recursive: true, force: true }));

/** `rlft inspect --json` of `path`: exits 0, and its per-topic counts are what rosbags wrote. */
function inspectCounts(path: string): Record<string, number> {
  const r = rlft(["inspect", path, "--json"]);
  assert.equal(r.status, 0, `rlft inspect ${path}:\n${r.stderr}`);
  const s = JSON.parse(r.stdout) as { rates: { topic: string; count: number }[] };
  return Object.fromEntries(s.rates.map((t) => [t.topic, t.count]));
}

test("rlft inspect takes a rosbag2 bag folder (metadata.yaml + .mcap) as well as its .mcap file", () => {
  const folder = inspectCounts(join(root, "mcap-bag"));
  assert.deepEqual(folder, inspectCounts(written.file));
  for (const [topic, n] of Object.entries(written.counts)) assert.equal(folder[topic], n, topic);
});

test("a rosbag2 sqlite3 bag is refused by rlft inspect, replay and dataset import, naming rosbags-convert to MCAP; the conversion it names then inspects", () => {
  const bag = join(root, "sqlite-bag");
  for (const args of [["inspect", bag], ["replay", bag], ["replay", bag, "--through-nodes"], ["dataset", "import", bag, "--out", join(root, "imported")], ["dataset", "stats", bag]]) {
    const r = rlft(args);
    assert.equal(r.status, 1, `rlft ${args.join(" ")} should fail:\n${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /sqlite3/, `rlft ${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /rosbags-convert --src \S*sqlite-bag --dst \S*sqlite-bag-mcap --dst-storage mcap/, `rlft ${args.join(" ")}: ${r.stderr}`);
  }
  // The .db3 file itself too.
  assert.throws(() => episodeFiles(join(bag, "sqlite-bag.db3")), /sqlite3 \(\.db3\).*rosbags-convert/);
  // The fix as printed: rosbags' converter (the peer's, in .venv/bin), then the MCAP bag inspects.
  const conv = spawnSync(join(dirname(findPython()), "rosbags-convert"), ["--src", bag, "--dst", `${bag}-mcap`, "--dst-storage", "mcap"], { encoding: "utf8", timeout: 120_000 });
  assert.equal(conv.status, 0, conv.stderr);
  const counts = inspectCounts(`${bag}-mcap`);
  for (const [topic, n] of Object.entries(written.counts)) assert.equal(counts[topic], n, topic);
});
