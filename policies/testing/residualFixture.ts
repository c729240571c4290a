/**
 * Test helper: a base package (make-fixture) plus a residual package written by the learner's own exporter
 * (`rlft_learner.export.package.export_residual_package`), with a randomly initialised actor head so the residual is non-zero,
 * a 3-head critic (critic.onnx) for critic-ranked best-of-N and a 3-head chunk critic (chunk_critic.onnx) over the
 * base's execute_steps actions.
 */
import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { dirname } from "node:path";
import { LEARNER_DIR, makeLearnerFixture } from "./learnerFixture.ts";
import { findPython } from "../../app/python.ts";

/** A base package dir, a residual package dir trained "on" it, and cleanup. */
export interface ResidualFixture {
  baseDir: string;
  residualDir: string;
  cleanup(): Promise<void>;
}

const SCRIPT = `
import sys, torch
from rlft_learner.export.package import export_residual_package
from rlft_learner.algorithms.residual_td3.nets import CriticEnsemble, ResidualActor
from rlft_learner.algorithms.residual_td3.agent import BasePackage
base = BasePackage.load(sys.argv[1])
torch.manual_seed(3)
actor = ResidualActor(len(base.obs_names), len(base.action_names), hidden=32, layers=2, scale=0.1)
torch.nn.init.normal_(actor.head.weight, std=0.5)
critic = CriticEnsemble(len(base.obs_names), len(base.action_names), hidden=16, layers=2, heads=3)
k = int(base.policy["action"]["execute_steps"])
chunk = CriticEnsemble(len(base.obs_names), k * len(base.action_names), hidden=16, layers=2, heads=3)
out, _ = export_residual_package(actor, base, sys.argv[2], updates=7, exploration_std=0.05, critic=critic, chunk_critic=(chunk, k))
print(out)
`;

/** Runs the learner's residual exporter on the base package in `baseDir`; resolves with the package directory under `parent`. */
export function exportResidualPackage(baseDir: string, parent: string): Promise<string> {
  const python = findPython();
  return new Promise<string>((resolve, reject) => {
    const child = spawn(python, ["-c", SCRIPT, baseDir, parent], { cwd: LEARNER_DIR, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", (e) => reject(new Error(`cannot run ${python}: ${e.message}`)));
    child.on("exit", (code) => (code === 0 ? resolve(stdout.trim().split("\n").at(-1)!) : reject(new Error(`residual export (cwd ${LEARNER_DIR}) exited ${code}:\n${stderr.slice(-2000)}`))));
  });
}

/** Runs make-fixture, then the residual exporter; rejects with the learner's stderr when it cannot. */
export async function makeResidualFixture(): Promise<ResidualFixture> {
  const base = await makeLearnerFixture();
  const parent = `${dirname(base.dir)}/residuals`;
  try {
    const out = await exportResidualPackage(base.dir, parent);
    return { baseDir: base.dir, residualDir: out, cleanup: () => base.cleanup().then(() => rm(parent, { recursive: true, force: true })) };
  } catch (e) {
    await base.cleanup();
    throw e;
  }
}
