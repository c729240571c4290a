/** Launch-file sections of the operator station, and the UI server's refusals (network without a token, hostile clients). */
import { test } from "node:test";
import assert from "node:assert/strict";
import WebSocket from "ws";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { OperatorUiServer, type UiBackend } from "./OperatorUiServer.ts";
import { closeCode, frame, rawConnect, rawWebSocket, upgradeRequest } from "../test/support/rawWebSocket.ts";

test("ui, mqtt, teleop and reward sections parse with defaults and reject unknown keys and short tokens", () => {
  const c = parseLaunch("operator: {enabled: true, kind: gamepad}\nui: {enabled: true, port: 0}\nmqtt: {enabled: true, username: u, password: p}\nteleop: {deadzone: 0.2}\n");
  assert.equal(c.ui.host, "127.0.0.1");
  assert.equal(c.mqtt.url, undefined, "no URL → the in-process broker");
  assert.equal(c.teleop.gamepad.path, "/dev/input/js0");
  assert.equal(c.reward.sim_ground_truth, true);
  assert.throws(() => parseLaunch("ui:\n  tokn: abc\n", "x.yaml"), /x\.yaml:2: unknown key 'ui\.tokn' \(allowed: enabled, host, port, token, token_file, camera_fps\)/);
  assert.throws(() => parseLaunch("ui: {token: short}\n", "x.yaml"), /at least 16 characters/);
  assert.throws(() => parseLaunch("mqtt: {topic_prefix: 'rlft/#'}\n", "x.yaml"), /no MQTT wildcards/);
  assert.throws(() => parseLaunch("operator: {kind: joystick}\n", "x.yaml"), /operator\.kind/);
});

/** A backend that records every command that got through (what would reach the driver). */
function recordingBackend(): UiBackend & { commands: string[]; malformedCount: number } {
  const b = {
    commands: [] as string[],
    malformedCount: 0,
    status: () => ({ state: "running", history: [] }) as never,
    onStatus: () => () => undefined,
    onFrame: () => () => undefined,
    command: (r: { cmd: string }) => (b.commands.push(r.cmd), { ok: true as const }),
    malformed: () => void b.malformedCount++,
  };
  return b;
}

test("the UI refuses to listen beyond loopback without a token", async () => {
  const backend = recordingBackend();
  for (const host of ["0.0.0.0", "::", "192.168.1.20"]) {
    await assert.rejects(OperatorUiServer.start(backend, { host, port: 0, cameraFps: 5 }), new RegExp(`ui\\.host ${host.replace(/\./g, "\\.")} listens beyond this machine without authentication: .*Set ui\\.token \\(or ui\\.token_file\\)`));
  }
  const s = await OperatorUiServer.start(backend, { host: "127.0.0.1", port: 0, cameraFps: 5 });
  assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  const page = await fetch(s.url);
  assert.equal(page.status, 200);
  assert.match(page.headers.get("content-security-policy") ?? "", /default-src 'self'/);
  assert.equal((await fetch(`${s.url}api/nope`)).status, 404);
  await s.close();
});

const TOKEN = "ui-test-token-0123456789";

test("refused upgrades reset by the client (no token) leave the server up and count every refusal", async () => {
  const backend = recordingBackend();
  const s = await OperatorUiServer.start(backend, { host: "127.0.0.1", port: 0, cameraFps: 5, token: TOKEN });
  const port = Number(new URL(s.url).port);
  try {
    // Issue 24 item 1: the refusal is written to a socket the client already reset → write ECONNRESET on a socket
    // that had no error listener → the process died. Forty of them, sent without waiting for the answers.
    const sockets = [];
    for (let i = 0; i < 40; i++) {
      const sock = await rawConnect(port);
      sock.write(upgradeRequest(`127.0.0.1:${port}`, "/ws"));
      sock.resetAndDestroy();
      sockets.push(sock);
    }
    // Same with a half-sent request, and with a wrong token.
    for (let i = 0; i < 10; i++) {
      const sock = await rawConnect(port);
      sock.write(upgradeRequest(`127.0.0.1:${port}`, `/ws?token=${"x".repeat(TOKEN.length)}`).slice(0, 40 + i));
      sock.resetAndDestroy();
    }
    await new Promise((r) => setTimeout(r, 200));
    // Still serving: the right token gets its status, a command reaches the backend; no attack did.
    const r = await fetch(`http://127.0.0.1:${port}/api/status`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(r.status, 200);
    assert.deepEqual(backend.commands, []);
    assert.ok(s.refused.token >= 1, `refusals counted: ${JSON.stringify(s.refused)}`);
  } finally {
    await s.close();
  }
});

test("a 5000-byte text frame and an invalid UTF-8 frame close that client only (1009, 1007); the others keep working", async () => {
  const backend = recordingBackend();
  const s = await OperatorUiServer.start(backend, { host: "127.0.0.1", port: 0, cameraFps: 5 });
  const port = Number(new URL(s.url).port);
  const bystander = new WebSocket(`ws://127.0.0.1:${port}/ws`);
  try {
    await new Promise((res, rej) => (bystander.once("open", res), bystander.once("error", rej)));
    // A `ws` client sending one 5000-byte frame (the UI takes 4096 at most).
    const big = new WebSocket(`ws://127.0.0.1:${port}/ws`);
    big.on("error", () => undefined);
    await new Promise((r) => big.once("open", r));
    const bigClosed = new Promise<number>((r) => big.once("close", (code) => r(code)));
    big.send(JSON.stringify({ type: "command", cmd: "estop", pad: "x".repeat(5000) }));
    assert.equal(await bigClosed, 1009, "message too big");

    // A raw text frame whose payload is not UTF-8 (0xC3 0x28), and one that is cut mid-character (RFC 6455 §8.1).
    for (const bad of [Buffer.from([0xc3, 0x28]), Buffer.from('{"type":"command","cmd":"estop"}\xe2\x82', "latin1")]) {
      const raw = await rawWebSocket(port, "/ws");
      assert.equal(raw.status, 101);
      raw.socket.write(frame(1, bad));
      await raw.closed;
      assert.equal(closeCode(raw.received()), 1007, "invalid frame payload data");
    }
    // An unmasked client frame (RFC 6455 §5.1) and a reserved opcode.
    for (const bad of [frame(1, Buffer.from("estop"), { mask: false }), frame(3, Buffer.from("estop"))]) {
      const raw = await rawWebSocket(port, "/ws");
      raw.socket.write(bad);
      await raw.closed;
      assert.equal(closeCode(raw.received()), 1002, "protocol error");
    }
    assert.equal(s.refused.frame, 5, `every refused frame counted: ${JSON.stringify(s.refused)}`);
    assert.deepEqual(backend.commands, [], "none of them reached the robot");

    // The bystander was never disturbed: its command still goes through.
    bystander.send(JSON.stringify({ type: "command", cmd: "pause" }));
    const end = Date.now() + 5000;
    while (backend.commands.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(backend.commands, ["pause"]);
  } finally {
    bystander.terminate();
    await s.close();
  }
});

test("request targets that are no URL, oversize bodies and split UTF-8 bodies are answered, never thrown", async () => {
  const backend = recordingBackend();
  const s = await OperatorUiServer.start(backend, { host: "127.0.0.1", port: 0, cameraFps: 5 });
  const port = Number(new URL(s.url).port);
  try {
    const rawHttp = async (text: string) => {
      const sock = await rawConnect(port);
      let got = "";
      sock.on("data", (d: Buffer) => (got += d.toString("latin1")));
      const closed = new Promise((r) => sock.once("close", r));
      sock.write(text);
      await closed;
      return Number(/^HTTP\/1\.1 (\d+)/.exec(got)?.[1] ?? 0);
    };
    assert.equal(await rawHttp("GET //[ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"), 400);
    assert.equal(await rawHttp(`${upgradeRequest("127.0.0.1", "//[")}`), 400);
    assert.equal(await rawHttp("GARBAGE\r\n\r\n"), 400);
    const big = await fetch(`http://127.0.0.1:${port}/api/command`, { method: "POST", body: JSON.stringify({ cmd: "estop", pad: "x".repeat(10_000) }) }).then((r) => r.status, () => 0);
    assert.ok(big === 413 || big === 0, `oversize body: ${big}`);
    // "é" split across two TCP writes is still one character: the body is decoded once.
    const sock = await rawConnect(port);
    sock.resume();
    const body = Buffer.from(JSON.stringify({ cmd: "pausé" }));
    sock.write(`POST /api/command HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
    const cut = body.indexOf(0xc3) + 1;
    sock.write(body.subarray(0, cut));
    await new Promise((r) => setTimeout(r, 20));
    sock.write(body.subarray(cut));
    await new Promise((r) => sock.once("close", r));
    assert.deepEqual(backend.commands, ["pausé"], "the command arrives whole (the console then refuses the unknown word)");
    assert.equal((await fetch(`http://127.0.0.1:${port}/api/status`)).status, 200);
  } finally {
    await s.close();
  }
});
