// Security negatives against the real learner (docs/security.md): with CURVE keys from `rlft keys` and a signing key,
// an authorized robot streams and receives signed packages; a robot with unknown keys and a plain (non-CURVE) peer get
// no answer and store nothing; an impostor learner (other CURVE keys) can neither greet the robot nor publish it a
// policy. The learner's own `done` line proves nothing of theirs was stored.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Dealer, Publisher, Router } from "zeromq";
import { ExperienceBridge } from "../bridge/ExperienceBridge.ts";
import { PolicySync } from "../bridge/PolicySync.ts";
import { encodeHello } from "../bridge/messages.ts";
import { encodeMessage } from "../bridge/wire.ts";
import { generateCurveCertificate, loadCurveClientKeys } from "../bridge/CurveCertificate.ts";
import { loadPackageTrust } from "../policies/PackageSignature.ts";
import { makeTransitionOf, recordingLogger, waitFor } from "../bridge/testing/helpers.ts";
import { makeLearnerFixture } from "../policies/testing/learnerFixture.ts";
import { generateKeys } from "../app/keys.ts";
import { startLearnerOnFreePorts, tinyLearnerArgs } from "./support/LearnerProc.ts";
import { freePort } from "./servers.ts";

test("CURVE + signed packages: the authorized robot works; unknown peers and an impostor learner get nowhere", { timeout: 120_000 }, async () => {
  const fx = await makeLearnerFixture();
  const root = await mkdtemp(join(tmpdir(), "rlft-sec-"));
  const keys = join(root, "keys");
  await generateKeys(keys, { robots: ["sim-0"] });
  const pj = JSON.parse(await readFile(join(fx.dir, "policy.json"), "utf8"));
  const [obsNames, actionNames, version] = [pj.observation.names as string[], pj.action.names as string[], pj.version as string];
  const { proc: learner, experience, policy } = await startLearnerOnFreePorts((experience, policy) => tinyLearnerArgs({
    base: fx.dir, runDir: join(root, "run"), experience, policy,
    extra: ["--curve-secret", join(keys, "learner.key_secret"), "--curve-authorized", join(keys, "authorized"), "--sign-key", join(keys, "learner.sign.pem"), "--publish-every", "40"],
  }));
  const closers: (() => unknown)[] = [];
  try {
    await learner.event("progress");
    const hello = { configHash: "cfg", obsNames, actionNames, task: "task", basePolicyVersion: version };
    const bridgeOpts = { endpoint: experience, spoolDir: join(root, "spool"), ...hello, batchSize: 16, flushIntervalMs: 20, deadlineMs: 1500, reconnectDelayMs: 100, heartbeatSec: 0.2 };
    const trust = await loadPackageTrust([join(keys, "learner.sign.pub.pem")]);
    const robotKeys = await loadCurveClientKeys({ secretCertificate: join(keys, "sim-0.key_secret"), serverCertificate: join(keys, "learner.key") });

    // 1. The authorized robot: streams, gets acks, receives a signed package and verifies it.
    const bridge = await ExperienceBridge.open({ ...bridgeOpts, robotId: "sim-0", curve: robotKeys, logger: recordingLogger() });
    closers.push(() => bridge.close());
    const sync = await PolicySync.start({ endpoint: policy, cacheDir: join(root, "cache"), experience: bridge, curve: robotKeys, trust, logger: recordingLogger() });
    closers.push(() => sync.close());
    for (let i = 0; i < 300; i++) bridge.push(makeTransitionOf(1, i, obsNames.length, actionNames.length));
    assert.equal(await bridge.flush({ timeoutMs: 30_000 }), true, "the authorized robot's transitions are acked");
    await waitFor(() => sync.counters.accepted > 0, "a signed package verified by the robot", 60_000);
    const cached = await readdir(join(root, "cache"));
    assert.ok((await readdir(join(root, "cache", cached.find((d) => !d.startsWith("."))!))).includes("policy.sig"));
    assert.equal(sync.counters.rejected, 0, JSON.stringify(sync.rejections));

    // 2. A robot with keys the learner has never seen (right server key): the handshake is refused, nothing stored.
    const rogue = generateCurveCertificate();
    const rogueLog = recordingLogger();
    const rogueBridge = await ExperienceBridge.open({ ...bridgeOpts, robotId: "rogue", curve: { ...rogue, serverKey: robotKeys.serverKey }, logger: rogueLog });
    closers.push(() => rogueBridge.close());
    for (let i = 0; i < 40; i++) rogueBridge.push(makeTransitionOf(2, i, obsNames.length, actionNames.length));
    await waitFor(() => rogueLog.warnings.some((w) => /did not answer hello/.test(w)), "the rogue robot's hello to time out", 20_000);
    assert.equal(rogueBridge.stats().linkUp, false);
    assert.equal(rogueBridge.stats().acked, 0);
    assert.match(rogueBridge.stats().lastError ?? "", /CURVE/);

    // 3. A plain ZeroMQ peer (no CURVE at all) sending a well-formed hello: never answered.
    const plain = new Dealer({ linger: 0, receiveTimeout: 1500 });
    closers.push(() => plain.close());
    plain.connect(experience);
    await plain.send(encodeHello(1, { robotId: "plain", ...hello }));
    await assert.rejects(plain.receive(), /timed out|Socket timed out|EAGAIN/i);

    // 4. An impostor learner (its own CURVE keys): the robot, pinned to the real learner key, never links to it and
    //    never takes a package from its PUB.
    const impostor = generateCurveCertificate();
    const fakeExp = `tcp://127.0.0.1:${await freePort()}`;
    const fakePub = `tcp://127.0.0.1:${await freePort()}`;
    const router = new Router({ linger: 0, curveServer: true, curveSecretKey: impostor.secretKey, curvePublicKey: impostor.publicKey });
    const pub = new Publisher({ linger: 0, curveServer: true, curveSecretKey: impostor.secretKey, curvePublicKey: impostor.publicKey });
    closers.push(() => router.close(), () => pub.close());
    await router.bind(fakeExp);
    await pub.bind(fakePub);
    let impostorHeard = 0;
    void (async () => {
      try {
        for await (const _ of router) impostorHeard++;
      } catch {
        // closed
      }
    })();
    const victimLog = recordingLogger();
    const victim = await ExperienceBridge.open({ ...bridgeOpts, endpoint: fakeExp, spoolDir: join(root, "spool-victim"), robotId: "sim-0", curve: robotKeys, logger: victimLog });
    closers.push(() => victim.close());
    const victimSync = await PolicySync.start({ endpoint: fakePub, cacheDir: join(root, "cache-victim"), curve: robotKeys, trust, logger: recordingLogger() });
    closers.push(() => victimSync.close());
    const fake = encodeMessage({ type: "policy", seq: 0, version: "res-evil", kind: "residual", base_version: version, files: [] });
    const until = Date.now() + 2500;
    while (Date.now() < until) {
      await pub.send([Buffer.from("policy"), ...fake]);
      await new Promise((r) => setTimeout(r, 50));
    }
    await waitFor(() => victimLog.warnings.some((w) => /did not answer hello/.test(w)), "the robot's hello to the impostor to time out", 20_000);
    assert.equal(impostorHeard, 0, "the impostor never decrypted a message from the robot");
    assert.equal(victim.stats().linkUp, false);
    assert.equal(victimSync.counters.received, 0, "no publication from the impostor reached the robot");

    for (const c of closers.splice(0).reverse()) await c();
    const done = await learner.stop();
    const robots = done.robots as Record<string, { online_rows: number }>;
    assert.deepEqual(Object.keys(robots), ["sim-0"], "only the authorized robot is known to the learner");
    assert.equal(robots["sim-0"].online_rows, 300);
    assert.equal(done.malformed, 0, "the refused peers never reached the application");
  } finally {
    for (const c of closers.reverse()) await c();
    await learner.kill();
    await rm(root, { recursive: true, force: true });
    await fx.cleanup();
  }
});
