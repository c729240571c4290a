/**
 * Attack rows on policy packages (issue 24 item 2, robot side, and the package weaker points): a signed residual whose
 * weights are all NaN reaches a running robot; a directory planted in the package cache under the next version's
 * name; a 40 MB policy.json. Listed in ATTACK_SCENARIOS (attackScenarios.ts).
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, cp, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Stack } from "../../launch/Stack.ts";
import { PolicySync } from "../../bridge/PolicySync.ts";
import type { PolicyMessage } from "../../bridge/messages.ts";
import type { PolicyActor } from "../../policies/actors/PolicyActor.ts";
import { PolicyPackage } from "../../policies/PolicyPackage.ts";
import type { OfferResult } from "../../policies/PolicySlot.ts";
import { generateSigningKey, loadPackageTrust, signPackage, type PackageTrust } from "../../policies/PackageSignature.ts";
import { exportResidualPackage } from "../../policies/testing/residualFixture.ts";
import { poisonPackage } from "../../policies/testing/poisonedFixture.ts";
import { auditDriver, launchConfig } from "./rig.ts";
import type { FaultContext, FaultRow, FaultScenario } from "./FaultScenario.ts";

const row = (scenario: string, injected: string, held: boolean, detail: string, unsafe = 0): FaultRow => ({ scenario, injected, survived: held, transitionsLost: 0, unsafeCommands: unsafe, detail });

/** A package directory as the learner's PUB carries it. */
async function packageMessage(dir: string): Promise<PolicyMessage> {
  const pj = JSON.parse(await readFile(join(dir, "policy.json"), "utf8")) as { version: string; kind: string; base?: { version: string } };
  const files = await Promise.all(
    (await readdir(dir)).sort().map(async (name) => {
      const data = await readFile(join(dir, name));
      return { name, data, sha256: createHash("sha256").update(data).digest("hex"), bytes: data.byteLength };
    }),
  );
  return { seq: 0, version: pj.version, kind: pj.kind, baseVersion: pj.base?.version ?? null, files };
}

/** A clean residual on the context's base and a trust list with the key that signs it (the learner's, in effect). */
async function signedResidual(ctx: FaultContext): Promise<{ clean: string; key: { privatePem: string }; trust: PackageTrust }> {
  const clean = await exportResidualPackage(ctx.baseDir, join(ctx.root, "residuals"));
  const key = generateSigningKey();
  await writeFile(join(ctx.root, "learner.sign.pub.pem"), key.publicPem);
  await signPackage(clean, key.privatePem);
  return { clean, key, trust: await loadPackageTrust([join(ctx.root, "learner.sign.pub.pem")]) };
}

export const nanPackage: FaultScenario = {
  name: "attack: signed all-NaN residual reaches a running robot",
  async run(ctx) {
    const { clean, key, trust } = await signedResidual(ctx);
    const files = (JSON.parse(await readFile(join(clean, "policy.json"), "utf8")) as { files: Record<string, string> }).files;
    const poisoned = join(ctx.root, "poisoned");
    const tensors = await poisonPackage(clean, poisoned, Object.values(files));
    await signPackage(poisoned, key.privatePem); // signed like a package from a poisoned learner with signing on
    const cfg = launchConfig({ baseDir: ctx.baseDir, out: join(ctx.root, "robot"), hz: 20, extra: "clock: wall\nreward: {sim_ground_truth: false}\n" });
    cfg.recorder.enabled = false;
    cfg.episodes.max_steps = 100_000;
    const stack = await Stack.create(cfg, { quiet: true, operatorGate: false });
    const audit = auditDriver(stack);
    const actor = stack.actor.actor as PolicyActor;
    const sync = await PolicySync.start({ endpoint: "tcp://127.0.0.1:1", cacheDir: join(ctx.root, "cache"), trust, logger: { warn: () => undefined, info: () => undefined } });
    const offers: { version: string; result: OfferResult }[] = [];
    sync.onPackage((p) => void actor.offerResidual(p.dir).then((result) => offers.push({ version: p.version, result })));
    const run = stack.runEpisodes({ count: 1, seed: 5 });
    run.catch(() => undefined);
    const waitFor = async (cond: () => boolean, what: string) => {
      for (const end = Date.now() + 60_000; !cond(); await new Promise((r) => setTimeout(r, 20))) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    };
    try {
      const base = actor.version;
      await waitFor(() => audit.writes > 10, "the policy to drive the arm");
      const accepted = await sync.ingest(await packageMessage(poisoned), "pub");
      await waitFor(() => offers.length === 1, "the robot's answer to the poisoned package");
      const w0 = audit.writes;
      await waitFor(() => audit.writes > w0 + 20, "20 more commands");
      const kept = actor.version === base;
      // Positive control: the clean package from the same signer swaps in.
      await sync.ingest(await packageMessage(clean), "pub");
      await waitFor(() => offers.length === 2 && actor.version !== base, "the clean package to swap in");
      const refusal = offers[0].result.ok ? "ACCEPTED" : (/(output "\w+" has .*|\d+ of \d+ outputs on probe inputs.*)/.exec(offers[0].result.reason)?.[1] ?? offers[0].result.reason).slice(0, 140);
      const held = accepted !== undefined && !offers[0].result.ok && kept && audit.unsafe === 0;
      return row("attack: signed all-NaN residual reaches a running robot", `a residual exported by the learner, its ${tensors} weight tensors set to NaN, hashes rewritten, signed by the trusted key, published while the policy drives the arm (20 Hz)`, held, `PolicySync: signature and hashes verified (${accepted ? "passed" : "refused"}); the policy slot refused it at warm-up: "${refusal}"; ${kept ? "the running policy kept driving" : "the policy CHANGED"} (${audit.writes - w0} commands, ${audit.unsafe} unsafe); the clean package then swapped in (issue 24 item 2: the robot swapped in an all-NaN package)`, audit.unsafe);
    } finally {
      stack.manager.abort("end of the scenario");
      await run.catch(() => undefined);
      await sync.close();
      await stack.shutdown();
    }
  },
};

export const packageCache: FaultScenario = {
  name: "attack: planted package cache directory, 40 MB policy.json",
  async run(ctx) {
    const { clean, trust } = await signedResidual(ctx);
    const version = (JSON.parse(await readFile(join(clean, "policy.json"), "utf8")) as { version: string }).version;
    // Someone who can write the cache plants a package (rogue-signed, its weights swapped) under the coming version's name.
    const cacheDir = join(ctx.root, "cache");
    await mkdir(cacheDir, { recursive: true });
    const planted = join(cacheDir, version);
    await cp(clean, planted, { recursive: true });
    const actor = JSON.parse(await readFile(join(planted, "policy.json"), "utf8")).files.actor as string;
    await writeFile(join(planted, actor), "planted weights");
    await signPackage(planted, generateSigningKey().privatePem);
    const warnings: string[] = [];
    const sync = await PolicySync.start({ endpoint: "tcp://127.0.0.1:1", cacheDir, trust, logger: { warn: (m) => warnings.push(m), info: () => undefined } });
    let replaced = false;
    try {
      const got = await sync.ingest(await packageMessage(clean), "pub");
      replaced = got !== undefined && (await readFile(join(planted, actor))).equals(await readFile(join(clean, actor))) && warnings.some((w) => w.includes("replacing it"));
    } finally {
      await sync.close();
    }
    const big = join(ctx.root, "big");
    await mkdir(big);
    await writeFile(join(big, "policy.json"), "");
    await truncate(join(big, "policy.json"), 40e6);
    const bigRefused = await PolicyPackage.load(big).then(
      () => "loaded",
      (e: { code?: string }) => e.code ?? "error",
    );
    return row("attack: planted package cache directory, 40 MB policy.json", "a rogue-signed package planted in the cache under the next version's name; a 40 MB policy.json", replaced && bigRefused === "too_large", `planted directory ${replaced ? "re-verified against the received package and replaced by it" : "TRUSTED"}; 40 MB policy.json: ${bigRefused} before reading (issue 24 weaker points: a cached directory was trusted by its name; 40 MB policy.json accepted)`);
  },
};
