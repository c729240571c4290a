// PolicySync against the TS learner stub: a good package published on the PUB is verified and emitted; a package
// whose bytes do not match the header's sha256 is rejected and never becomes visible; a late joiner fetches the
// latest package with get_policy after welcome.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { firstValueFrom } from "rxjs";
import { PolicySync, type ReceivedPackage, type RejectedPackage } from "./PolicySync.ts";
import { ExperienceBridge } from "./ExperienceBridge.ts";
import { LearnerStub, type StubPolicy } from "./testing/LearnerStub.ts";
import { recordingLogger, waitFor } from "./testing/helpers.ts";

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** A residual package (policy.json + a stand-in residual.onnx; PolicySync verifies, it does not load). */
function residualPackage(version: string): StubPolicy {
  const onnx = Buffer.from(`not really onnx ${version}`);
  const policy = {
    format: "rlft-policy", format_version: 1, kind: "residual", version, created: "2026-12-01T00:00:00Z",
    provenance: { learner: "stub", updates: 3 }, base: { version: "bc-push_cube-x", policy_json_sha256: "a".repeat(64) },
    observation: { names: ["a", "b"], mean: [0, 0], std: [1, 1] }, action: { names: ["x"], min: [-1], max: [1] },
    residual: { scale: 0.1, exploration_std: 0.05 }, files: { actor: "residual.onnx" }, sha256: { "residual.onnx": sha(onnx) },
  };
  const pj = Buffer.from(JSON.stringify(policy));
  return { version, kind: "residual", baseVersion: "bc-push_cube-x", files: [{ name: "policy.json", data: pj, sha256: sha(pj) }, { name: "residual.onnx", data: onnx, sha256: sha(onnx) }] };
}

async function setup() {
  const stub = await LearnerStub.start();
  const cacheDir = await mkdtemp(join(tmpdir(), "rlft-policy-cache-"));
  const logger = recordingLogger();
  return { stub, cacheDir, logger, cleanup: async () => { stub.close(); await rm(cacheDir, { recursive: true, force: true }); } };
}

/** Publishes until `done()` (PUB drops messages sent before the SUB has joined). */
async function publishUntil(stub: LearnerStub, frames: StubPolicy, done: () => boolean): Promise<void> {
  await waitFor(() => {
    if (!done()) void stub.publishPolicy(frames);
    return done();
  }, "the publication to arrive");
}

test("a good package is verified, cached under its version and emitted once; a sha mismatch is rejected and never visible", async () => {
  const s = await setup();
  const sync = await PolicySync.start({ endpoint: s.stub.policyEndpoint, cacheDir: s.cacheDir, logger: s.logger });
  try {
    const rejected: RejectedPackage[] = [];
    sync.onRejected((r) => rejected.push(r));
    const bad = residualPackage("res-bad-u1");
    bad.files[1] = { ...bad.files[1], data: Buffer.from("tampered bytes") };
    await publishUntil(s.stub, bad, () => rejected.length > 0);
    assert.equal(rejected[0].version, "res-bad-u1");
    assert.match(rejected[0].reason, /residual\.onnx: the header says sha256 [0-9a-f]{64}, the bytes hash to/);

    const got: ReceivedPackage[] = [];
    sync.onPackage((p) => got.push(p));
    const first = firstValueFrom(sync.packages$());
    await publishUntil(s.stub, residualPackage("res-good-u2"), () => got.length > 0);
    assert.equal((await first).version, "res-good-u2");
    await s.stub.publishPolicy(residualPackage("res-good-u2"));
    assert.deepEqual([got.length, got[0].version, got[0].kind, got[0].source], [1, "res-good-u2", "residual", "pub"]);
    assert.deepEqual((await readdir(s.cacheDir)).sort(), ["res-good-u2"], "only the verified package is visible; no temp dirs left");
    assert.equal(JSON.parse(await readFile(join(got[0].dir, "policy.json"), "utf8")).version, "res-good-u2");
  } finally {
    await sync.close();
    await s.cleanup();
  }
});

test("a package whose policy.json hashes disagree with its files, or that does not validate, is rejected", async () => {
  const s = await setup();
  const sync = await PolicySync.start({ endpoint: s.stub.policyEndpoint, cacheDir: s.cacheDir, logger: s.logger });
  try {
    const p = residualPackage("res-inner-u1");
    const json = JSON.parse(p.files[0].data.toString()) as Record<string, unknown>;
    json.sha256 = { "residual.onnx": "b".repeat(64) };
    const pj = Buffer.from(JSON.stringify(json));
    p.files[0] = { name: "policy.json", data: pj, sha256: sha(pj) };
    assert.equal(await sync.ingest({ seq: 0, version: p.version, kind: p.kind, baseVersion: p.baseVersion, files: p.files.map((f) => ({ ...f, bytes: f.data.byteLength, data: Buffer.from(f.data) })) }, "pub"), undefined);
    const q = residualPackage("../escape");
    assert.equal(await sync.ingest({ seq: 0, version: q.version, kind: q.kind, baseVersion: null, files: [] }, "pub"), undefined);
    assert.equal(sync.counters.rejected, 2);
    assert.match(s.logger.warnings.join("\n"), /sha256 mismatch/);
    assert.deepEqual(await readdir(s.cacheDir), []);
  } finally {
    await sync.close();
    await s.cleanup();
  }
});

test("a late joiner fetches the learner's latest package with get_policy after welcome", async () => {
  const s = await setup();
  s.stub.latestPolicy = residualPackage("res-latest-u9");
  s.stub.behaviour.silent = true; // the learner answers only once PolicySync listens for welcomes
  const spoolDir = await mkdtemp(join(tmpdir(), "rlft-bridge-"));
  const bridge = await ExperienceBridge.open({
    endpoint: s.stub.endpoint, spoolDir, robotId: "late", configHash: "c", obsNames: ["a", "b"], actionNames: ["x"], task: "t", basePolicyVersion: "bc-push_cube-x",
    deadlineMs: 1000, reconnectDelayMs: 30, logger: s.logger,
  });
  const sync = await PolicySync.start({ endpoint: s.stub.policyEndpoint, cacheDir: s.cacheDir, experience: bridge, currentVersion: "res-old", logger: s.logger });
  try {
    const got: ReceivedPackage[] = [];
    sync.onPackage((p) => got.push(p));
    s.stub.behaviour.silent = false;
    await waitFor(() => got.length === 1, "the fetched package");
    assert.deepEqual([got[0].version, got[0].source], ["res-latest-u9", "get_policy"]);
  } finally {
    await sync.close();
    await bridge.close();
    await rm(spoolDir, { recursive: true, force: true });
    await s.cleanup();
  }
});
