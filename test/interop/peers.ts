/**
 * Runs the peer scripts (test/interop/peers/*.py: other people's readers and writers, pip-installed into .venv) with
 * the project's interpreter, offline: Hugging Face's hub is never asked (HF_HUB_OFFLINE), caches go to the test's
 * temporary folder. LeRobot lives outside site-packages (learner/peers-aside.txt): a test names the release it needs (and any other
 * package set aside, e.g. the `datasets` LeRobot 0.3 reads v2.1 with).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, findPython, learnerEnv } from "../../app/python.ts";

const PEERS_DIR = join(REPO_ROOT, "test", "interop", "peers");

/** The versions of `name` that learner/peers-aside.txt pins (`name==version` lines). */
const ASIDE = readFileSync(join(REPO_ROOT, "learner", "peers-aside.txt"), "utf8");
const pinned = (name: string): string[] => [...ASIDE.matchAll(new RegExp(`^${name}==(\\S+)`, "gm"))].map((m) => m[1]);

/** The LeRobot releases learner/peers-aside.txt installs: the newest reads/writes v3.0, the 0.x ≤ 0.3 one writes v2.1. */
export const LEROBOT = (() => {
  const versions = pinned("lerobot");
  const v21 = versions.find((v) => /^0\.[0-3]\./.test(v));
  const v30 = versions.find((v) => v !== v21);
  if (!v21 || !v30) throw new Error("learner/peers-aside.txt must list a LeRobot release for v3.0 and one (≤ 0.3) for v2.1");
  return { v30, v21 };
})();

/** The `datasets` release LeRobot's v2.1 reader (0.3) needs (learner/peers-aside.txt), put in front of the project's. */
export const DATASETS_FOR_V21 = (() => {
  const [version] = pinned("datasets");
  if (!version) throw new Error("learner/peers-aside.txt must pin the datasets release LeRobot ≤ 0.3 reads v2.1 with");
  return version;
})();

/** The folder a peer-aside package was installed into, or throws naming the fix. */
export function asidePath(name: string, version: string): string {
  const dir = join(REPO_ROOT, ".venv", "peers", `${name}-${version}`);
  if (!existsSync(dir)) throw new Error(`${dir} is missing: run node scripts/setup-python.mjs (it installs learner/peers-aside.txt)`);
  return dir;
}

/** Runs test/interop/peers/<script> and returns the JSON it printed last; throws with its stderr when it fails. */
export function runPeer<T = unknown>(script: string, args: readonly string[], o: { tmp: string; lerobot?: string; aside?: readonly [name: string, version: string][]; timeoutMs?: number }): T {
  const paths = [PEERS_DIR, ...(o.aside ?? []).map(([n, v]) => asidePath(n, v)), ...(o.lerobot ? [asidePath("lerobot", o.lerobot)] : [])];
  const env = learnerEnv({
    ...process.env,
    PYTHONPATH: [...paths, process.env.PYTHONPATH].filter(Boolean).join(":"),
    HF_HUB_OFFLINE: "1",
    HF_DATASETS_OFFLINE: "1",
    HF_HOME: join(o.tmp, "hf-home"),
    HF_LEROBOT_HOME: join(o.tmp, "lerobot-home"),
    TQDM_DISABLE: "1",
  });
  const r = spawnSync(findPython(), [join(PEERS_DIR, script), ...args], { env, encoding: "utf8", timeout: o.timeoutMs ?? 240_000, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${script} ${args.join(" ")} failed (${r.error?.message ?? `exit ${r.status}`}):\n${(r.stderr ?? "").slice(-4000)}`);
  const last = r.stdout.trim().split("\n").pop() ?? "";
  return JSON.parse(last) as T;
}
