/** Test helper: a randomly initialised, tiny SmolVLA checkpoint in LeRobot's layout, exported by `export-smolvla`. */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LEARNER_DIR } from "./learnerFixture.ts";
import { findPython } from "../../app/python.ts";

/** Runs the learner's Python with `args` in learner/; rejects with its stderr. */
export function runLearner(args: string[]): Promise<string> {
  const python = findPython();
  return new Promise<string>((resolve, reject) => {
    const child = spawn(python, args, { cwd: LEARNER_DIR, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", (e) => reject(new Error(`cannot run ${python} ${args.join(" ")}: ${e.message}`)));
    child.on("exit", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${python} ${args.join(" ")} exited ${code}:\n${stderr.slice(-2000)}`))));
  });
}

/**
 * Cameras front (40×56, upsampled into the 64² letterbox) and wrist (96×72, downsampled; optional) plus LeRobot's
 * empty_camera_0 (optional); 5 state and action names padded to 8; a byte-level BPE tokenizer; 4 text and expert layers.
 */
export async function makeSmolVlaFixture(extra: string[] = []): Promise<{ root: string; dir: string; cleanup(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), "rlft-smolvla-"));
  await runLearner(["-m", "rlft_learner", "export-smolvla", join(root, "ckpt"), "--make-random", "tiny", "--out", join(root, "pkg"), "--state-names", "q.j0,q.j1,q.j2,q.j3,q.j4", "--action-names", "j0,j1,j2,j3,j4", "--optional-camera", "wrist", "--execute-steps", "4", ...extra]);
  return { root, dir: join(root, "pkg"), cleanup: () => rm(root, { recursive: true, force: true }) };
}
