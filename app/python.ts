/**
 * The one Python interpreter rlft runs the learner with: $RLFT_PYTHON when set, otherwise the project's own
 * virtualenv `.venv/` (made by `node scripts/setup-python.mjs`, which `npm run demo`, `npm test` and .ci/run call).
 * The CLI, the tests and the benches all ask here, so they never disagree about which torch they get.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

/** Repository root. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Absolute path of the learner's package root (added to PYTHONPATH for a $RLFT_PYTHON without it installed). */
export const LEARNER_DIR = join(REPO_ROOT, "learner");

/** The project's virtualenv interpreter. */
export const VENV_PYTHON = join(REPO_ROOT, ".venv", "bin", "python");

/** The command that makes (or updates) `.venv`. */
export const SETUP_LINE = "node scripts/setup-python.mjs";

/** Errors from the Python side of the stack. */
export class PythonNotFoundError extends Error {
  readonly code = "PYTHON_DEPS_MISSING";
}

/**
 * Returns the learner's interpreter: $RLFT_PYTHON, else `.venv/bin/python`.
 * Throws PythonNotFoundError naming the fix when neither exists.
 */
export function findPython(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RLFT_PYTHON) return env.RLFT_PYTHON;
  if (existsSync(VENV_PYTHON)) return VENV_PYTHON;
  throw new PythonNotFoundError(
    `The learner's Python environment is missing (${VENV_PYTHON} does not exist).\n` +
      `  make it with: ${SETUP_LINE}   (npm run demo does this for you)\n` +
      `  or point RLFT_PYTHON at a python that can \`import rlft_learner\`.`,
  );
}

/** Runs the setup script (a no-op when .venv is up to date), then returns findPython(). */
export function ensurePython(env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, "scripts", "setup-python.mjs"), "--quiet"], { stdio: "inherit", env });
  if (r.status !== 0) throw new PythonNotFoundError(`setting up the learner's Python environment failed (${SETUP_LINE}); see the messages above`);
  return findPython(env);
}

/** Environment for a learner child process: PYTHONPATH includes learner/ (harmless where it is pip-installed). */
export function learnerEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const parts = [LEARNER_DIR, env.PYTHONPATH].filter(Boolean);
  return { ...env, PYTHONPATH: parts.join(":"), PYTHONUNBUFFERED: "1" };
}

/**
 * A peer learner/peers-aside.txt installs without its dependencies (.venv/peers/<name>-<version>, on no sys.path):
 * its pinned version and its folder ("" when it is not installed: run scripts/setup-python.mjs).
 */
export function asidePeer(name: string): { version: string; path: string } {
  const list = readFileSync(join(LEARNER_DIR, "peers-aside.txt"), "utf8");
  const version = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}==(\\S+)`, "m").exec(list)?.[1] ?? "";
  const dir = version ? join(REPO_ROOT, ".venv", "peers", `${name}-${version}`) : "";
  return { version, path: dir && existsSync(dir) ? dir : "" };
}

/** `env` with a peers-aside package's folder first on PYTHONPATH (unchanged when it is not installed). */
export function withAsidePeer(name: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const { path } = asidePeer(name);
  return path ? { ...env, PYTHONPATH: [path, env.PYTHONPATH].filter(Boolean).join(":") } : env;
}
