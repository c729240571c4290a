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
import { createRuntime, type Runtime } from "../../runtime/index.ts";
import { EpisodeManagerNode } from "../../nodes/EpisodeManagerNode.ts";
import { OperatorConsoleNode } from "../../nodes/OperatorConsoleNode.ts";
import { TOPICS } from "../../contracts/topics.ts";
import { MqttOperatorLink, parseMqttCommand } from "./MqttOperatorLink.ts";
import { EmbeddedBroker } from "./EmbeddedBroker.ts";
import { MqttSchema } from "./MqttConfig.ts";
import { requireServer, startMosquitto } from "../../test/servers.ts";

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
