/**
 * Operator-channel faults (docs/faults.md): the e-stop from MQTT (real mosquitto), from the web UI (its real
 * HTTP/WebSocket server, token on) and from the terminal keyboard (raw bytes into the keyboard teleop device), and
 * malformed MQTT commands. Each runs the sim stack on the wall clock at 20 Hz with the learner-exported policy moving
 * the arm, probes what leaves the safety supervisor (/joint_command) and what reaches the driver, and measures the
 * ticks from the moment the e-stop leaves the operator's client to the moment the hold leaves the supervisor.
 */
import { EventEmitter } from "node:events";
import { join } from "node:path";
import mqtt, { type MqttClient } from "mqtt";
import WebSocket from "ws";
import { Stack } from "../../launch/Stack.ts";
import type { LaunchConfig } from "../../launch/LaunchConfig.ts";
import { TOPICS } from "../../contracts/topics.ts";
import type { KeyInput } from "../../hardware/teleop/KeyboardTeleop.ts";
import { startMosquitto, type RunningServer } from "../servers.ts";
import { auditDriver, launchConfig } from "./rig.ts";
import type { FaultContext, FaultRow, FaultScenario } from "./FaultScenario.ts";

const HZ = 20;

/** What leaves the safety supervisor, tick by tick. */
interface Probe {
  ticks: number;
  /** Order of arrival across every probed topic. */
  seq: number;
  /** Every /joint_command with the tick it left on. */
  commands: { tick: number; seq: number; at: number; q: number[] }[];
  /** Safety events (estop, pause, release, ...) with their tick. */
  events: { tick: number; seq: number; kind: string }[];
  rewards: number;
  episodeEvents: string[];
}

function probe(stack: Stack): Probe {
  const p: Probe = { ticks: 0, seq: 0, commands: [], events: [], rewards: 0, episodeEvents: [] };
  const n = stack.runtime.createNode("fault_probe");
  n.createSubscription(TOPICS.observation.type, TOPICS.observation.topic, () => p.ticks++);
  n.createSubscription<{ position: ArrayLike<number> }>(TOPICS.jointCommand.type, TOPICS.jointCommand.topic, (m) => p.commands.push({ tick: p.ticks, seq: p.seq++, at: performance.now(), q: Array.from(m.position) }));
  n.createSubscription<{ kind: string }>(TOPICS.safetyEvent.type, TOPICS.safetyEvent.topic, (m) => p.events.push({ tick: p.ticks, seq: p.seq++, kind: m.kind }));
  n.createSubscription(TOPICS.reward.type, TOPICS.reward.topic, () => p.rewards++);
  n.createSubscription<{ event: string }>(TOPICS.episodeEvent.type, TOPICS.episodeEvent.topic, (m) => p.episodeEvents.push(m.event));
  return p;
}

const same = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => x === b[i]);

async function until(cond: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Waits until `n` more ticks ran (a hang guard, not a timing assertion). */
async function ticks(p: Probe, n: number): Promise<void> {
  const t = p.ticks + n;
  await until(() => p.ticks >= t, `${n} control ticks`);
}

/** A motion command left the supervisor since index `from`: one that differs from the one before it. */
function movedSince(p: Probe, from: number): boolean {
  return p.commands.slice(Math.max(1, from)).some((c, i) => !same(c.q, p.commands[Math.max(1, from) + i - 1].q));
}

/** The stack for one channel: wall clock, 20 Hz, no ground-truth reward (episodes end only on the step limit or a command). */
async function channelStack(ctx: FaultContext, o: { operator: Partial<LaunchConfig["operator"]>; ui?: string; mqtt?: string; robot: string; keyInput?: KeyInput }) {
  const cfg = launchConfig({
    baseDir: ctx.baseDir, out: join(ctx.root, "robot"), hz: HZ,
    extra: `clock: wall\nreward: {sim_ground_truth: false}\nlearner: {robot_id: ${JSON.stringify(o.robot)}}\n${o.ui ? `ui: ${o.ui}\n` : ""}${o.mqtt ? `mqtt: ${o.mqtt}\n` : ""}`,
  });
  cfg.operator = { ...cfg.operator, ...o.operator };
  cfg.recorder.enabled = false;
  cfg.episodes.max_steps = 100_000;
  const stack = await Stack.create(cfg, { quiet: true, operatorGate: false, keyInput: o.keyInput });
  const audit = auditDriver(stack);
  const p = probe(stack);
  const run = stack.runEpisodes({ count: 1, seed: 11 });
  run.catch(() => undefined);
  return { stack, audit, p, run };
}

/** How an operator channel e-stops, tries to move the arm while latched, releases and ends the episode. */
interface Channel {
  estop(): Promise<void>;
  /** Everything a person (or a stuck key) could send to get the arm moving again while the e-stop is latched. */
  tryToMove(): Promise<void>;
  release(): Promise<void>;
  abort(): Promise<void>;
}

/** Runs `reps` e-stops through `ch` on a running stack and returns the fault-table row. */
async function estopRounds(ctx: FaultContext, name: string, s: Awaited<ReturnType<typeof channelStack>>, ch: Channel, refusedBefore: () => number): Promise<FaultRow> {
  const { stack, audit, p } = s;
  const reps = ctx.full ? 5 : 1;
  const stopTicks: number[] = [];
  const stopMs: number[] = [];
  let inFlight = 0;
  let motionAfterLatch = 0;
  let driverMovedAfterLatch = 0;
  let latchedTicks = 0;
  let releasedWhileLatched = 0;
  const refused0 = refusedBefore();
  for (let r = 0; r < reps; r++) {
    // The policy is driving the arm: commands that change from tick to tick leave the supervisor.
    const c0 = p.commands.length;
    await until(() => movedSince(p, c0) && p.commands.length - c0 >= 5, "the policy to move the arm");
    const sentTick = p.ticks;
    const sentCmd = p.commands.length;
    const ev0 = p.events.length;
    const t0 = performance.now();
    await ch.estop();
    const latched = () => p.events.slice(ev0).find((e) => e.kind === "estop");
    await until(() => stack.safety.estopped && p.commands.some((c) => c.seq > (latched()?.seq ?? Infinity)), "the supervisor to latch the e-stop and publish its hold");
    const latch = latched()!;
    // The hold is the first command after the latch event; everything after it must be that same position.
    const holdIdx = p.commands.findIndex((c) => c.seq > latch.seq);
    const hold = p.commands[holdIdx];
    stopTicks.push(hold.tick - sentTick);
    stopMs.push(hold.at - t0);
    inFlight += holdIdx - sentCmd; // policy commands that left between the send and the hold
    const writes0 = audit.log.length;
    const tick0 = p.ticks;
    await ch.tryToMove();
    await ticks(p, 10);
    latchedTicks += p.ticks - tick0;
    if (!stack.safety.estopped) releasedWhileLatched++;
    motionAfterLatch += p.commands.slice(holdIdx + 1).filter((c) => !same(c.q, hold.q)).length;
    driverMovedAfterLatch += audit.log.slice(writes0).filter((q) => !same(q, hold.q)).length;
    if (r < reps - 1) {
      await ch.release();
      await until(() => !stack.safety.frozen, "release + resume to unfreeze the supervisor");
    }
  }
  const refused = refusedBefore() - refused0;
  await ch.abort();
  const [res] = await Promise.race([s.run, new Promise<never>((_, rej) => setTimeout(() => rej(new Error("the episode did not end on abort")), 15_000))]);
  const maxTicks = Math.max(...stopTicks);
  const survived = motionAfterLatch === 0 && driverMovedAfterLatch === 0 && releasedWhileLatched === 0 && refused > 0 && audit.unsafe === 0 && res.outcome === "abort";
  return {
    scenario: name,
    injected: `${reps} × e-stop while the policy moves the arm (20 Hz, wall clock), then move attempts while latched`,
    survived, transitionsLost: 0, unsafeCommands: audit.unsafe,
    detail: `ticks until stop (send → hold leaves the supervisor): ${stopTicks.join(", ")} (max ${maxTicks}; ${stopMs.map((x) => x.toFixed(0)).join(", ")} ms); ${inFlight} policy command(s) left between send and hold; after the latch ${motionAfterLatch} motion commands left the supervisor and ${driverMovedAfterLatch} reached the driver over ${latchedTicks} ticks; ${refused} move attempt(s) refused while latched`,
  };
}

async function withBroker<T>(fn: (b: RunningServer) => Promise<T>): Promise<T> {
  const b = await startMosquitto();
  try {
    return await fn(b);
  } finally {
    await b.stop();
  }
}

/** An MQTT operator client on the robot's cmd topic that collects every cmd_result. */
async function mqttOperator(url: string, robot: string): Promise<{ c: MqttClient; results: { ok: boolean; error?: string }[]; send(p: string | Buffer): Promise<void> }> {
  const c = await mqtt.connectAsync(url, { reconnectPeriod: 0, clientId: `fault-op-${robot}` });
  const results: { ok: boolean; error?: string }[] = [];
  c.on("message", (t, m) => t === `rlft/${robot}/cmd_result` && results.push(JSON.parse(m.toString())));
  await c.subscribeAsync(`rlft/${robot}/cmd_result`, { qos: 1 });
  return { c, results, send: async (p) => void (await c.publishAsync(`rlft/${robot}/cmd`, p, { qos: 1 })) };
}

const robotName = (what: string) => `fault-${what}-${process.pid}`;

const estopMqtt: FaultScenario = {
  name: "e-stop from MQTT",
  run: (ctx) =>
    withBroker(async (broker) => {
      const robot = robotName("mqtt");
      const s = await channelStack(ctx, { operator: { enabled: false }, mqtt: `{enabled: true, url: ${JSON.stringify(broker.url)}, status_hz: 2}`, robot });
      const op = await mqttOperator(broker.url, robot);
      try {
        const ch: Channel = {
          estop: () => op.send(JSON.stringify({ cmd: "estop", robot })),
          tryToMove: async () => {
            for (const cmd of ["resume", "start", "pause"]) await op.send(cmd);
          },
          release: async () => {
            await op.send("release_estop");
            await op.send("resume");
          },
          abort: () => op.send("abort"),
        };
        return await estopRounds(ctx, "e-stop from MQTT", s, ch, () => s.stack.station!.console.rejected.refused);
      } finally {
        await op.c.endAsync();
        await s.stack.shutdown();
      }
    }),
};

const estopUi: FaultScenario = {
  name: "e-stop from the web UI",
  async run(ctx) {
    const token = "fault-suite-token-0123456789";
    const s = await channelStack(ctx, { operator: { enabled: true, kind: "ui" }, ui: `{enabled: true, port: 0, token: ${token}}`, robot: robotName("ui") });
    const url = new URL(s.stack.station!.ui!.url);
    const ws = new WebSocket(`ws://${url.host}/ws?token=${token}`);
    try {
      await new Promise((res, rej) => (ws.once("open", res), ws.once("error", rej)));
      const send = (m: object) => new Promise<void>((res, rej) => ws.send(JSON.stringify(m), (e) => (e ? rej(e) : res())));
      const ch: Channel = {
        estop: () => send({ type: "command", cmd: "estop" }),
        tryToMove: async () => {
          // Held arrow keys (web keyboard teleop) and the buttons that would get the arm going again.
          await send({ type: "key", key: "up", down: true });
          await send({ type: "key", key: "pageup", down: true });
          for (const cmd of ["resume", "start", "pause"]) await send({ type: "command", cmd });
          const post = await fetch(`http://${url.host}/api/command`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ cmd: "resume" }) });
          if (post.status !== 422) throw new Error(`POST /api/command resume while latched answered ${post.status}, expected 422`);
          await ticks(s.p, 5);
          await send({ type: "key", key: "up", down: false });
          await send({ type: "key", key: "pageup", down: false });
        },
        release: async () => {
          await send({ type: "command", cmd: "release_estop" });
          await send({ type: "command", cmd: "resume" });
        },
        abort: () => send({ type: "command", cmd: "abort" }),
      };
      return await estopRounds(ctx, "e-stop from the web UI", s, ch, () => s.stack.station!.console.rejected.refused);
    } finally {
      ws.terminate();
      await s.stack.shutdown();
    }
  },
};

const estopKeyboard: FaultScenario = {
  name: "e-stop from the keyboard",
  async run(ctx) {
    // The terminal in raw mode, as bytes: Space (0x20) is the e-stop, ESC [ A the up arrow (xterm ctlseqs).
    const tty = new EventEmitter() as EventEmitter & KeyInput;
    const type = (bytes: string) => void tty.emit("data", Buffer.from(bytes, "latin1"));
    const s = await channelStack(ctx, { operator: { enabled: true, kind: "keyboard" }, robot: robotName("keyboard"), keyInput: tty });
    const console = s.stack.station!.console;
    try {
      const ch: Channel = {
        estop: async () => type(" "),
        tryToMove: async () => {
          // Arrow keys (a jog per press), PgUp, `t` (take over), `p` (pause/resume), `n` (start), split across reads.
          for (let i = 0; i < 6; i++) {
            type("\x1b[A\x1b[5~t");
            type("\x1b");
            type("[Cpn");
            await ticks(s.p, 1);
          }
        },
        release: async () => {
          // There is no release key (on purpose): the release comes from the UI; `p` then resumes.
          console.command({ cmd: "release_estop", from: "web_ui" });
          type("p");
        },
        abort: async () => type("a"),
      };
      return await estopRounds(ctx, "e-stop from the keyboard", s, ch, () => console.rejected.refused);
    } finally {
      await s.stack.shutdown();
    }
  },
};

/** Malformed variants of one command: each must be rejected, counted and answered with ok: false. */
function malformed(cmd: string, other: string): { payload: string | Buffer; kind: "malformed" | "unknown" | "other" }[] {
  return [
    { payload: `{"cmd": "${cmd}"`, kind: "malformed" }, // truncated JSON
    { payload: Buffer.from([0x00, 0xff, 0xfe, 0x7b]), kind: "malformed" }, // binary garbage
    { payload: "", kind: "malformed" },
    { payload: JSON.stringify({ cmd: 7 }), kind: "malformed" },
    { payload: JSON.stringify({ cmd: [cmd] }), kind: "malformed" },
    { payload: JSON.stringify({ cmd, robot: 42 }), kind: "malformed" },
    { payload: JSON.stringify({ cmd, force: true }), kind: "malformed" }, // unknown key
    { payload: JSON.stringify({ cmd, pad: "x".repeat(2000) }), kind: "malformed" }, // 2 KB
    { payload: Buffer.alloc(256 * 1024, cmd), kind: "malformed" }, // 256 KB of the command word
    { payload: JSON.stringify({ cmd: `${cmd}_now` }), kind: "unknown" },
    { payload: `${cmd}x`, kind: "unknown" },
    { payload: JSON.stringify({ cmd, robot: other }), kind: "other" },
  ];
}

const malformedMqtt: FaultScenario = {
  name: "malformed MQTT commands",
  run: (ctx) =>
    withBroker(async (broker) => {
      const robot = robotName("mqtt-bad");
      const other = `${robot}-other`;
      const s = await channelStack(ctx, { operator: { enabled: false }, mqtt: `{enabled: true, url: ${JSON.stringify(broker.url)}, status_hz: 2}`, robot });
      const op = await mqttOperator(broker.url, robot);
      const { stack, audit, p } = s;
      const link = stack.station!.mqtt!;
      const console = stack.station!.console;
      try {
        const sendAll = async (cmds: string[]) => {
          const n0 = op.results.length;
          const sent = cmds.flatMap((c) => malformed(c, other));
          for (const m of sent) await op.send(m.payload);
          await until(() => op.results.length >= n0 + sent.length, "a cmd_result for every payload");
          return { sent, okAnswers: op.results.slice(n0).filter((r) => r.ok).length };
        };
        // 1. While the policy drives: malformed stop/end commands change nothing (no e-stop, pause, abort, reward).
        await until(() => p.commands.length > 5 && movedSince(p, 1), "the policy to move the arm");
        const a = await sendAll(["estop", "abort", "success", "pause"]);
        const runningUnchanged = stack.manager.running && !stack.manager.paused && !stack.safety.frozen && p.rewards === 0 && p.episodeEvents.every((e) => e === "reset" || e === "start");
        // 2. E-stopped (a valid command): malformed release/resume/start commands must not get anything moving.
        await op.send("estop");
        await until(() => stack.safety.estopped && p.events.some((e) => e.kind === "estop"), "the valid e-stop to latch");
        await ticks(p, 2);
        const held = p.commands.length;
        const tick0 = p.ticks;
        const b = await sendAll(["release_estop", "resume", "start"]);
        await ticks(p, 5);
        const leftWhileLatched = p.commands.length - held;
        const latchedTicks = p.ticks - tick0;
        const stillLatched = stack.safety.estopped && stack.manager.paused;
        // 3. Positive control: the same client's well-formed release + resume get the arm moving again.
        const c1 = p.commands.length;
        await op.send("release_estop");
        await op.send("resume");
        await until(() => movedSince(p, c1), "motion to resume after a valid release + resume");
        await op.send("abort");
        await s.run;
        const sent = [...a.sent, ...b.sent];
        const want = { malformed: sent.filter((x) => x.kind === "malformed").length, unknown: sent.filter((x) => x.kind === "unknown").length, other: sent.filter((x) => x.kind === "other").length };
        const rej = console.rejected;
        const counted = link.stats.malformed === want.malformed && rej.malformed === want.malformed + want.unknown && rej.otherRobot === want.other && link.stats.otherRobot === want.other;
        const survived = counted && a.okAnswers + b.okAnswers === 0 && runningUnchanged && leftWhileLatched === 0 && stillLatched && audit.unsafe === 0;
        return {
          scenario: "malformed MQTT commands",
          injected: `${sent.length} payloads: ${want.malformed} malformed (truncated/binary/empty JSON, wrong types, unknown key, 2 KB and 256 KB), ${want.unknown} unknown commands, ${want.other} for another robot; while running and while e-stopped`,
          survived, transitionsLost: 0, unsafeCommands: audit.unsafe,
          detail: `all answered ok: false (${a.okAnswers + b.okAnswers} accepted); counted: link malformed ${link.stats.malformed}, console rejected ${JSON.stringify(rej)}; running episode ${runningUnchanged ? "unaffected" : "AFFECTED"}; while e-stopped ${leftWhileLatched} commands left the supervisor over ${latchedTicks} ticks, still latched: ${stillLatched}; a valid release + resume from the same client moved the arm again`,
        };
      } finally {
        await op.c.endAsync();
        await stack.shutdown();
      }
    }),
};

/** The operator-channel scenarios, in table order. */
export const OPERATOR_FAULT_SCENARIOS: FaultScenario[] = [estopMqtt, estopUi, estopKeyboard, malformedMqtt];
