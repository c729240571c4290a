/** Test helper: a real, tiny VLA package exported by the learner (`train-vla --synthetic`, a few steps). */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LEARNER_DIR } from "./learnerFixture.ts";
import { findPython } from "../../app/python.ts";

/** Runs the learner's interpreter with `args` in the learner directory; rejects with its stderr's tail. */
function learner(python: string, args: string[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(python, args, { cwd: LEARNER_DIR, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", (e) => reject(new Error(`cannot run ${python} ${args.join(" ")}: ${e.message}`)));
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${python} ${args.join(" ")} exited ${code}:\n${stderr.slice(-2000)}`))));
  });
}

/**
 * Trains 2 steps on synthetic data into a temp dir (the learner's interpreter: $RLFT_PYTHON or .venv); `dir` is the
 * package. `recap`: that package is then fine-tuned with RECAP (`train-vla --recap-dataset`) on synthetic "own"
 * episodes (half failed, a few operator ticks), and `dir` is the RECAP package, whose prompt template appends the
 * advantage indicator.
 */
export async function makeVlaFixture(opts: { recap?: boolean } = {}): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), "rlft-vla-"));
  const python = findPython();
  const small = ["--steps", "2", "--width", "32", "--log-every", "1",
    // A position token (training targets q.j0 and ee.x stand in for object positions): the exported prefix carries its head.
    "--aux-names", "q.j0,ee.x"];
  await learner(python, ["-m", "rlft_learner", "train-vla", "--synthetic", ...small, "--out", root]);
  if (!opts.recap) return { dir: join(root, "package"), cleanup: () => rm(root, { recursive: true, force: true }) };
  const script = [
    "import dataclasses, sys, numpy as np",
    "from rlft_learner.algorithms.vla.data import save_vla_dataset, synthetic_vla_dataset",
    "save_vla_dataset(sys.argv[1] + '/demos', synthetic_vla_dataset(seed=1))",
    "m = synthetic_vla_dataset(seed=2); op = np.zeros(int(m.lengths.sum()), np.uint8); op[[3, 4, 25]] = 1",
    "save_vla_dataset(sys.argv[1] + '/mixed', dataclasses.replace(m, success=[i % 2 == 0 for i in range(len(m.lengths))], intervention=op))",
  ].join("\n");
  await learner(python, ["-c", script, root]);
  await learner(python, ["-m", "rlft_learner", "train-vla", "--dataset", join(root, "demos"), "--recap-dataset", join(root, "mixed"),
    "--pretrained", join(root, "package"), "--value-steps", "5", ...small, "--out", join(root, "recap")]);
  return { dir: join(root, "recap", "package"), cleanup: () => rm(root, { recursive: true, force: true }) };
}
