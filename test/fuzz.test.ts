/**
 * Fuzzing the doors an outsider reaches on the robot (issue 24): the operator UI (HTTP and WebSocket) and MQTT (the
 * command topic and the in-process broker itself). Each run is seeded, bounded in count and time (a few seconds), and
 * aimed at a robot process of its own (test/support/robotTargetChild.ts: the sim arm moving on the wall clock, driver
 * audited). After it: the process is up, its memory stayed bounded, no command acted (well-formed commands are never
 * sent, so every input must be refused), nothing unsafe reached the driver, and a valid command still works.
 * RLFT_FUZZ_SEED picks another seed; RLFT_FUZZ_COUNT another count.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import mqtt from "mqtt";
import WebSocket from "ws";
import { RobotTarget, type TargetStats } from "./support/RobotTarget.ts";
import { fuzzMqtt, fuzzOperatorUi } from "./support/fuzzDoors.ts";

const SEED = Number(process.env.RLFT_FUZZ_SEED ?? 24);
const COUNT = Number(process.env.RLFT_FUZZ_COUNT ?? 600);
/** Memory the robot may grow by under a fuzz run (a leak per input would pass it many times over). */
const RSS_BOUND = 150e6;

async function settle(t: RobotTarget, cond: (s: TargetStats) => boolean, what: string): Promise<TargetStats> {
  const end = Date.now() + 20_000;
  for (;;) {
    const s = await t.stats();
    if (cond(s)) return s;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The checks every fuzz run ends with. */
function assertHeld(t: RobotTarget, before: TargetStats, after: TargetStats): void {
  assert.equal(t.alive, true, `the robot process is up (${t.ended})`);
  assert.deepEqual(after.acted, [], "no fuzzed input acted as a command");
  assert.equal(after.unsafe, 0, "nothing unsafe reached the driver");
  assert.ok(after.driverWrites > before.driverWrites, "the control loop kept commanding the arm");
  assert.deepEqual([after.running, after.paused, after.estopped], [true, false, false], "the episode runs on, not paused, not e-stopped");
  assert.ok(after.rss - before.rss < RSS_BOUND, `RSS grew ${((after.rss - before.rss) / 1e6).toFixed(0)} MB`);
}

test("fuzz: the operator UI (HTTP requests without a token, frames on authorised WebSockets)", { timeout: 120_000 }, async () => {
  const token = "fuzz-ui-token-0123456789";
  const t = await RobotTarget.start({ robot: "fuzz-ui", uiToken: token });
  try {
    const port = Number(new URL(t.ready.uiUrl!).port);
    const before = await t.stats();
    const report = await fuzzOperatorUi({ port, token, seed: SEED, count: COUNT, ms: 6000 });
    console.log(`# ui fuzz: ${JSON.stringify(report)}`);
    assert.ok(report.sent >= 100, `enough inputs (${report.sent})`);
    await new Promise((r) => setTimeout(r, 300));
    const after = await t.stats();
    assertHeld(t, before, after);
    const refused = Object.values(after.uiRefused!).reduce((a, b) => a + b, 0) + after.consoleRejected.malformed;
    assert.ok(refused > 0, `refusals were counted: ${JSON.stringify(after.uiRefused)}`);
    // Positive control through the same door.
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${token}`);
    await new Promise((res, rej) => (ws.once("open", res), ws.once("error", rej)));
    ws.send(JSON.stringify({ type: "command", cmd: "pause" }));
    const s = await settle(t, (x) => x.acted.length > 0, "the authorised pause");
    assert.deepEqual(s.acted, [{ from: "web_ui", cmd: "pause" }]);
    ws.terminate();
  } finally {
    await t.stop();
  }
});

test("fuzz: MQTT, the command topic and the in-process broker's own protocol parser", { timeout: 120_000 }, async () => {
  const creds = { username: "rlft", password: "fuzz-broker-secret-1" };
  const t = await RobotTarget.start({ robot: "fuzz-mqtt", mqtt: creds });
  try {
    const before = await t.stats();
    const report = await fuzzMqtt({ url: t.ready.brokerUrl!, ...creds, robot: "fuzz-mqtt", seed: SEED, count: COUNT, ms: 6000, rawBroker: true });
    console.log(`# mqtt fuzz: ${JSON.stringify(report)}`);
    assert.ok(report.published >= 50, `enough publishes (${report.published})`);
    // Every publish reached the robot's link (QoS 1) and was refused there.
    const after = await settle(t, (s) => s.link!.received - before.link!.received >= report.published + 1, "every fuzzed payload at the robot's link");
    assertHeld(t, before, after);
    assert.equal(after.linkDrops, 0, "the robot's MQTT connection never dropped");
    assert.ok((report.kinds["raw-mqtt"] ?? 0) > 0 && after.brokerRefused!.oversize + after.brokerRefused!.auth > 0, `raw connections refused: ${JSON.stringify(after.brokerRefused)}`);
    // Positive control: a valid command from the same client still acts.
    const c = await mqtt.connectAsync(t.ready.brokerUrl!, { ...creds, reconnectPeriod: 0 });
    await c.publishAsync("rlft/fuzz-mqtt/cmd", "pause", { qos: 1 });
    const s = await settle(t, (x) => x.acted.length > 0, "the valid pause");
    assert.deepEqual(s.acted, [{ from: "mqtt", cmd: "pause" }]);
    await c.endAsync();
  } finally {
    await t.stop();
  }
});
