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
  return runLearnerScript(SCRIPT, [baseDir, parent], "residual export");
}

const PIXEL_SCRIPT = `
import sys, numpy as np
from rlft_learner.export.package import export_residual_package
from rlft_learner.commands.serve import make_agent
from rlft_learner.commands.serve_config import ServeConfig
from rlft_learner.algorithms.residual_td3.agent import BasePackage
base_dir, parent, frames_dir, encoder, updates, algorithm = sys.argv[1:7]
base = BasePackage.load(base_dir)
frames = {c["camera"]: np.fromfile(f"{frames_dir}/{c['camera']}.rgb", np.uint8).reshape(-1, c["height"], c["width"], 3)
          for c in base.policy["observation"]["images"]}
T = min(len(f) for f in frames.values())
cfg = ServeConfig(critic_heads=2, critic_hidden=16, actor_hidden=16, batch_size=16, critic_warmup_updates=0, policy_delay=1,
                  actor_lr=3e-3, image_encoder=encoder, algorithm=algorithm, seed=0)
n, m = len(base.obs_names), len(base.action_names)
agent = make_agent(cfg, n, m, base)
sac = algorithm == "rlpd_sac"
rng = np.random.default_rng(0)
for _ in range(int(updates)):  # synthetic transitions on recorded frames: frame t and its successor t+1
    i = rng.integers(0, T - 1, size=16)
    a = np.zeros((16, m), np.float32) if sac else rng.uniform(-1, 1, (16, m)).astype(np.float32)
    batch = {"obs": rng.normal(size=(16, n)).astype(np.float32), "base_action": a,
             "action": np.clip(a + rng.normal(0, 0.1, (16, m)), -1, 1).astype(np.float32),
             "ret": rng.integers(0, 2, 16).astype(np.float32), "discount": np.full(16, 0.97, np.float32),
             "next_obs": rng.normal(size=(16, n)).astype(np.float32), "next_base_action": a}
    for c, f in frames.items():
        batch[f"image.{c}"], batch[f"next_image.{c}"] = f[i].transpose(0, 3, 1, 2), f[i + 1].transpose(0, 3, 1, 2)
    agent.update_batch(batch)
out, _ = export_residual_package(agent.export_actor(), base, parent, agent.updates, agent.exploration_std() if sac else 0.05,
                                 version_prefix="sac" if sac else "res", frames={c: f[:4] for c, f in frames.items()})
print(out)
`;

/**
 * A residual package from pixels: the learner's pixel agent for `algorithm` (PixelResidualTD3, or PixelRlpdSAC over a
 * zero base) over the pixel base in `baseDir` (encoder path `encoder`), `updates` updates on synthetic transitions
 * whose frames are the recorded ones in `framesDir` (`<camera>.rgb`: packed rgb8 frames back to back), exported with
 * the first 4 frames as its test vectors.
 */
export function exportPixelResidualPackage(baseDir: string, parent: string, framesDir: string, options: { encoder?: "base" | "own"; updates?: number; algorithm?: "residual_td3" | "rlpd_sac" } = {}): Promise<string> {
  const args = [baseDir, parent, framesDir, options.encoder ?? "base", String(options.updates ?? 8), options.algorithm ?? "residual_td3"];
  return runLearnerScript(PIXEL_SCRIPT, args, "pixel residual export");
}

/** Runs `script` with the learner's Python in the learner directory; resolves with its last stdout line. */
function runLearnerScript(script: string, args: readonly string[], what: string): Promise<string> {
  const python = findPython();
  return new Promise<string>((resolve, reject) => {
    const child = spawn(python, ["-c", script, ...args], { cwd: LEARNER_DIR, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", (e) => reject(new Error(`cannot run ${python}: ${e.message}`)));
    child.on("exit", (code) => (code === 0 ? resolve(stdout.trim().split("\n").at(-1)!) : reject(new Error(`${what} (cwd ${LEARNER_DIR}) exited ${code}:\n${stderr.slice(-2000)}`))));
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
