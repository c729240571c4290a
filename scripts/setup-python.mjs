#!/usr/bin/env node
// Makes the project's Python environment: `.venv/` at the repo root with the learner (`learner/pyproject.toml`,
// editable, with its test and peers extras) and the pinned versions in `learner/constraints.txt` (a CPU build of PyTorch).
// `npm run demo`, `npm test` and `.ci/run` all come through here, so a newcomer's path is the path CI tests.
// Nothing goes into user or system site-packages.
//
//   node scripts/setup-python.mjs                         # create or update .venv (no-op when up to date)
//   node scripts/setup-python.mjs --system-site-packages  # apt-only machines: reuse Debian's python3-torch etc.
//   RLFT_PYTHON=/path/to/python node scripts/...          # use that interpreter as is: nothing is installed
//
// Up to date means: .venv/rlft-stamp holds the hash of pyproject.toml + constraints.txt it was made from.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const venv = join(root, ".venv");
const py = join(venv, "bin", "python");
const stampFile = join(venv, "rlft-stamp");
const inputs = ["learner/pyproject.toml", "learner/constraints.txt", "learner/peers-aside.txt"].map((f) => join(root, f));
const systemSite = process.argv.includes("--system-site-packages");
const quiet = process.argv.includes("--quiet");

if (process.env.RLFT_PYTHON) {
  if (!quiet) console.error(`RLFT_PYTHON=${process.env.RLFT_PYTHON}: using it as is (nothing installed)`);
  process.exit(0);
}

const stamp = createHash("sha256");
for (const f of inputs) stamp.update(readFileSync(f));
stamp.update(systemSite ? "system-site" : "isolated");
const want = stamp.digest("hex");
if (existsSync(py) && existsSync(stampFile) && readFileSync(stampFile, "utf8").trim() === want) {
  if (!quiet) console.error(`.venv is up to date (${py})`);
  process.exit(0);
}

function run(cmd, args, what) {
  console.error(`$ ${[cmd, ...args].join(" ")}`);
  const r = spawnSync(cmd, args, { stdio: "inherit", cwd: root, env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" } });
  if (r.error || r.status !== 0) {
    console.error(`\nsetting up the learner's Python environment failed at: ${what}` +
      (r.error ? ` (${r.error.message})` : ` (exit ${r.status})`) +
      `\n  fix the cause above and run \`node scripts/setup-python.mjs\` again; or point RLFT_PYTHON at a python that` +
      `\n  can \`import rlft_learner\` (e.g. after \`pip install -e learner\`).`);
    process.exit(1);
  }
}

if (!existsSync(py)) {
  const base = process.env.RLFT_BASE_PYTHON ?? "python3";
  console.error(`making the learner's virtualenv in .venv (from ${base}; once, about a minute) ...`);
  run(base, ["-m", "venv", ...(systemSite ? ["--system-site-packages"] : []), venv],
    `${base} -m venv (Debian/Ubuntu: sudo apt-get install python3-venv)`);
}
if (systemSite) {
  // apt-only machines: Debian's python3-torch (1.13), python3-numpy, ... meet the learner's lower bounds, so pip adds
  // the learner alone. The pinned versions (torch 2.13) and the test extras would replace them: left out here.
  run(py, ["-m", "pip", "install", "--quiet", "--editable", "learner"], "pip install of learner/ into .venv (system site packages)");
} else {
  run(py, ["-m", "pip", "install", "--quiet", "--constraint", "learner/constraints.txt", "--editable", "learner[test,peers]"],
    "pip install of learner/ into .venv");
}
// Peers pip cannot resolve next to the project's torch (learner/peers-aside.txt): each without its dependencies into
// a folder of its own, so pip's resolver and `pip check` never see their torch pins.
for (const line of systemSite ? [] : readFileSync(join(root, "learner/peers-aside.txt"), "utf8").split("\n")) {
  const spec = line.replace(/#.*/, "").trim();
  if (!spec) continue;
  const m = /^([A-Za-z0-9_.-]+)==([A-Za-z0-9_.+-]+)$/.exec(spec);
  if (!m) throw new Error(`learner/peers-aside.txt: "${spec}" is not name==version`);
  const dir = join(venv, "peers", `${m[1]}-${m[2]}`);
  if (existsSync(join(dir, `${m[1].replace(/-/g, "_")}-${m[2]}.dist-info`))) continue;
  run(py, ["-m", "pip", "install", "--quiet", "--no-deps", "--upgrade", "--target", dir, spec], `pip install --no-deps ${spec} into ${dir}`);
}
writeFileSync(stampFile, want + "\n");
console.error(`learner installed in .venv (${py})`);
