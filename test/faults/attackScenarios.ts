/**
 * Attacks on the robot side (issue 24), one fault-table row each: the attack, what happened, whether it held. The
 * robot under attack runs as a process of its own where the attack could end it (test/support/robotTargetChild.ts),
 * so "the process survived" is observed from outside. The learner side has its rows in learnerAttacks.ts.
 * Each attack also has a fast regression test in `npm test` (named in docs/security.md, "Attacks tried").
 */
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync } from "node:fs";
import type { Socket } from "node:net";
import { join } from "node:path";
import mqtt from "mqtt";
import WebSocket from "ws";
import { parseLaunch } from "../../launch/LaunchConfig.ts";
import { checkParams } from "../../launch/nodeExecutables.ts";
import { parseArmCalibration } from "../../calibration/ArmCalibration.ts";
import { OperatorUiServer } from "../../web/OperatorUiServer.ts";
import { EmbeddedBroker } from "../../telemetry/mqtt/EmbeddedBroker.ts";
import { ZmqProxy } from "../../runtime/embedded/ZmqProxy.ts";
import { runSession } from "../../app/session.ts";
import { RobotTarget, type TargetStats } from "../support/RobotTarget.ts";
import { closeCode, frame, rawConnect, rawWebSocket, upgradeRequest } from "../support/rawWebSocket.ts";
import { fuzzMqtt, fuzzOperatorUi } from "../support/fuzzDoors.ts";
import { rlft } from "../support/rlftCli.ts";
import { secureMosquittoConfig, startMosquitto } from "../servers.ts";
import type { FaultContext, FaultRow, FaultScenario } from "./FaultScenario.ts";
import { collectKilled, sessionRestarted, sessionFatalError } from "./attackRecording.ts";
import { nanPackage, packageCache } from "./attackPackages.ts";

/** A row of the table for an attack: held = the attack failed. */
export function attackRow(scenario: string, injected: string, held: boolean, detail: string, unsafe = 0): FaultRow {
  return { scenario, injected, survived: held, transitionsLost: 0, unsafeCommands: unsafe, detail };
}

const robot = (what: string) => `attack-${what}-${process.pid}`;

async function until(t: RobotTarget, cond: (s: TargetStats) => boolean, what: string, ms = 20_000): Promise<TargetStats> {
  const end = Date.now() + ms;
  for (;;) {
    const s = await t.stats();
    if (cond(s)) return s;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs `attack` against a robot process and always stops it; a process that died is reported, not thrown. */
async function onTarget(cfg: Parameters<typeof RobotTarget.start>[0], attack: (t: RobotTarget, before: TargetStats) => Promise<FaultRow>): Promise<FaultRow> {
  const t = await RobotTarget.start(cfg);
  try {
    return await attack(t, await t.stats());
  } finally {
    await t.stop();
  }
}

/**
 * "up, N commands since, 0 acted, 0 unsafe": what a row says about the robot after an attack. On a loaded machine the
 * control loop may not have ticked yet when the attack ends, so a robot that is up is given time (not a fixed window)
 * to show it still drives the arm.
 */
async function robotAfter(t: RobotTarget, before: TargetStats, after: TargetStats | null): Promise<{ held: boolean; text: string }> {
  if (!t.alive || after === null) return { held: false, text: `robot process DIED (${t.ended})` };
  if (after.driverWrites === before.driverWrites) {
    const later = await until(t, (s) => s.driverWrites > before.driverWrites, "a driver command after the attack", 60_000).catch(() => null);
    if (later) after = { ...later, acted: after.acted };
  }
  const moved = after.driverWrites - before.driverWrites;
  const held = after.acted.length === 0 && after.unsafe === 0 && moved > 0 && !after.estopped;
  return { held, text: `robot process up, ${moved} driver commands since (${after.unsafe} unsafe), ${after.acted.length} operator commands acted, RSS ${((after.rss - before.rss) / 1e6).toFixed(0)} MB more` };
}

const uiResets: FaultScenario = {
  name: "attack: UI upgrades refused, reset by the client",
  run: (ctx) =>
    onTarget({ robot: robot("ui-rst"), uiToken: "attack-ui-token-0123456789" }, async (t, before) => {
      const port = Number(new URL(t.ready.uiUrl!).port);
      const n = ctx.full ? 1000 : 200;
      for (let i = 0; i < n; i++) {
        const s = await rawConnect(port).catch(() => null);
        if (!s) break; // the process is gone
        s.write(upgradeRequest(`127.0.0.1:${port}`, "/ws"));
        s.resetAndDestroy();
      }
      await new Promise((r) => setTimeout(r, 300));
      const after = await t.stats().catch(() => null);
      const r = await robotAfter(t, before, after);
      return attackRow("attack: UI upgrades refused, reset by the client", `${n} WebSocket upgrades without the token, each closed with a TCP reset (token set)`, r.held && (after?.uiRefused?.token ?? 0) > 0, `${r.text}; ${after?.uiRefused?.token ?? "?"} token refusals, ${after?.uiRefused?.socket ?? "?"} sockets reset under the server (issue 24 item 1: write ECONNRESET ended the process)`);
    }),
};

const uiFrames: FaultScenario = {
  name: "attack: UI oversize and invalid UTF-8 frames",
  run: () =>
    onTarget({ robot: robot("ui-frames"), uiToken: "attack-ui-token-0123456789" }, async (t, before) => {
      const port = Number(new URL(t.ready.uiUrl!).port);
      const path = "/ws?token=attack-ui-token-0123456789";
      const bystander = new WebSocket(`ws://127.0.0.1:${port}${path}`);
      bystander.on("error", () => undefined);
      await new Promise((res, rej) => (bystander.once("open", res), bystander.once("error", rej)));
      const codes: (number | null)[] = [];
      for (const bad of [frame(1, Buffer.alloc(5000, 0x61)), frame(1, Buffer.from([0xc3, 0x28])), frame(1, Buffer.from("estop"), { mask: false })]) {
        const raw = await rawWebSocket(port, path);
        raw.socket.write(bad);
        await Promise.race([raw.closed, new Promise((r) => setTimeout(r, 5000))]);
        codes.push(closeCode(raw.received()));
        raw.socket.destroy();
      }
      bystander.send(JSON.stringify({ type: "command", cmd: "pause" }));
      const after = await until(t, (s) => s.acted.length > 0, "the bystander's pause").catch(() => null);
      bystander.terminate();
      const r = await robotAfter(t, before, after === null ? null : { ...after, acted: after.acted.filter((a) => a.cmd !== "pause") });
      const closedRight = codes.join() === "1009,1007,1002";
      return attackRow("attack: UI oversize and invalid UTF-8 frames", "a 5000-byte text frame, an invalid UTF-8 frame and an unmasked frame, each on its own WebSocket", r.held && closedRight && after?.acted.length === 1, `${r.text}; each attacker closed with ${codes.join(", ")} (message too big, invalid payload, protocol error), the bystander's pause still acted (issue 24 item 1: the 'ws' error ended the process)`);
    }),
};

const retainedRelease: FaultScenario = {
  name: "attack: retained release_estop replayed on reconnect",
  async run() {
    const broker = await startMosquitto({ config: ["allow_anonymous true"] }); // the old example config: anyone may take any client id
    const name = robot("retain");
    try {
      return await onTarget({ robot: name, mqtt: { url: broker.url } }, async (t) => {
        const op = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0, clientId: `op-${name}` });
        try {
          await op.publishAsync(`rlft/${name}/cmd`, "release_estop", { qos: 1, retain: true });
          await op.publishAsync(`rlft/${name}/cmd`, "estop", { qos: 1 });
          await until(t, (s) => s.estopped, "the e-stop to latch");
          // Item 5 forces item 4: a client taking the robot's id kicks it; it reconnects and resubscribes.
          const kicker = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0, clientId: `rlft-${name}` });
          kicker.on("error", () => undefined);
          const after = await until(t, (s) => s.linkDrops > 0 && (s.link?.retained ?? 0) > 0, "the kick, the reconnect and the replay");
          await new Promise((r) => setTimeout(r, 300));
          const last = await t.stats();
          await kicker.endAsync(true).catch(() => undefined);
          const held = last.estopped && last.link!.retained >= 1 && last.unsafe === 0 && !last.acted.some((a) => a.cmd === "release_estop");
          return attackRow("attack: retained release_estop replayed on reconnect", "a retained release_estop on the command topic, an e-stop, then the robot kicked off the broker by a client using its id", held, `robot dropped ${after.linkDrops}× and resubscribed; the broker replayed the release ${last.link!.retained}× (RETAIN 1): ignored, e-stop still latched: ${last.estopped}; ${last.unsafe} unsafe commands (issue 24 item 4: "e-stop released by mqtt")`, last.unsafe);
        } finally {
          await op.publishAsync(`rlft/${name}/cmd`, "", { qos: 1, retain: true }).catch(() => undefined);
          await op.endAsync(true);
        }
      });
    } finally {
      await broker.stop();
    }
  },
};

const clientIdTakeover: FaultScenario = {
  name: "attack: read-only MQTT user takes the robot's client id",
  async run(ctx: FaultContext) {
    const name = robot("cid");
    const pw = { robot: "robot-secret-pass", dash: "dash-secret-pass" };
    const passwd = join(ctx.root, "passwd");
    execFileSync("mosquitto_passwd", ["-b", "-c", passwd, name, pw.robot]);
    execFileSync("mosquitto_passwd", ["-b", passwd, "dashboard", pw.dash]);
    copyFileSync(join(import.meta.dirname, "..", "..", "docker", "mosquitto", "acl.example"), join(ctx.root, "acl"));
    chmodSync(ctx.root, 0o755);
    for (const f of ["passwd", "acl"]) chmodSync(join(ctx.root, f), 0o644);
    const broker = await startMosquitto({ config: secureMosquittoConfig({ passwordFile: passwd, aclFile: join(ctx.root, "acl") }) });
    try {
      return await onTarget({ robot: name, mqtt: { url: broker.url, username: name, password: pw.robot } }, async (t) => {
        for (const clientId of [`rlft-${name}`, name]) {
          const dash = await mqtt.connectAsync(broker.url, { username: "dashboard", password: pw.dash, clientId, reconnectPeriod: 0 });
          await new Promise((r) => setTimeout(r, 500));
          await dash.endAsync(true);
        }
        const s = await t.stats();
        return attackRow("attack: read-only MQTT user takes the robot's client id", "the read-only dashboard user connects as rlft-<robot> and as <robot> (docker/mosquitto/secure.conf.example)", s.linkDrops === 0, `the robot's connection dropped ${s.linkDrops}× (use_username_as_clientid: the dashboard's id is its username; with the old example config the same client kicks the robot, see the retained-release row) (issue 24 item 5)`);
      });
    } finally {
      await broker.stop();
    }
  },
};

const brokerFlood: FaultScenario = {
  name: "attack: 150 MB publish to the in-process broker",
  run: () =>
    onTarget({ robot: robot("flood"), mqtt: { username: "rlft", password: "flood-secret-pass-1" } }, async (t, before) => {
      const port = Number(new URL(t.ready.brokerUrl!).port);
      // Anonymous first (refused at CONNECT), then authenticated, each announcing and streaming a 150 MB PUBLISH.
      const sent: number[] = [];
      for (const creds of [{}, { username: "rlft", password: "flood-secret-pass-1" }]) {
        const c = await mqtt.connectAsync(t.ready.brokerUrl!, { ...creds, reconnectPeriod: 0 }).catch(() => null);
        const s = c ? (c.stream as Socket) : await rawConnect(port);
        s.on("error", () => undefined);
        const topic = Buffer.from(`rlft/${robot("flood")}/cmd`);
        let rem = 2 + topic.length + 150 * 2 ** 20;
        const len: number[] = [];
        do {
          len.push((rem % 128) | (rem >= 128 ? 0x80 : 0));
          rem = Math.floor(rem / 128);
        } while (rem > 0);
        let closed = s.destroyed;
        s.once("close", () => (closed = true));
        s.write(Buffer.concat([Buffer.from([0x30, ...len, 0, topic.length]), topic]));
        const mb = Buffer.alloc(2 ** 20, 0x61);
        let n = 0;
        for (; n < 150 && !closed; n++) if (!s.write(mb)) await new Promise((r) => (s.once("drain", r), s.once("close", r)));
        sent.push(n);
        s.destroy();
      }
      await new Promise((r) => setTimeout(r, 300));
      const after = await t.stats().catch(() => null);
      const r = await robotAfter(t, before, after);
      const grew = after ? (after.rss - before.rss) / 1e6 : Infinity;
      return attackRow("attack: 150 MB publish to the in-process broker", "an anonymous and an authenticated client each announce a 150 MB PUBLISH on the command topic and stream it", r.held && grew < 100 && (after?.brokerRefused?.oversize ?? 0) >= 1, `${r.text}; connections cut after ${sent.join(" and ")} MB streamed (refused: ${JSON.stringify(after?.brokerRefused)}) (issue 24: RSS 380 MB → 1.2 GB)`);
    }),
};

const fuzzUi: FaultScenario = {
  name: "attack: fuzzing the operator UI",
  run: (ctx) =>
    onTarget({ robot: robot("fuzz-ui"), uiToken: "attack-ui-token-0123456789" }, async (t, before) => {
      const rep = await fuzzOperatorUi({ port: Number(new URL(t.ready.uiUrl!).port), token: "attack-ui-token-0123456789", seed: 2024, count: ctx.full ? 5000 : 600, ms: ctx.full ? 30_000 : 6000 });
      await new Promise((r) => setTimeout(r, 300));
      const after = await t.stats().catch(() => null);
      const r = await robotAfter(t, before, after);
      return attackRow("attack: fuzzing the operator UI", `${rep.sent} seeded random/mutated inputs in ${rep.seconds.toFixed(1)} s: ${JSON.stringify(rep.kinds)}`, r.held && (after?.rss ?? Infinity) - before.rss < 150e6, `${r.text}; refusals ${JSON.stringify(after?.uiRefused)}, console rejected ${JSON.stringify(after?.consoleRejected)}`, after?.unsafe ?? 0);
    }),
};

const fuzzMqttDoor: FaultScenario = {
  name: "attack: fuzzing MQTT (command topic and broker)",
  run: (ctx) =>
    onTarget({ robot: robot("fuzz-mqtt"), mqtt: { username: "rlft", password: "fuzz-secret-pass-12" } }, async (t, before) => {
      const rep = await fuzzMqtt({ url: t.ready.brokerUrl!, username: "rlft", password: "fuzz-secret-pass-12", robot: robot("fuzz-mqtt"), seed: 2024, count: ctx.full ? 4000 : 600, ms: ctx.full ? 30_000 : 6000, rawBroker: true });
      const after = await until(t, (s) => s.link!.received - before.link!.received >= rep.published + 1, "every payload at the link").catch(() => t.stats().catch(() => null));
      const r = await robotAfter(t, before, after);
      return attackRow("attack: fuzzing MQTT (command topic and broker)", `${rep.sent} seeded inputs in ${rep.seconds.toFixed(1)} s: ${JSON.stringify(rep.kinds)}`, r.held && after!.linkDrops === 0 && after!.rss - before.rss < 150e6, `${r.text}; link ${JSON.stringify(after?.link)}, broker refused ${JSON.stringify(after?.brokerRefused)}`, after?.unsafe ?? 0);
    }),
};

const publicBinds: FaultScenario = {
  name: "attack: listeners on a public address without authentication",
  async run(ctx) {
    const backend = { status: () => ({}) as never, onStatus: () => () => undefined, onFrame: () => () => undefined, command: () => ({ ok: true as const }), malformed: () => undefined };
    const attempts: [string, () => Promise<unknown>][] = [
      ["ui.host 0.0.0.0 without ui.token", () => OperatorUiServer.start(backend, { host: "0.0.0.0", port: 0, cameraFps: 5 })],
      ["in-process broker on 0.0.0.0 without credentials", () => EmbeddedBroker.start({ port: 0, host: "0.0.0.0" })],
      ["topic proxy on tcp://*", () => ZmqProxy.start({ xsub: "tcp://*:0", xpub: "tcp://*:0" })],
      ["session learner experience_bind tcp://0.0.0.0 without CURVE", () => runSession({ config: parseLaunch("actor: {kind: policy, package: /nonexistent}\n"), learner: true, episodes: 1, seed: 0, out: join(ctx.root, "s"), learnerConfig: { experience_bind: "tcp://0.0.0.0:5555" } })],
    ];
    const refused: string[] = [];
    for (const [what, open] of attempts) {
      try {
        const opened = (await open()) as { close?: () => Promise<void> };
        await opened.close?.();
      } catch (e) {
        if ((e as { code?: string }).code === "PUBLIC_BIND_REFUSED") refused.push(what);
      }
    }
    return attackRow("attack: listeners on a public address without authentication", attempts.map((a) => a[0]).join("; "), refused.length === attempts.length, `${refused.length}/${attempts.length} refused by checkListenAddress before listening, naming the setting and the fix (issue 24 item 8, TS side)`);
  },
};

const limits: FaultScenario = {
  name: "attack: limits that switch safety off",
  async run(ctx) {
    const files = [
      "safety: {max_step: 1e308}", "safety: {watchdog_sec: 1e300}", "safety: {max_velocity: 1e9}", "control_hz: 1e-9",
      // Joint limits of 1e308 clamp nothing (the joint_range bound, one turn).
      "driver: {kind: ros2_control, joints: [a], lower: [-1], upper: [1e308]}", "driver: {kind: ur_rtde, host: 10.0.0.2, lower: [-1e308, -1, -1, -1, -1, -1]}",
    ];
    const boundError = (f: () => unknown) => {
      try {
        f();
        return false;
      } catch (e) {
        return /is outside the bound \w+ .* that protects|wider than one turn/.test((e as Error).message);
      }
    };
    const refused = files.filter((f) => boundError(() => parseLaunch(f, "limits.yaml")));
    // The same limits where they reach the safety supervisor without a launch file: its parameters and a calibration file.
    const others = [
      ["safety_supervisor joint_upper=[1e308]", () => checkParams("safety_supervisor", { joint_names: ["a"], joint_lower: [-1], joint_upper: [1e308] })],
      ["calibration range_min -1e9 .. range_max 1e9", () => parseArmCalibration(JSON.stringify({ a: { homing_offset: 0, range_min: -1e9, range_max: 1e9 } }), "wide.json")],
    ] as const;
    const othersRefused = others.filter(([, f]) => boundError(f)).length;
    // The short form runs one command line (each costs a process start); the CLI's own program tests cover every option.
    const values = ctx.full ? ["abc", "-3", "1.5"] : ["abc"];
    const cli = values.map((v) => rlft(["collect", "--episodes", v, "--out", join(ctx.root, `never-${v}`), "--no-camera"], 120_000));
    const cliRefused = cli.filter((r) => r.status === 1 && /argument '.*' is invalid\. expected an integer ≥ 1/.test(r.stderr) && !/success rate/.test(r.stdout)).length;
    return attackRow("attack: limits that switch safety off", `${files.join("; ")}; ${others.map((o) => o[0]).join("; ")}; rlft collect --episodes ${values.join(" | ")}`, refused.length === files.length && othersRefused === others.length && cliRefused === values.length, `${refused.length}/${files.length} launch files refused with file:line, the bound and what it protects; ${othersRefused}/${others.length} supervisor parameters and calibration files refused naming the field and the bound; ${cliRefused}/${values.length} command lines refused before running (issue 24 item 9: 1e308 accepted, "--episodes abc" ran 0 episodes)`);
  },
};

/** The attack rows, in table order (robot side; learnerAttacks.ts has the learner's). */
export const ATTACK_SCENARIOS: FaultScenario[] = [uiResets, uiFrames, retainedRelease, clientIdTakeover, brokerFlood, fuzzUi, fuzzMqttDoor, publicBinds, limits, collectKilled, sessionRestarted, sessionFatalError, nanPackage, packageCache];
