/** Launch-file sections of the operator station and the UI server's refusal to serve the network without a token. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { OperatorUiServer } from "./OperatorUiServer.ts";

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

test("the UI refuses to listen beyond loopback without a token", async () => {
  const backend = { status: () => ({}) as never, onStatus: () => () => undefined, onFrame: () => () => undefined, command: () => ({ ok: true as const }), malformed: () => undefined };
  await assert.rejects(OperatorUiServer.start(backend, { host: "0.0.0.0", port: 0, cameraFps: 5 }), /ui\.host is 0\.0\.0\.0, which other machines can reach, but no ui\.token is set/);
  const s = await OperatorUiServer.start(backend, { host: "127.0.0.1", port: 0, cameraFps: 5 });
  assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  const page = await fetch(s.url);
  assert.equal(page.status, 200);
  assert.match(page.headers.get("content-security-policy") ?? "", /default-src 'self'/);
  assert.equal((await fetch(`${s.url}api/nope`)).status, 404);
  await s.close();
});
