/** Test helper: a real, tiny VLA package exported by the learner (`train-vla --synthetic`, a few steps). */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LEARNER_DIR } from "./learnerFixture.ts";
import { findPython } from "../../app/python.ts";

/** Trains 2 steps on synthetic data into a temp dir (the learner's interpreter: $RLFT_PYTHON or .venv); `dir` is the package. */
export async function makeVlaFixture(): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), "rlft-vla-"));
  const python = findPython();
  const args = ["-m", "rlft_learner", "train-vla", "--synthetic", "--steps", "2", "--width", "32", "--log-every", "1", "--out", root,
    // A position token (training targets q.j0 and ee.x stand in for object positions): the exported prefix carries its head.
    "--aux-names", "q.j0,ee.x"];
  await new Promise<void>((resolve, reject) => {
    const child = spawn(python, args, { cwd: LEARNER_DIR, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", (e) => reject(new Error(`cannot run ${python} ${args.join(" ")}: ${e.message}`)));
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${python} ${args.join(" ")} exited ${code}:\n${stderr.slice(-2000)}`))));
  });
  return { dir: join(root, "package"), cleanup: () => rm(root, { recursive: true, force: true }) };
}
