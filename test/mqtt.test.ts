/**
 * The MQTT link against Debian's mosquitto (password file + ACL) and the in-process aedes broker, with the
 * real operator console and episode manager on the embedded runtime: retained status, last will, commands
 * per robot, malformed payloads rejected and counted, credentials enforced.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mqtt from "mqtt";
import { createRuntime, type Runtime } from "../runtime/index.ts";
import { EpisodeManagerNode } from "../nodes/EpisodeManagerNode.ts";
import { OperatorConsoleNode } from "../nodes/OperatorConsoleNode.ts";
import { TOPICS } from "../contracts/topics.ts";
import { MqttOperatorLink, parseMqttCommand } from "../telemetry/mqtt/MqttOperatorLink.ts";
import { EmbeddedBroker } from "../telemetry/mqtt/EmbeddedBroker.ts";
import { MqttSchema } from "../telemetry/mqtt/MqttConfig.ts";
import { requireServer, startMosquitto } from "./servers.ts";

async function consoleOnRuntime(robot: string): Promise<{ runtime: Runtime; console: OperatorConsoleNode; manager: EpisodeManagerNode; starts: () => number; rewards: { reward: number; source: string }[] }> {
  const runtime = await createRuntime("embedded", { clock: "wall", logLevel: "error" });
  const manager = new EpisodeManagerNode(runtime.createNode("episode_manager"), { task: "push_cube", controlHz: 10, maxSteps: 10_000 });
  let starts = 0;
  const console = new OperatorConsoleNode(runtime.createNode("operator_console"), {
    robot,
    task: "push_cube",
    controlHz: 10,
    manager,
    control: { start: () => (starts++, manager.begin(starts - 1, 100 + starts), null), reset: () => null },
    policyVersion: () => "test-policy",
  });
  const rewards: { reward: number; source: string }[] = [];
  runtime.createNode("probe").createSubscription<{ reward: number; source: string }>(TOPICS.reward.type, TOPICS.reward.topic, (m) => rewards.push({ reward: m.reward, source: m.source }));
  for (const n of [console, manager]) await n.configure();
  for (const n of [console, manager]) await n.activate();
  return { runtime, console, manager, starts: () => starts, rewards };
}

const waitFor = async (cond: () => boolean, what: string, ms = 5000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

test("command payloads: JSON or a bare word; anything else is malformed", () => {
  assert.deepEqual(parseMqttCommand(Buffer.from("success")), { cmd: "success" });
  assert.deepEqual(parseMqttCommand(Buffer.from('{"cmd":"estop","robot":"r1"}')), { cmd: "estop", robot: "r1" });
  assert.match((parseMqttCommand(Buffer.from('{"cmd":"estop","extra":1}')) as { error: string }).error, /extra/);
  assert.match((parseMqttCommand(Buffer.from("\u0000\u00ff")) as { error: string }).error, /not JSON/);
  assert.match((parseMqttCommand(Buffer.alloc(2000, 0x61)) as { error: string }).error, /2000 bytes/);
});

test("mosquitto with a password file and ACL: retained status, per-robot commands, malformed and foreign commands counted, last will", { skip: requireServer("mosquitto"), timeout: 30_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rlft-mqtt-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync("mosquitto_passwd", ["-b", "-c", join(dir, "passwd"), "robot-r1", "r1-secret-pass"]);
  execFileSync("mosquitto_passwd", ["-b", join(dir, "passwd"), "phone", "phone-secret-pw"]);
  writeFileSync(join(dir, "acl"), ["user robot-r1", "topic readwrite rlft/r1/#", "user phone", "topic read rlft/+/status", "topic read rlft/+/cmd_result", "topic write rlft/+/cmd", ""].join("\n"));
  // Run as root, mosquitto drops to its own user: it must be able to read these files.
  chmodSync(dir, 0o755);
  for (const f of ["passwd", "acl"]) chmodSync(join(dir, f), 0o644);
  const broker = await startMosquitto({ config: ["allow_anonymous false", `password_file ${join(dir, "passwd")}`, `acl_file ${join(dir, "acl")}`] });
  t.after(() => broker.stop());
  const s = await consoleOnRuntime("r1");
  t.after(() => s.runtime.shutdown());
  const config = MqttSchema.parse({ enabled: true, url: broker.url, username: "robot-r1", password: "r1-secret-pass", status_hz: 5 });

  await assert.rejects(MqttOperatorLink.connect(s.console, { url: broker.url, robot: "r1", config: { ...config, password: "wrong-password" } }), /MQTT broker at mqtt:\/\/127\.0\.0\.1:\d+ refused the connection: .*(authori|password)/i);
  const link = await MqttOperatorLink.connect(s.console, { url: broker.url, robot: "r1", config });
  t.after(() => link.close());

  const phone = await mqtt.connectAsync(broker.url, { username: "phone", password: "phone-secret-pw", reconnectPeriod: 0 });
  t.after(() => phone.endAsync());
  const statuses: { online: boolean; state?: string; reason?: string }[] = [];
  phone.on("message", (topic, p) => topic === "rlft/r1/status" && statuses.push(JSON.parse(p.toString())));
  await phone.subscribeAsync("rlft/r1/status", { qos: 1 });
  await waitFor(() => statuses.length > 0, "the retained status");
  assert.equal(statuses[0].online, true);
  assert.equal(statuses[0].state, "idle");

  await phone.publishAsync("rlft/r1/cmd", JSON.stringify({ cmd: "start", robot: "r1" }), { qos: 1 });
  await waitFor(() => s.manager.running, "the episode to start");
  await waitFor(() => statuses.some((x) => x.state === "running"), "a running status");
  await phone.publishAsync("rlft/r1/cmd", JSON.stringify({ cmd: "abort", robot: "r2" }), { qos: 1 });
  await phone.publishAsync("rlft/r1/cmd", "{\"cmd\": 7}", { qos: 1 });
  await phone.publishAsync("rlft/r1/cmd", "launch the rockets", { qos: 1 });
  await phone.publishAsync("rlft/r1/cmd", "success", { qos: 1 }); // a foot pedal bridge sends a bare word
  await waitFor(() => !s.manager.running, "the episode to end");
  assert.equal(s.manager.result?.outcome, "success");
  assert.deepEqual(s.rewards, [{ reward: 1, source: "mqtt" }]);
  assert.deepEqual(link.stats.malformed, 2);
  assert.equal(link.stats.otherRobot, 1);
  assert.deepEqual(s.console.status().rejected, { malformed: 2, otherRobot: 1, refused: 0 });

  // The phone may not command through topics the ACL does not give it: mosquitto drops it silently.
  await phone.publishAsync("rlft/r1/status", JSON.stringify({ online: false }), { qos: 1, retain: true });

  // The robot's connection dies without a DISCONNECT: the broker publishes its will (online: false).
  const n = statuses.length;
  link.client.options.reconnectPeriod = 0;
  link.client.stream.destroy();
  await waitFor(() => statuses.slice(n).some((x) => x.online === false && x.reason === "connection lost"), "the last will", 10_000);
});

test("in-process broker (no URL configured): credentials enforced, status retained, commands work", { timeout: 20_000 }, async (t) => {
  const broker = await EmbeddedBroker.start({ port: 0, username: "rlft", password: "laptop-secret-123" });
  t.after(() => broker.close());
  const s = await consoleOnRuntime("sim-0");
  t.after(() => s.runtime.shutdown());
  const config = MqttSchema.parse({ enabled: true, username: "rlft", password: "laptop-secret-123" });
  const link = await MqttOperatorLink.connect(s.console, { url: broker.url, robot: "sim-0", config });
  await assert.rejects(mqtt.connectAsync(broker.url, { username: "rlft", password: "nope", reconnectPeriod: 0 }), /password|authori/i);
  const c = await mqtt.connectAsync(broker.url, { username: "rlft", password: "laptop-secret-123", reconnectPeriod: 0 });
  const got: { online: boolean }[] = [];
  c.on("message", (_t, p) => got.push(JSON.parse(p.toString())));
  await c.subscribeAsync("rlft/sim-0/status", { qos: 1 });
  await waitFor(() => got.length > 0, "retained status");
  await c.publishAsync("rlft/sim-0/cmd", "start", { qos: 1 });
  await waitFor(() => s.starts() === 1, "start");
  await c.publishAsync("rlft/sim-0/cmd", "estop", { qos: 1 });
  await waitFor(() => s.manager.paused, "pause on e-stop");
  await link.close();
  await waitFor(() => got.some((x) => x.online === false), "offline on shutdown");
  await c.endAsync();
});

/**
 * Issue 24 item 4: a retained `release_estop` on the robot's command topic was replayed by the broker on every
 * reconnect and released whatever e-stop was latched by then. On both brokers: the retained release arrives live
 * (RETAIN 0: a real command, nothing latched yet), an e-stop is pressed, the link is cut and comes back, the broker
 * replays the release with RETAIN 1: ignored, counted, answered ok: false; the e-stop stays latched. Positive
 * control: a live release still works.
 */
for (const kind of ["mosquitto", "in-process"] as const) {
  test(`${kind} broker: a retained release_estop replayed on reconnect never releases the e-stop`, { skip: kind === "mosquitto" ? requireServer("mosquitto") : false, timeout: 30_000 }, async (t) => {
    const broker = kind === "mosquitto" ? await startMosquitto() : await EmbeddedBroker.start({ port: 0 });
    const robot = `retain-${kind}-${process.pid}`;
    const s = await consoleOnRuntime(robot);
    const link = await MqttOperatorLink.connect(s.console, { url: broker.url, robot, config: MqttSchema.parse({ enabled: true, status_hz: 5 }) });
    const op = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0, clientId: `op-${robot}` });
    t.after(async () => {
      await op.publishAsync(link.topics.cmd, "", { qos: 1, retain: true }); // clear the retained message (shared broker in CI)
      await op.endAsync();
      await link.close();
      await s.runtime.shutdown();
      await ("stop" in broker ? broker.stop() : broker.close());
    });
    const results: { ok: boolean; error?: string }[] = [];
    op.on("message", (_t, p) => results.push(JSON.parse(p.toString())));
    await op.subscribeAsync(link.topics.result, { qos: 1 });

    await op.publishAsync(link.topics.cmd, "release_estop", { qos: 1, retain: true });
    await waitFor(() => results.length === 1, "the answer to the live release");
    assert.match(results[0].error ?? "", /not latched/, "delivered live, it was a real command (nothing to release yet)");
    await op.publishAsync(link.topics.cmd, "estop", { qos: 1 });
    await waitFor(() => s.console.status().estop, "the e-stop to latch");

    // The link drops and reconnects (mqtt.js resubscribes): the broker replays the retained release.
    let reconnects = 0;
    link.client.on("connect", () => reconnects++);
    link.client.stream.destroy();
    await waitFor(() => reconnects === 1, "the link to reconnect");
    await waitFor(() => results.length === 3, "the answer to the replayed retained release");
    assert.equal(s.console.status().estop, true, "the e-stop is still latched");
    assert.equal(link.stats.retained, 1);
    assert.match(results.at(-1)!.error ?? "", /retained command "release_estop" ignored/);
    assert.equal(results.at(-1)!.ok, false);

    await op.publishAsync(link.topics.cmd, "release_estop", { qos: 1 });
    await waitFor(() => !s.console.status().estop, "a live release (positive control)");
  });
}

test("in-process broker: a 150 MB publish is cut at its header (memory stays flat); anonymous clients cannot publish when credentials are set", { timeout: 30_000 }, async (t) => {
  const broker = await EmbeddedBroker.start({ port: 0, username: "rlft", password: "laptop-secret-123" });
  const s = await consoleOnRuntime("sim-0");
  const link = await MqttOperatorLink.connect(s.console, { url: broker.url, robot: "sim-0", config: MqttSchema.parse({ enabled: true, username: "rlft", password: "laptop-secret-123" }) });
  t.after(async () => {
    await link.close();
    await s.runtime.shutdown();
    await broker.close();
  });
  // Anonymous, and with a wrong password: refused at CONNECT, so nothing they publish exists.
  await assert.rejects(mqtt.connectAsync(broker.url, { reconnectPeriod: 0 }), /password|authori/i);
  await assert.rejects(mqtt.connectAsync(broker.url, { username: "rlft", password: "x", reconnectPeriod: 0 }), /password|authori/i);
  assert.equal(broker.refused.auth, 2);
  // An authenticated client (the worst case: it got past CONNECT) publishes 150 MB to the command topic: the PUBLISH
  // header (MQTT 3.1.1 §3.3: type 0x30, Remaining Length, topic) and then the body, streamed 1 MB at a time.
  const flood = await mqtt.connectAsync(broker.url, { username: "rlft", password: "laptop-secret-123", reconnectPeriod: 0 });
  flood.on("error", () => undefined);
  const sock = flood.stream;
  const topic = Buffer.from("rlft/sim-0/cmd");
  const total = 150 * 1024 * 1024;
  let remaining = 2 + topic.length + total;
  const len: number[] = [];
  do {
    let b = remaining % 128;
    remaining = Math.floor(remaining / 128);
    if (remaining > 0) b |= 0x80;
    len.push(b);
  } while (remaining > 0);
  const rss0 = process.memoryUsage().rss;
  let closed = false;
  sock.once("close", () => (closed = true));
  sock.write(Buffer.concat([Buffer.from([0x30, ...len, topic.length >> 8, topic.length & 0xff]), topic]));
  const mb = Buffer.alloc(1024 * 1024, 0x61);
  for (let sent = 0; sent < total && !closed; sent += mb.length) {
    if (!sock.write(mb)) await new Promise((r) => (sock.once("drain", r), sock.once("close", r)));
  }
  await waitFor(() => closed, "the broker to cut the connection");
  const grew = (process.memoryUsage().rss - rss0) / 1e6;
  assert.equal(broker.refused.oversize, 1, "the connection was cut for its packet size");
  assert.ok(grew < 64, `the broker did not buffer the publish (RSS grew ${grew.toFixed(0)} MB)`);
  assert.equal(link.stats.received, 0, "nothing reached the robot's command topic");

  // Positive control: a normal command still goes through.
  const c = await mqtt.connectAsync(broker.url, { username: "rlft", password: "laptop-secret-123", reconnectPeriod: 0 });
  await c.publishAsync("rlft/sim-0/cmd", "start", { qos: 1 });
  await waitFor(() => s.starts() === 1, "start");
  await c.endAsync();
});
