/** Test helper: a real, tiny VLA package exported by the learner (`train-vla --synthetic`, a few steps). */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LEARNER_DIR } from "./learnerFixture.ts";

/** Trains 2 steps on synthetic data into a temp dir ($RLFT_PYTHON or /usr/bin/python3); `dir` is the package. */
export async function makeVlaFixture(): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), "rlft-vla-"));
  const python = process.env.RLFT_PYTHON ?? "/usr/bin/python3";
  const args = ["-m", "rlft_learner", "train-vla", "--synthetic", "--steps", "2", "--width", "32", "--log-every", "1", "--out", root];
  await new Promise<void>((resolve, reject) => {
    const child = spawn(python, args, { cwd: LEARNER_DIR, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", (e) => reject(new Error(`cannot run ${python} ${args.join(" ")}: ${e.message}`)));
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${python} ${args.join(" ")} exited ${code}:\n${stderr.slice(-2000)}`))));
  });
  return { dir: join(root, "package"), cleanup: () => rm(root, { recursive: true, force: true }) };
}
