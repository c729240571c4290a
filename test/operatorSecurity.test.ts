// Security negatives of the operator channels (docs/security.md §4–5), against a running sim stack:
//  - MQTT on Debian's mosquitto with a password file and the per-robot ACL of docker/mosquitto/acl.example: an
//    anonymous client, a wrong password and another robot's credentials can neither command this robot nor read or
//    publish its topics; an operator allowed on this robot cannot command another one.
//  - The operator UI behind a token: HTTP and WebSocket requests without or with a wrong token (or from a foreign
//    Host/Origin) are refused and counted, and none of their commands reaches the robot.
//  - Nothing the stack opens listens beyond loopback with the default configuration.
// Every negative is followed by a positive control through the same channel, so "nothing arrived" cannot be an
// artefact of a dead channel.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mqtt, { type MqttClient } from "mqtt";
import WebSocket from "ws";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { Stack } from "../launch/Stack.ts";
import { TOPICS } from "../contracts/topics.ts";
import { requireServer, secureMosquittoConfig, startMosquitto, type RunningServer } from "./servers.ts";

const ROBOT = "sim-0";
const TOKEN = "ui-token-5f1c9e2a7b3d4e60";
const PASSWORDS: Record<string, string> = { "sim-0": "sim0-secret-pass", "sim-1": "sim1-secret-pass", "op-alice": "alice-secret-pass", dashboard: "dash-secret-pass" };
const skip = requireServer("mosquitto");

let dir = "";
let broker: RunningServer;
let stack: Stack;
let run: Promise<unknown>;
const seen = { estop: 0, reward: 0, events: [] as string[] };
const clients: MqttClient[] = [];

const waitFor = async (cond: () => boolean, what: string, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** An MQTT client that records every message it gets. */
async function client(user?: string, password = user ? PASSWORDS[user] : undefined): Promise<MqttClient & { got: { topic: string; text: string }[] }> {
  const c = (await mqtt.connectAsync(broker.url, { username: user, password, reconnectPeriod: 0, clientId: `sec-${user ?? "anon"}-${process.pid}-${clients.length}` })) as MqttClient & { got: { topic: string; text: string }[] };
  c.got = [];
  c.on("message", (topic, p) => c.got.push({ topic, text: p.toString() }));
  clients.push(c);
  return c;
}

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), "rlft-opsec-"));
  const passwd = join(dir, "passwd");
  execFileSync("mosquitto_passwd", ["-b", "-c", passwd, "sim-0", PASSWORDS["sim-0"]]);
  for (const u of ["sim-1", "op-alice", "dashboard"]) execFileSync("mosquitto_passwd", ["-b", passwd, u, PASSWORDS[u]]);
  copyFileSync(join(import.meta.dirname, "..", "docker", "mosquitto", "acl.example"), join(dir, "acl"));
  writeFileSync(join(dir, "robot-password"), `${PASSWORDS["sim-0"]}\n`);
  // Run as root, mosquitto drops to its own user: the files must be readable by it.
  chmodSync(dir, 0o755);
  for (const f of ["passwd", "acl"]) chmodSync(join(dir, f), 0o644);
  // The configuration docs/security.md prescribes (docker/mosquitto/secure.conf.example): no anonymous clients, the
  // password file, the ACL, and client ids tied to usernames.
  const config = secureMosquittoConfig({ passwordFile: passwd, aclFile: join(dir, "acl") });
  assert.deepEqual(config.slice().sort(), ["allow_anonymous false", `acl_file ${join(dir, "acl")}`, `password_file ${passwd}`, "use_username_as_clientid true"].sort());
  broker = await startMosquitto({ config });
  const cfg = parseLaunch(
    [
      "task: push_cube",
      "clock: wall",
      "actor: {kind: expert}",
      "camera: {enabled: false}",
      "recorder: {enabled: false}",
      "operator: {enabled: true, kind: ui}",
      "episodes: {max_steps: 100000}",
      "reward: {sim_ground_truth: false}",
      `learner: {robot_id: ${ROBOT}}`,
      `ui: {enabled: true, port: 0, token: ${TOKEN}}`,
      `mqtt: {enabled: true, url: "${broker.url}", username: ${ROBOT}, password_file: ${JSON.stringify(join(dir, "robot-password"))}, status_hz: 5}`,
    ].join("\n"),
    "operator-security.yaml",
  );
  stack = await Stack.create(cfg, { quiet: true, operatorGate: false });
  const probe = stack.runtime.createNode("security_probe");
  probe.createSubscription(TOPICS.estop.type, TOPICS.estop.topic, () => seen.estop++);
  probe.createSubscription(TOPICS.reward.type, TOPICS.reward.topic, () => seen.reward++);
  probe.createSubscription<{ event: string }>(TOPICS.episodeEvent.type, TOPICS.episodeEvent.topic, (m) => seen.events.push(m.event));
  run = stack.runEpisodes({ count: 1, seed: 1 });
  run.catch(() => undefined);
  await waitFor(() => stack.manager.running, "the episode to start");
});

after(async () => {
  if (skip) return;
  for (const c of clients) await c.endAsync(true).catch(() => undefined);
  stack?.station?.console.command({ cmd: "abort", from: "test" });
  await run;
  await stack?.shutdown();
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The robot is untouched: running, not paused, no e-stop, no reward, no episode event since `events0`. */
function assertUntouched(what: string, events0 = 0): void {
  assert.equal(stack.manager.running, true, `${what}: the episode still runs`);
  assert.equal(stack.manager.paused, false, `${what}: not paused`);
  assert.equal(stack.safety.frozen, false, `${what}: the safety supervisor is not frozen`);
  assert.equal(seen.estop, 0, `${what}: nothing on /safety/estop`);
  assert.equal(seen.reward, 0, `${what}: no /reward`);
  assert.deepEqual(seen.events.slice(events0).filter((e) => e !== "reset" && e !== "start"), [], `${what}: no episode event`);
}

test("MQTT: anonymous clients, wrong passwords and unknown users are refused at CONNECT", { skip }, async () => {
  for (const [user, pw] of [[undefined, undefined], [ROBOT, "not-the-password"], ["op-alice", PASSWORDS["sim-1"]], ["mallory", "mallory-password"]] as const) {
    await assert.rejects(mqtt.connectAsync(broker.url, { username: user, password: pw, reconnectPeriod: 0, connectTimeout: 5000 }), /not authori[sz]ed|bad user ?name or password|Connection refused/i, `user ${user ?? "(anonymous)"}`);
  }
  assertUntouched("after refused connections");
});

test("MQTT: another robot's credentials can neither command this robot nor read or publish its topics; the ACL'd operator can", { skip, timeout: 30_000 }, async () => {
  const link = stack.station!.mqtt!;
  const received0 = link.stats.received;
  const other = await client("sim-1");
  const alice = await client("op-alice");
  const dash = await client("dashboard");
  // sim-1 tries to read everything about sim-0 (exact topics and wildcards).
  const grants = await other.subscribeAsync([`rlft/${ROBOT}/status`, `rlft/${ROBOT}/cmd`, `rlft/${ROBOT}/cmd_result`, `rlft/${ROBOT}/#`, "rlft/#", "rlft/sim-1/cmd"], { qos: 1 });
  await alice.subscribeAsync([`rlft/${ROBOT}/status`, `rlft/${ROBOT}/cmd_result`], { qos: 1 });
  await dash.subscribeAsync("rlft/+/status", { qos: 1 });
  await waitFor(() => alice.got.some((m) => m.topic === `rlft/${ROBOT}/status`), "the operator to get the retained status");
  await waitFor(() => dash.got.some((m) => m.topic === `rlft/${ROBOT}/status`), "the dashboard to get the retained status");

  // sim-1 (and the read-only dashboard) try to command sim-0 and to forge its status and results.
  for (const c of [other, dash]) {
    for (const p of ["estop", "success", JSON.stringify({ cmd: "abort", robot: ROBOT }), "pause"]) await c.publishAsync(`rlft/${ROBOT}/cmd`, p, { qos: 1 });
    await c.publishAsync(`rlft/${ROBOT}/status`, JSON.stringify({ robot: ROBOT, online: false, forged: true }), { qos: 1, retain: true });
    await c.publishAsync(`rlft/${ROBOT}/cmd_result`, JSON.stringify({ robot: ROBOT, ok: true, forged: true }), { qos: 1 });
  }
  // op-alice may drive sim-0 only: her command to sim-1 never reaches sim-1's command topic.
  await alice.publishAsync("rlft/sim-1/cmd", "estop", { qos: 1 });

  // Positive control through the same broker, after every attempt above was acknowledged: op-alice pauses sim-0.
  await alice.publishAsync(`rlft/${ROBOT}/cmd`, "pause", { qos: 1 });
  await waitFor(() => stack.manager.paused, "op-alice's pause to reach the robot");
  await waitFor(() => alice.got.some((m) => m.topic === `rlft/${ROBOT}/cmd_result`), "op-alice's command result");
  await waitFor(() => alice.got.some((m) => m.topic === `rlft/${ROBOT}/status` && JSON.parse(m.text).state === "paused"), "a paused status");
  assert.equal(link.stats.received - received0, 1, "only op-alice's command reached the robot's link");
  assert.equal(seen.estop, 0, "no e-stop from sim-1 or the dashboard");
  assert.equal(seen.reward, 0, "no success/failure from sim-1 or the dashboard");
  assert.ok(stack.manager.running, "no abort from sim-1 or the dashboard");

  // sim-1 saw nothing of sim-0 (whether the broker refused the subscription or filtered every message), and nothing
  // arrived on its own command topic from op-alice.
  assert.deepEqual(other.got.map((m) => m.topic), [], `sim-1 received ${JSON.stringify(other.got.slice(0, 3))}`);
  const refusedSubs = grants.filter((g) => g.qos === 128).map((g) => g.topic);
  // Forgeries never reached op-alice, and the retained status is still the robot's own.
  assert.ok(alice.got.every((m) => !JSON.parse(m.text).forged), "no forged status or result reached op-alice");
  // (A second op-alice connection would replace the first: client ids are usernames. The dashboard may read it too.)
  const fresh = await client("dashboard");
  await fresh.subscribeAsync(`rlft/${ROBOT}/status`, { qos: 1 });
  await waitFor(() => fresh.got.length > 0, "the retained status");
  assert.equal(JSON.parse(fresh.got[0].text).online, true);
  assert.equal(JSON.parse(fresh.got[0].text).forged, undefined);
  assert.ok(dash.got.every((m) => m.topic.endsWith("/status") && !JSON.parse(m.text).forged));

  await alice.publishAsync(`rlft/${ROBOT}/cmd`, "resume", { qos: 1 });
  await waitFor(() => !stack.manager.paused, "op-alice's resume");
  console.log(`sim-1's subscriptions refused by the broker (SUBACK 0x80): ${refusedSubs.join(", ") || "none (filtered per message)"}`);
});

test("MQTT: a read-only user connecting with the robot's client id does not kick the robot off the broker", { skip, timeout: 30_000 }, async () => {
  // Issue 24 item 5: MQTT 3.1.1 §3.1.4 has the broker drop the existing client when another connects with its id;
  // with the client id tied to the username (use_username_as_clientid) the dashboard's id is "dashboard" whatever it asks.
  const link = stack.station!.mqtt!;
  let drops = 0;
  const onClose = () => drops++;
  link.client.on("close", onClose);
  try {
    for (const clientId of [`rlft-${ROBOT}`, ROBOT]) {
      const dash = (await mqtt.connectAsync(broker.url, { username: "dashboard", password: PASSWORDS.dashboard, clientId, reconnectPeriod: 0 })) as MqttClient;
      clients.push(dash);
      // A command through the robot's link and back proves the link is up after the impostor connected.
      const alice = await client("op-alice");
      await alice.subscribeAsync(`rlft/${ROBOT}/cmd_result`, { qos: 1 });
      await alice.publishAsync(`rlft/${ROBOT}/cmd`, "pause", { qos: 1 });
      await waitFor(() => alice.got.some((m) => m.topic === `rlft/${ROBOT}/cmd_result`), `the robot's answer after a dashboard connected as ${clientId}`);
      await alice.publishAsync(`rlft/${ROBOT}/cmd`, "resume", { qos: 1 });
      await waitFor(() => !stack.manager.paused, "resume");
      await alice.endAsync();
      await dash.endAsync();
    }
    assert.equal(drops, 0, "the robot's MQTT connection never dropped");
    assert.equal(link.client.connected, true);
  } finally {
    link.client.off("close", onClose);
  }
});

test("operator UI: no token, a wrong token, a foreign Host or Origin are refused and counted; none of their commands reaches the robot", { skip, timeout: 30_000 }, async () => {
  const ui = stack.station!.ui!;
  const base = new URL(ui.url);
  const http = `http://${base.host}`;
  const wrong = [undefined, "x".repeat(TOKEN.length), TOKEN.slice(0, -1), `${TOKEN}0`, TOKEN.toUpperCase()];
  const refused0 = { ...ui.refused };
  const rejected0 = { ...stack.station!.console.rejected };
  const events0 = seen.events.length;
  const status = (t?: string) => fetch(`${http}/api/status${t === undefined ? "" : `?token=${encodeURIComponent(t)}`}`).then((r) => r.status);
  const post = (headers: Record<string, string>, cmd: string, q = "") =>
    fetch(`${http}/api/command${q}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ cmd }) }).then((r) => r.status);
  const wsOpen = (t: string | undefined, headers: Record<string, string> = {}) =>
    new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://${base.host}/ws${t === undefined ? "" : `?token=${encodeURIComponent(t)}`}`, { headers });
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => {
        // Should not happen: try to do damage, then report it.
        for (const cmd of ["estop", "success", "abort"]) ws.send(JSON.stringify({ type: "command", cmd }));
        resolve(101);
      });
      ws.on("error", () => undefined);
    });

  let tokenRefusals = 0;
  for (const t of wrong) {
    assert.equal(await status(t), 401, `GET /api/status with token ${JSON.stringify(t)}`);
    assert.equal(await wsOpen(t), 401, `WebSocket with token ${JSON.stringify(t)}`);
    tokenRefusals += 2;
  }
  for (const [headers, q] of [[{}, ""], [{ authorization: "Bearer not-the-token-at-all" }, ""], [{ authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString("base64")}` }, ""], [{}, `?token=${"y".repeat(TOKEN.length)}`]] as const) {
    for (const cmd of ["estop", "success", "abort", "pause"]) {
      assert.equal(await post(headers, cmd, q), 401, `POST /api/command ${cmd} with ${JSON.stringify(headers)}${q}`);
      tokenRefusals++;
    }
  }
  // The right token from the wrong place: a DNS-rebound Host, or a page on another site opening the WebSocket.
  assert.equal(await wsOpen(TOKEN, { host: `evil.example:${base.port}` }), 403);
  assert.equal(await wsOpen(TOKEN, { origin: "http://evil.example" }), 403);
  assert.equal(await post({ authorization: `Bearer ${TOKEN}`, origin: "http://evil.example" }, "estop"), 403);

  assert.equal(ui.refused.token - refused0.token, tokenRefusals, "every token refusal is counted (ui.refused.token)");
  assert.equal(ui.refused.origin - refused0.origin, 3, "every Host/Origin refusal is counted (ui.refused.origin)");
  assert.deepEqual(stack.station!.console.rejected, rejected0, "refused requests never reached the operator console");
  assertUntouched("after refused UI requests", events0);
  // The page itself is public (it holds no data and needs the token for everything it fetches).
  assert.equal((await fetch(`${http}/`)).status, 200);

  // Positive control: with the token, the same WebSocket path and a Bearer POST do reach the robot.
  const ws = new WebSocket(`ws://${base.host}/ws?token=${TOKEN}`);
  await new Promise((res, rej) => (ws.once("open", res), ws.once("error", rej)));
  ws.send(JSON.stringify({ type: "command", cmd: "pause" }));
  await waitFor(() => stack.manager.paused, "the authorized pause");
  assert.equal(await post({ authorization: `Bearer ${TOKEN}` }, "pause"), 200);
  await waitFor(() => !stack.manager.paused, "the authorized resume (pause toggles)");
  ws.terminate();
  assert.equal(seen.estop, 0);
});

/** Local addresses of the TCP sockets this process listens on (Linux /proc). */
function listeningAddresses(): string[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const out: string[] = [];
  for (const [file, v6] of [["/proc/net/tcp", false], ["/proc/net/tcp6", true]] as const) {
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== "0A" || !inodes.has(f[9])) continue; // 0A = TCP_LISTEN
      const [hex, portHex] = f[1].split(":");
      const port = parseInt(portHex, 16);
      if (!v6) out.push(`${[...Buffer.from(hex, "hex").reverse()].join(".")}:${port}`);
      else {
        // Four little-endian 32-bit words.
        const words = hex.match(/.{8}/g)!.map((w) => Buffer.from(w, "hex").reverse().toString("hex"));
        const all = words.join("");
        const addr = all === "0".repeat(32) ? "::" : all === `${"0".repeat(31)}1` ? "::1" : all.startsWith("00000000000000000000ffff") ? `::ffff:${[...Buffer.from(all.slice(24), "hex")].join(".")}` : all;
        out.push(`[${addr}]:${port}`);
      }
    }
  }
  return out;
}

test("default listeners: the UI, the in-process MQTT broker and the runtime bind loopback only", { skip: process.platform !== "linux" ? "reads /proc" : false, timeout: 30_000 }, async () => {
  const defaults = parseLaunch("", "defaults.yaml");
  assert.equal(defaults.ui.host, "127.0.0.1");
  assert.match(defaults.learner.experience, /^tcp:\/\/127\.0\.0\.1:/);
  assert.match(defaults.learner.policy, /^tcp:\/\/127\.0\.0\.1:/);
  // Default hosts everywhere; only the ports are free ones so the test can run beside other stacks.
  const cfg = parseLaunch("task: push_cube\nactor: {kind: expert}\ncamera: {enabled: false}\nrecorder: {enabled: false}\noperator: {enabled: true, kind: ui}\nui: {enabled: true, port: 0}\nmqtt: {enabled: true, embedded_port: 0}\n", "defaults.yaml");
  const before = new Set(listeningAddresses());
  const s = await Stack.create(cfg, { quiet: true, operatorGate: false });
  try {
    const opened = listeningAddresses().filter((a) => !before.has(a));
    const ui = new URL(s.station!.ui!.url);
    const mq = new URL(s.station!.broker!.url);
    assert.ok(opened.includes(`127.0.0.1:${ui.port}`), `the UI listens on 127.0.0.1:${ui.port}: ${opened.join(", ")}`);
    assert.ok(opened.includes(`127.0.0.1:${mq.port}`), `the in-process broker listens on 127.0.0.1:${mq.port}: ${opened.join(", ")}`);
    const exposed = listeningAddresses().filter((a) => !/^(127\.\d+\.\d+\.\d+|\[::1\]|\[::ffff:127\.\d+\.\d+\.\d+\]):\d+$/.test(a));
    assert.deepEqual(exposed, [], "nothing in this process listens beyond loopback");
  } finally {
    await s.shutdown();
  }
});
