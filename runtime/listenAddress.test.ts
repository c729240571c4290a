/**
 * Every listening address of the TypeScript side goes through one check (docs/security.md §3): loopback always,
 * anything else only with the listener's authentication or `insecure_public_bind`. The last test keeps it so: a source
 * file that listens or binds without calling checkListenAddress fails it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkListenAddress, isLoopbackAddress, ListenAddressError, listenHost } from "./listenAddress.ts";
import { ZmqProxy } from "./embedded/ZmqProxy.ts";
import { EmbeddedBroker } from "../telemetry/mqtt/EmbeddedBroker.ts";
import { OperatorUiServer } from "../web/OperatorUiServer.ts";
import { runSession } from "../app/session.ts";
import { parseLaunch } from "../launch/LaunchConfig.ts";

test("loopback, ipc and inproc stay on this machine; everything else may not", () => {
  for (const a of ["127.0.0.1", "127.4.5.6", "::1", "[::1]", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "localhost", "tcp://127.0.0.1:5555", "tcp://127.0.0.1:*", "tcp://[::1]:5555", "tcp://localhost:1", "ipc:///tmp/rlft.sock", "inproc://bus"]) {
    assert.equal(isLoopbackAddress(a), true, a);
  }
  for (const a of ["0.0.0.0", "::", "[::]", "*", "192.168.1.20", "10.0.0.1", "fe80::1", "tcp://*:5555", "tcp://0.0.0.0:5555", "tcp://eth0:5555", "tcp://[::]:5555", "tcp://robot.lab:5555", "lab-host", "128.0.0.1"]) {
    assert.equal(isLoopbackAddress(a), false, a);
  }
  assert.equal(listenHost("tcp://[fe80::1]:5555"), "fe80::1");
  assert.equal(listenHost("tcp://host:5555"), "host");
  assert.equal(listenHost("::1"), "::1");
});

test("a public address needs authentication or the explicit opt-in; the error names the setting, the risk and the fixes", () => {
  const base = { setting: "x.bind", address: "tcp://0.0.0.0:1", risk: "do harm", authFix: "set x.key" };
  assert.throws(() => checkListenAddress({ ...base, authenticated: false, insecurePublicBind: false }), (e: unknown) => {
    assert.ok(e instanceof ListenAddressError);
    assert.equal(e.message, "x.bind tcp://0.0.0.0:1 listens beyond this machine without authentication: anyone on the network could do harm. Set x.key, or keep x.bind on 127.0.0.1 and reach it through an SSH tunnel, or set insecure_public_bind: true on a network you trust");
    return true;
  });
  // No opt-in offered (the operator UI): the message does not suggest one.
  assert.throws(() => checkListenAddress({ ...base, authenticated: false }), (e: unknown) => !(e as Error).message.includes("insecure_public_bind"));
  checkListenAddress({ ...base, authenticated: true });
  const warnings: string[] = [];
  checkListenAddress({ ...base, authenticated: false, insecurePublicBind: true, warn: (m) => warnings.push(m) });
  assert.match(warnings[0], /x\.bind tcp:\/\/0\.0\.0\.0:1 listens beyond this machine WITHOUT authentication \(insecure_public_bind\)/);
});

test("every listener refuses a public address without its authentication: UI, in-process broker, topic proxy, learner binds", async () => {
  const backend = { status: () => ({}) as never, onStatus: () => () => undefined, onFrame: () => () => undefined, command: () => ({ ok: true as const }), malformed: () => undefined };
  await assert.rejects(OperatorUiServer.start(backend, { host: "0.0.0.0", port: 0, cameraFps: 5 }), ListenAddressError);
  await assert.rejects(EmbeddedBroker.start({ port: 0, host: "0.0.0.0" }), /in-process MQTT broker's host 0\.0\.0\.0 .*Set mqtt\.username and mqtt\.password/);
  await assert.rejects(ZmqProxy.start({ xsub: "tcp://*:0" }), /ZeroMQ topic proxy's xsub tcp:\/\/\*:0 .* or set insecure_public_bind: true/);
  const proxy = await ZmqProxy.start({ xsub: "tcp://0.0.0.0:*", xpub: "tcp://0.0.0.0:*", insecurePublicBind: true });
  await proxy.close();
  // A session whose learner would bind publicly without CURVE stops before anything starts (no package is even read).
  const config = parseLaunch("actor: {kind: policy, package: /nonexistent}\n", "x.yaml");
  const out = mkdtempSync(join(tmpdir(), "rlft-bind-"));
  try {
    await assert.rejects(runSession({ config, learner: true, episodes: 1, seed: 0, out, learnerConfig: { experience_bind: "tcp://0.0.0.0:5555" } }), /experience_bind tcp:\/\/0\.0\.0\.0:5555 listens beyond this machine .*Set curve_secret and curve_authorized/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test("every source file that listens or binds calls checkListenAddress", () => {
  const root = join(import.meta.dirname, "..");
  const files = execFileSync("git", ["ls-files", "*.ts"], { cwd: root, encoding: "utf8" }).split("\n").filter(Boolean);
  // Tests, test rigs and benchmarks open throwaway loopback sockets; everything that ships is checked.
  const shipped = files.filter((f) => !/\.test\.ts$|^test\/|^bench\/|\/testing\/|^runtime\/listenAddress\.ts$|^app\/ports\.ts$/.test(f));
  const listens = /\.listen\(|\bbind\(\s*["'`a-z]|\.bindSync\(/;
  const offenders = shipped.filter((f) => {
    const text = readFileSync(join(root, f), "utf8").replace(/\.bind\(this\)|\.bind\((d|actor|null)\)/g, "").replace(/\bbind\(\w+\s*:/g, ""); // a method declaration, not a socket
    return listens.test(text) && !text.includes("checkListenAddress(");
  });
  assert.deepEqual(offenders, [], "these files listen without the shared check (runtime/listenAddress.ts)");
  assert.ok(shipped.some((f) => f === "web/OperatorUiServer.ts"), "the scan sees the sources");
});
