// Run before `npm run demo` on a fresh clone: installs the npm packages when node_modules is missing
// or older than package-lock.json. (The learner's Python deps are checked by `rlft demo` itself.)
import { existsSync, statSync } from "node:fs";
import { spawnSync } from "node:child_process";

const lock = "package-lock.json";
const marker = "node_modules/.package-lock.json";
const stale = !existsSync(marker) || (existsSync(lock) && statSync(lock).mtimeMs > statSync(marker).mtimeMs + 1000);
if (stale) {
  console.error("installing npm packages (npm ci) ...");
  const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { stdio: "inherit", env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: "skip" } });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
