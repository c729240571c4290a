// Runs every *.test.ts under the source folders with Node's own test runner (via tsx).
// Node 20's --test does not expand globs, so the file list is built here.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

const roots = ["app", "contracts", "runtime", "nodes", "policies", "sim", "recording", "bridge", "cli", "launch", "hardware", "calibration", "web", "telemetry", "data", "test"];
const files = [];
function walk(dir) {
  let entries;
  try { entries = readdirSync(dir); } catch { return; }
  for (const name of entries) {
    const p = join(dir, name);
    if (name === "node_modules") continue;
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith(".test.ts")) files.push(p);
  }
}
const only = process.argv.slice(2);
if (only.length > 0) files.push(...only); else roots.forEach(walk);
files.sort();
const res = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=1", ...files], { stdio: "inherit" });
process.exit(res.status ?? 1);
