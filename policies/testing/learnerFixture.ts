/** Test helper: a real policy package exported by the Python learner (`python3 -m rlft_learner make-fixture`). */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPython, LEARNER_DIR } from "../../app/python.ts";

/** The repository's learner/ directory (the cwd make-fixture runs in). */
export { LEARNER_DIR };

/** A package directory in a fresh temp dir; `cleanup()` removes it. */
export interface LearnerFixture {
  dir: string;
  cleanup(): Promise<void>;
}

/** Runs make-fixture into a temp dir (`indicator`: a RECAP package with value head, `cfgBeta` baked in) (the learner's interpreter: $RLFT_PYTHON or .venv); rejects with the learner's stderr on failure. */
export async function makeLearnerFixture(options: { obsDim?: number; actionDim?: number; indicator?: boolean; cfgBeta?: number; cameras?: readonly string[]; imageSize?: number; steps?: number } = {}): Promise<LearnerFixture> {
  const root = await mkdtemp(join(tmpdir(), "rlft-policy-"));
  const dir = join(root, "pkg");
  const python = findPython();
  const args = ["-m", "rlft_learner", "make-fixture", "--out", dir];
  if (options.obsDim !== undefined) args.push("--obs-dim", String(options.obsDim));
  if (options.actionDim !== undefined) args.push("--action-dim", String(options.actionDim));
  if (options.indicator) args.push("--indicator");
  if (options.cfgBeta !== undefined) args.push("--cfg-beta", String(options.cfgBeta));
  if (options.cameras?.length) args.push("--cameras", options.cameras.join(","));
  if (options.imageSize !== undefined) args.push("--image-size", String(options.imageSize));
  if (options.steps !== undefined) args.push("--steps", String(options.steps));
  await new Promise<void>((resolve, reject) => {
    const child = spawn(python, args, { cwd: LEARNER_DIR, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", (e) => reject(new Error(`cannot run ${python} ${args.join(" ")} in ${LEARNER_DIR}: ${e.message}`)));
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${python} ${args.join(" ")} (cwd ${LEARNER_DIR}) exited ${code}:\n${stderr.slice(-2000)}`))));
  });
  return { dir, cleanup: () => rm(root, { recursive: true, force: true }) };
}
