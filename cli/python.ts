/**
 * Finding the Python interpreter that has the learner's dependencies.
 * The learner is PyTorch; on Debian the deps come from apt (`/usr/bin/python3`), elsewhere from pip.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

/** Python modules the learner imports. */
export const LEARNER_MODULES = ["torch", "numpy", "zmq", "msgpack", "onnx"] as const;

/** The exact Debian line that installs the learner's deps (OpenBLAS makes Debian's torch ~30x faster). */
export const APT_LINE =
  "sudo apt-get install -y python3-torch python3-numpy python3-zmq python3-msgpack python3-onnx python3-pytest python3-cryptography libopenblas0-pthread";

/** The pip line for machines that reach PyPI. */
export const PIP_LINE = "python3 -m pip install --user torch numpy pyzmq msgpack onnx pytest";

/** Absolute path of the learner's package root (added to PYTHONPATH). */
export const LEARNER_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "learner");

function hasModules(py: string): boolean {
  const code = `import ${LEARNER_MODULES.join(", ")}`;
  const r = spawnSync(py, ["-c", code], { stdio: "ignore", timeout: 60_000 });
  return r.status === 0;
}

/** Errors from the Python side of the stack. */
export class PythonNotFoundError extends Error {
  readonly code = "PYTHON_DEPS_MISSING";
}

/**
 * Returns a python3 that can import the learner's modules: $RLFT_PYTHON if set, then Debian's
 * /usr/bin/python3 (where apt puts torch), then python3 on PATH.
 * Throws PythonNotFoundError with the install line when none can.
 */
export function findPython(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [env.RLFT_PYTHON, "/usr/bin/python3", "python3"].filter((p): p is string => !!p);
  for (const py of candidates) if (hasModules(py)) return py;
  throw new PythonNotFoundError(
    `No python3 with the learner's modules (${LEARNER_MODULES.join(", ")}) was found (tried ${candidates.join(", ")}).\n` +
      `  Debian/Ubuntu: ${APT_LINE}\n  elsewhere:     ${PIP_LINE}\n  or point RLFT_PYTHON at an interpreter that has them.`,
  );
}

/** Tries `pip install --user` of the learner's deps; returns true when it worked (false offline / no pip). */
export function tryPipInstall(py = "python3"): boolean {
  const r = spawnSync(py, ["-m", "pip", "install", "--user", "torch", "numpy", "pyzmq", "msgpack", "onnx"], {
    stdio: "inherit",
    timeout: 30 * 60_000,
  });
  return r.status === 0 && hasModules(py);
}

/** Environment for a learner child process: PYTHONPATH includes learner/. */
export function learnerEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const parts = [LEARNER_DIR, env.PYTHONPATH].filter(Boolean);
  return { ...env, PYTHONPATH: parts.join(":"), PYTHONUNBUFFERED: "1" };
}
