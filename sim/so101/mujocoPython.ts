/**
 * Runs mujoco_kinematics.py (MuJoCo's Python bindings, the learner's `peers` extra) on an MJCF file: the independent
 * reference the SO-101 kinematics and scene tests compare against.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { findPython } from "../../app/python.ts";

const SCRIPT = fileURLToPath(new URL("./mujoco_kinematics.py", import.meta.url));

/** One state to evaluate. */
export interface MujocoState {
  qpos: number[];
  mocap_pos?: number[];
  ctrl?: number[];
  /** mj_step calls after mj_forward (default 0). */
  steps?: number;
}

/** What MuJoCo reports for a state. */
export interface MujocoResult {
  site_pos: number[];
  /** Row-major 3×3. */
  site_mat: number[];
  qpos: number[];
}

/** Why the `mujoco` Python package cannot be used (with the fix), or null when it can. */
export function mujocoPythonUnavailable(): string | null {
  let py: string;
  try {
    py = findPython();
  } catch (e) {
    return (e as Error).message;
  }
  const r = spawnSync(py, ["-c", "import mujoco"], { encoding: "utf8" });
  return r.status === 0 ? null : `the mujoco Python package is missing from ${py} (node scripts/setup-python.mjs installs the peers extra)`;
}

/** Evaluates `states` of the model at `xml` with MuJoCo's Python bindings. */
export function mujocoPython(xml: string, site: string, states: MujocoState[]): { version: string; results: MujocoResult[] } {
  const r = spawnSync(findPython(), [SCRIPT], { input: JSON.stringify({ xml, site, states }), encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`mujoco_kinematics.py failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}
