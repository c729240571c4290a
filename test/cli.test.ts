/** The rlft command as a user runs it: every --help, bad input, and a tiny collect → train-bc → eval. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const rlft = (args: string[]) => spawnSync(process.execPath, ["bin/rlft.js", ...args], { encoding: "utf8", timeout: 600_000 });
const tmp = mkdtempSync(join(tmpdir(), "rlft-cli-"));

test("rlft --help and every subcommand's --help run and show an example", () => {
  const top = rlft(["--help"]);
  assert.equal(top.status, 0, top.stderr);
  const commands = ["collect", "eval", "launch", "replay", "train-bc", "inspect", "demo", "dataset"];
  for (const c of commands) assert.match(top.stdout, new RegExp(`\\b${c}\\b`));
  for (const c of commands) {
    const r = rlft([c, "--help"]);
    assert.equal(r.status, 0, `${c} --help: ${r.stderr}`);
    assert.match(r.stdout, /Example/, `${c} --help has no example`);
  }
});

test("a malformed launch file is refused with file, line and key", () => {
  const f = join(tmp, "bad.yaml");
  writeFileSync(f, "task: push_cube\nsafety:\n  max_stepp: 0.1\n");
  const r = rlft(["launch", f]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /bad\.yaml:3: unknown key 'safety\.max_stepp'/);
});

test("a missing policy package names the file", () => {
  const r = rlft(["eval", "--policy", join(tmp, "nope"), "--episodes", "1"]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /policy\.json/);
});

test("collect → train-bc → eval runs end to end (tiny budget)", () => {
  const demos = join(tmp, "demos");
  const c = rlft(["collect", "--episodes", "3", "--quality", "1", "--out", demos, "--no-camera"]);
  assert.equal(c.status, 0, c.stderr);
  assert.match(c.stdout, /success rate: .*Wilson 95% CI/);
  const r = rlft(["replay", demos]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /3 episodes/);
  const sim = rlft(["replay", join(demos, "episode_000000.mcap"), "--sim", "--plot-dir", tmp]);
  assert.equal(sim.status, 0, sim.stderr);
  assert.match(sim.stdout, /max joint divergence 0\.00e\+0 ≤ tolerance/);
  assert.ok(existsSync(join(tmp, "episode_000000.sim.png")));
  const st = rlft(["dataset", "stats", demos]);
  assert.equal(st.status, 0, st.stderr);
  assert.match(st.stdout, /task push_cube: 3 episodes/);
  const ins = rlft(["inspect", join(demos, "episode_000001.mcap"), "--plot", join(tmp, "ep1.png")]);
  assert.equal(ins.status, 0, ins.stderr);
  assert.match(ins.stdout, /robot \/ task: +rlft_arm5 \/ push_cube/);
  assert.ok(existsSync(join(tmp, "ep1.png")));
  const t = rlft(["train-bc", "--data", demos, "--out", join(tmp, "run"), "--steps", "30"]);
  assert.equal(t.status, 0, t.stderr);
  assert.ok(existsSync(join(tmp, "run", "package", "policy.json")));
  assert.ok(existsSync(join(tmp, "run", "package", "sampler.onnx")));
  const e = rlft(["eval", "--policy", join(tmp, "run", "package"), "--episodes", "2", "--json"]);
  assert.equal(e.status, 0, e.stderr);
  const s = JSON.parse(e.stdout.trim().split("\n").pop()!);
  assert.equal(s.episodes, 2);
  assert.ok(s.ci95[0] <= s.rate && s.rate <= s.ci95[1]);
});

// A newcomer's cold machine: `import torch` alone took 13.5 s there, and a fixed 10 s wait for the learner rlft had
// started itself failed the demo. A learner that is slow to start is waited for; one that dies says why.
test("train-bc waits for a learner that is slow to start, and shows the output of one that dies", () => {
  const demos = join(tmp, "demos");
  const py = spawnSync(process.execPath, ["--import", "tsx", "-e", 'import {findPython} from "./app/python.ts"; console.log(findPython())'], { encoding: "utf8" }).stdout.trim();
  const slow = join(tmp, "slow-python.sh");
  writeFileSync(slow, `#!/bin/sh\nsleep 12\nexec "${py}" "$@"\n`, { mode: 0o755 });
  const t = spawnSync(process.execPath, ["bin/rlft.js", "train-bc", "--data", demos, "--out", join(tmp, "run-slow"), "--steps", "5"], { encoding: "utf8", timeout: 600_000, env: { ...process.env, RLFT_PYTHON: slow } });
  assert.equal(t.status, 0, t.stderr);
  assert.match(t.stderr, /waiting for the learner \(train-bc\) to start/);
  const dead = join(tmp, "dead-python.sh");
  writeFileSync(dead, `#!/bin/sh\necho "ImportError: no module named torch (simulated)" >&2\nexit 3\n`, { mode: 0o755 });
  const d = spawnSync(process.execPath, ["bin/rlft.js", "train-bc", "--data", demos, "--out", join(tmp, "run-dead"), "--steps", "5"], { encoding: "utf8", timeout: 120_000, env: { ...process.env, RLFT_PYTHON: dead } });
  assert.equal(d.status, 1);
  assert.match(d.stderr, /exited with code 3[\s\S]*ImportError: no module named torch \(simulated\)/);
});
