// Package signatures: a package signed by a trusted key verifies; unsigned, signed by an unknown key, tampered after
// signing, or with a malformed policy.sig are refused with a `signature` error naming the fix. PolicySync with a trust
// list refuses the same packages and never makes them visible in its cache.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSigningKey, loadPackageTrust, signPackage, verifyPackageSignature, SIGNATURE_FILE } from "./PackageSignature.ts";
import { PolicyPackageError } from "./PolicyPackageError.ts";
import { PolicySync } from "../bridge/PolicySync.ts";
import type { PolicyMessage } from "../bridge/messages.ts";
import { recordingLogger } from "../bridge/testing/helpers.ts";

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

async function writePackage(dir: string, version: string): Promise<void> {
  const onnx = Buffer.from(`stand-in residual ${version}`);
  const policy = {
    format: "rlft-policy", format_version: 1, kind: "residual", version, created: "2026-12-01T00:00:00Z",
    provenance: { learner: "test" }, base: { version: "bc-x", policy_json_sha256: "a".repeat(64) },
    observation: { names: ["a"], mean: [0], std: [1] }, action: { names: ["x"], min: [-1], max: [1] },
    residual: { scale: 0.1, exploration_std: 0.05 }, files: { actor: "residual.onnx" }, sha256: { "residual.onnx": sha(onnx) },
  };
  await writeFile(join(dir, "residual.onnx"), onnx);
  await writeFile(join(dir, "policy.json"), JSON.stringify(policy));
}

async function message(dir: string, version: string): Promise<PolicyMessage> {
  const names = (await readdir(dir)).sort();
  const files = await Promise.all(names.map(async (name) => {
    const data = await readFile(join(dir, name));
    return { name, data, sha256: sha(data), bytes: data.byteLength };
  }));
  return { seq: 0, version, kind: "residual", baseVersion: "bc-x", files };
}

async function setup() {
  const root = await mkdtemp(join(tmpdir(), "rlft-sig-"));
  const learner = generateSigningKey();
  const rogue = generateSigningKey();
  await writeFile(join(root, "learner.sign.pub.pem"), learner.publicPem);
  const trust = await loadPackageTrust([join(root, "learner.sign.pub.pem")]);
  const pkg = async (name: string, sign?: string) => {
    const dir = join(root, name);
    await rm(dir, { recursive: true, force: true });
    await (await import("node:fs/promises")).mkdir(dir);
    await writePackage(dir, name);
    if (sign) await signPackage(dir, sign);
    return dir;
  };
  return { root, learner, rogue, trust, pkg, cleanup: () => rm(root, { recursive: true, force: true }) };
}

test("a trusted signature verifies; unsigned, untrusted, tampered and malformed signatures are refused", async () => {
  const s = await setup();
  try {
    assert.match(await verifyPackageSignature(await s.pkg("res-good", s.learner.privatePem), s.trust), /^[0-9a-f]{16}$/);
    const refused = async (dir: string, re: RegExp) => {
      await assert.rejects(verifyPackageSignature(dir, s.trust), (e: unknown) => e instanceof PolicyPackageError && e.code === "signature" && re.test(e.message));
    };
    await refused(await s.pkg("res-unsigned"), /is not signed .* set sign_key on the learner/);
    await refused(await s.pkg("res-rogue", s.rogue.privatePem), /does not trust.*trusted_signers/);
    const tampered = await s.pkg("res-tampered", s.learner.privatePem);
    const pj = JSON.parse(await readFile(join(tampered, "policy.json"), "utf8"));
    pj.residual.scale = 1.0; // a bigger residual than the learner exported
    await writeFile(join(tampered, "policy.json"), JSON.stringify(pj));
    await refused(tampered, /signature of key [0-9a-f]{16} does not match policy\.json/);
    const malformed = await s.pkg("res-malformed", s.learner.privatePem);
    await writeFile(join(malformed, SIGNATURE_FILE), "{\"alg\":\"rsa\"}");
    await refused(malformed, /malformed/);
  } finally {
    await s.cleanup();
  }
});

test("PolicySync with a trust list accepts the signed package and never caches unsigned or rogue ones", async () => {
  const s = await setup();
  const cacheDir = join(s.root, "cache");
  const logger = recordingLogger();
  const sync = await PolicySync.start({ endpoint: "tcp://127.0.0.1:1", cacheDir, trust: s.trust, logger });
  try {
    assert.equal(await sync.ingest(await message(await s.pkg("res-unsigned"), "res-unsigned"), "pub"), undefined);
    assert.equal(await sync.ingest(await message(await s.pkg("res-rogue", s.rogue.privatePem), "res-rogue"), "pub"), undefined);
    const ok = await sync.ingest(await message(await s.pkg("res-good", s.learner.privatePem), "res-good"), "pub");
    assert.equal(ok?.version, "res-good");
    assert.deepEqual((await readdir(cacheDir)).sort(), ["res-good"]);
    assert.deepEqual(sync.counters, { received: 3, accepted: 1, rejected: 2 });
    assert.match(sync.rejections[0].reason, /not signed/);
    assert.match(sync.rejections[1].reason, /does not trust/);
  } finally {
    await sync.close();
    await s.cleanup();
  }
});

test("a cache directory planted under a version's name is re-verified, never trusted for its name", async () => {
  // Issue 24 (weaker point): PolicySync accepted any existing <cache>/<version>/ as already verified.
  const s = await setup();
  const cacheDir = join(s.root, "cache");
  const logger = recordingLogger();
  const sync = await PolicySync.start({ endpoint: "tcp://127.0.0.1:1", cacheDir, trust: s.trust, logger });
  try {
    // Someone with write access to the cache plants a rogue-signed package under the name of the next version.
    const planted = await s.pkg("res-next", s.rogue.privatePem);
    await writeFile(join(planted, "residual.onnx"), "planted weights");
    await (await import("node:fs/promises")).cp(planted, join(cacheDir, "res-next"), { recursive: true });
    // 1. The learner's package under that name is itself refused (unsigned): nothing is emitted, planted or not.
    assert.equal(await sync.ingest(await message(await s.pkg("res-next"), "res-next"), "pub"), undefined);
    assert.match(sync.rejections.at(-1)!.reason, /not signed/);
    // 2. The learner's signed package arrives: verified as new, and it replaces the planted directory.
    const genuine = await s.pkg("res-next", s.learner.privatePem);
    const got = await sync.ingest(await message(genuine, "res-next"), "pub");
    assert.equal(got?.version, "res-next");
    assert.equal(await readFile(join(cacheDir, "res-next", "residual.onnx"), "utf8"), await readFile(join(genuine, "residual.onnx"), "utf8"));
    await verifyPackageSignature(join(cacheDir, "res-next"), s.trust);
    assert.ok(logger.warnings.some((l) => /cached .*res-next is not the package the learner sent .*replacing it/.test(l)), logger.warnings.join("\n"));
    assert.deepEqual((await readdir(cacheDir)).sort(), ["res-next"], "no temp or stale directories left");
    // 3. A cached copy that is exactly the package is used as it is (a restart re-receiving its latest package).
    const again = await PolicySync.start({ endpoint: "tcp://127.0.0.1:1", cacheDir, trust: s.trust, logger });
    try {
      const warned = logger.warnings.length;
      assert.equal((await again.ingest(await message(genuine, "res-next"), "get_policy"))?.version, "res-next");
      assert.equal(logger.warnings.length, warned, "nothing replaced");
    } finally {
      await again.close();
    }
  } finally {
    await sync.close();
    await s.cleanup();
  }
});
