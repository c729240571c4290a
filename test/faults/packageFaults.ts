/**
 * Scenario: bad policy packages reach a running robot — wrong sha in the publication, files that do not match
 * policy.json, unsigned, signed by an untrusted key, and a corrupt ONNX file that is correctly hashed and signed (it
 * passes PolicySync and must fail at load). The residual that runs before keeps running through all of them.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PolicySync } from "../../bridge/PolicySync.ts";
import type { PolicyMessage } from "../../bridge/messages.ts";
import { Stack } from "../../launch/Stack.ts";
import type { PolicyActor } from "../../policies/actors/PolicyActor.ts";
import { generateSigningKey, loadPackageTrust, signPackage, SIGNATURE_FILE } from "../../policies/PackageSignature.ts";
import { LEARNER_DIR } from "../../policies/testing/learnerFixture.ts";
import { findPython } from "../../app/python.ts";
import { freePort } from "../servers.ts";
import { auditDriver, launchConfig } from "./rig.ts";
import type { FaultContext, FaultRow } from "./FaultScenario.ts";

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** The learner's own exporter writes a residual package on `baseDir` (random non-zero head). */
async function exportResidual(baseDir: string, parent: string): Promise<string> {
  const script = `
import sys, torch
from rlft_learner.export.package import export_residual_package
from rlft_learner.algorithms.residual_td3.nets import ResidualActor
from rlft_learner.algorithms.residual_td3.agent import BasePackage
base = BasePackage.load(sys.argv[1])
torch.manual_seed(3)
actor = ResidualActor(len(base.obs_names), len(base.action_names), hidden=32, layers=2, scale=0.1)
torch.nn.init.normal_(actor.head.weight, std=0.5)
print(export_residual_package(actor, base, sys.argv[2], updates=7, exploration_std=0.0)[0])
`;
  return new Promise((resolve, reject) => {
    const c = spawn(findPython(), ["-c", script, baseDir, parent], { cwd: LEARNER_DIR, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    c.stdout.on("data", (d: Buffer) => (out += d.toString()));
    c.stderr.on("data", (d: Buffer) => (err += d.toString()));
    c.on("exit", (code) => (code === 0 ? resolve(out.trim().split("\n").at(-1)!) : reject(new Error(`residual export failed:\n${err.slice(-2000)}`))));
  });
}

async function message(dir: string): Promise<PolicyMessage> {
  const pj = JSON.parse(await readFile(join(dir, "policy.json"), "utf8"));
  const files = await Promise.all((await readdir(dir)).sort().map(async (name) => {
    const data = await readFile(join(dir, name));
    return { name, data, sha256: sha(data), bytes: data.byteLength };
  }));
  return { seq: 0, version: pj.version, kind: pj.kind, baseVersion: pj.base.version, files };
}

/** Scenario run; see the file comment. */
export async function policyPackageFaults(ctx: FaultContext): Promise<FaultRow> {
  const learnerKey = generateSigningKey();
  const rogueKey = generateSigningKey();
  await writeFile(join(ctx.root, "learner.sign.pub.pem"), learnerKey.publicPem);
  const trust = await loadPackageTrust([join(ctx.root, "learner.sign.pub.pem")]);
  const good = await exportResidual(ctx.baseDir, join(ctx.root, "exported"));
  await signPackage(good, learnerKey.privatePem);
  const variant = async (name: string, change: (dir: string, pj: Record<string, unknown>) => Promise<void>, sign: string | null): Promise<string> => {
    const dir = join(ctx.root, "variants", name);
    await mkdir(join(ctx.root, "variants"), { recursive: true });
    await cp(good, dir, { recursive: true });
    await rm(join(dir, SIGNATURE_FILE));
    const pj = JSON.parse(await readFile(join(dir, "policy.json"), "utf8"));
    pj.version = `${pj.version}-${name}`;
    await change(dir, pj);
    await writeFile(join(dir, "policy.json"), JSON.stringify(pj));
    if (sign) await signPackage(dir, sign);
    return dir;
  };
  const cfg = launchConfig({ baseDir: ctx.baseDir, out: join(ctx.root, "robot") });
  cfg.operator.enabled = false;
  cfg.recorder.enabled = false;
  const stack = await Stack.create(cfg, { quiet: true });
  const audit = auditDriver(stack);
  const actor = stack.actor.actor as PolicyActor;
  const sync = await PolicySync.start({ endpoint: `tcp://127.0.0.1:${await freePort()}`, cacheDir: join(ctx.root, "cache"), trust, logger: { warn: () => undefined, info: () => undefined } });
  const loadFailures: string[] = [];
  sync.onPackage((p) => void actor.offerResidual(p.dir).then((r) => !r.ok && loadFailures.push(r.reason)));
  try {
    const accepted = await sync.ingest(await message(good), "pub");
    if (!accepted || !(await actor.offerResidual(accepted.dir)).ok) throw new Error("the good signed package was not loaded");
    await stack.runEpisodes({ count: 1, seed: 1 });
    const running = actor.version;
    const bad: [string, PolicyMessage][] = [];
    const wrongHeader = await message(good);
    wrongHeader.version = `${wrongHeader.version}-hdr`;
    wrongHeader.files = wrongHeader.files.map((f) => (f.name === "residual.onnx" ? { ...f, data: Buffer.from("flipped bits") } : f));
    bad.push(["header sha mismatch", wrongHeader]);
    bad.push(["file ≠ policy.json sha", await message(await variant("stale-sha", async (dir) => writeFile(join(dir, "residual.onnx"), Buffer.from("other weights")), learnerKey.privatePem))]);
    bad.push(["unsigned", await message(await variant("unsigned", async () => undefined, null))]);
    bad.push(["untrusted key", await message(await variant("rogue", async () => undefined, rogueKey.privatePem))]);
    bad.push(["corrupt ONNX, hashed + signed", await message(await variant("corrupt-onnx", async (dir, pj) => {
      const junk = Buffer.from("this is not an onnx model");
      await writeFile(join(dir, "residual.onnx"), junk);
      (pj.sha256 as Record<string, string>)["residual.onnx"] = sha(junk);
    }, learnerKey.privatePem))]);
    for (const [, m] of bad) await sync.ingest(m, "pub");
    // The corrupt ONNX load fails off the control path, whenever the worker gets to it: wait for the verdict, not a time.
    for (let i = 0; i < 600 && loadFailures.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    await stack.runEpisodes({ count: 1, seed: 2 });
    const kept = actor.version === running;
    const refused = sync.counters.rejected + loadFailures.length;
    return {
      scenario: "bad policy packages", injected: bad.map(([n]) => n).join(", "),
      survived: kept && refused === bad.length && audit.unsafe === 0, transitionsLost: 0, unsafeCommands: audit.unsafe,
      detail: `${sync.counters.rejected} refused by PolicySync (sha/signature), ${loadFailures.length} by the policy slot (ONNX load); ${running} kept running through all`,
    };
  } finally {
    await sync.close();
    await stack.shutdown();
  }
}
