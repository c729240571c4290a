// Fault injection against the real learner (`python3 -m rlft_learner serve`) over loopback, on free ports: a learner
// SIGKILLed mid-stream and restarted on the same run_dir, malformed frames, a robot process SIGKILLed mid-stream.
// Every transition is counted end to end (the learner's `done` line counts its replay rows and distinct seqs per robot).
// Assertions are on behaviour and counts; waits are hang guards, not timing assertions.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Dealer } from "zeromq";
import { ExperienceBridge, type ExperienceBridgeOptions } from "../bridge/ExperienceBridge.ts";
import { encodeHeartbeat, encodeHello, encodeTransitions, type Welcome } from "../bridge/messages.ts";
import { decodeMessage, encodeMessage, type Header } from "../bridge/wire.ts";
import { makeTransitionOf, recordingLogger, waitFor } from "../bridge/testing/helpers.ts";
import { makeLearnerFixture } from "../policies/testing/learnerFixture.ts";
import { freePorts } from "../app/ports.ts";
import { LearnerProc, startLearnerOnFreePorts, tinyLearnerArgs } from "./support/LearnerProc.ts";

interface Base {
  dir: string;
  version: string;
  task: string;
  obsNames: string[];
  actionNames: string[];
}

async function setup(o: { learnerUp?: boolean } = {}) {
  const fx = await makeLearnerFixture();
  const pj = JSON.parse(await readFile(join(fx.dir, "policy.json"), "utf8")) as { version: string; observation: { names: string[] }; action: { names: string[] }; provenance?: { task?: string } };
  const base: Base = { dir: fx.dir, version: pj.version, task: pj.provenance?.task ?? "task", obsNames: pj.observation.names, actionNames: pj.action.names };
  const root = await mkdtemp(join(tmpdir(), "rlft-faults-"));
  // The first learner starts here, on ports it could bind (startLearnerOnFreePorts), and each test's first learner()
  // is that one; later ones restart on the same ports and run_dir. With learnerUp false the ports are only picked and
  // the first learner() starts it (a robot that records before the learner exists).
  const argsFor = (experience: string, policy: string) => tinyLearnerArgs({ base: base.dir, runDir: join(root, "run"), experience, policy });
  let first: LearnerProc | undefined;
  let endpoint: string;
  let args: string[];
  if (o.learnerUp ?? true) {
    const up = await startLearnerOnFreePorts(argsFor);
    ({ experience: endpoint, args } = up);
    first = up.proc;
  } else {
    const [p1, p2] = await freePorts(2);
    endpoint = `tcp://127.0.0.1:${p1}`;
    args = argsFor(endpoint, `tcp://127.0.0.1:${p2}`);
  }
  const started: LearnerProc[] = first ? [first] : [];
  const learner = () => {
    if (first) {
      const l = first;
      first = undefined;
      return l;
    }
    const l = new LearnerProc(args);
    started.push(l);
    return l;
  };
  const bridgeOptions = (robotId: string, logger = recordingLogger()): ExperienceBridgeOptions => ({
    endpoint, spoolDir: join(root, "spool"), robotId, configHash: "cfg", obsNames: base.obsNames, actionNames: base.actionNames,
    task: base.task, basePolicyVersion: base.version, batchSize: 16, flushIntervalMs: 20, deadlineMs: 3000, reconnectDelayMs: 100,
    heartbeatSec: 0.2, logger,
  });
  const cleanup = async () => {
    for (const l of started) await l.kill();
    await rm(root, { recursive: true, force: true });
    await fx.cleanup();
  };
  return { base, root, endpoint, learner, bridgeOptions, cleanup };
}

function robotCounts(done: Record<string, unknown>, robot: string): { acked_seq: number; durable_seq: number; online_rows: number; distinct_seqs: number } {
  const robots = done.robots as Record<string, { acked_seq: number; durable_seq: number; online_rows: number; distinct_seqs: number }>;
  assert.ok(robots?.[robot], `the learner's done line names robot ${robot}: ${JSON.stringify(done)}`);
  return robots[robot];
}

test("learner SIGKILLed mid-session and restarted on its run_dir: every pushed transition is stored exactly once", { timeout: 120_000 }, async () => {
  const s = await setup({ learnerUp: false });
  try {
    let learner = s.learner();
    await learner.event("progress");
    const logger = recordingLogger();
    const bridge = await ExperienceBridge.open(s.bridgeOptions("kill-robot", logger));
    const welcomes: Welcome[] = [];
    bridge.onWelcome((w) => welcomes.push(w));
    const { obsNames: o, actionNames: a } = s.base;
    let step = 0;
    const burst = (n: number) => {
      for (let i = 0; i < n; i++) assert.equal(bridge.push(makeTransitionOf(1, step++, o.length, a.length)), true);
    };
    // Burst 1, checkpointed: durable on the learner, deleted from the spool.
    burst(120);
    assert.equal(await bridge.flush({ durable: true, timeoutMs: 30_000 }), true, "burst 1 becomes durable");
    assert.equal(bridge.stats().durableSeq, 119);
    // Burst 2, acked (in the learner's memory), then the learner is killed hard.
    burst(100);
    assert.equal(await bridge.flush({ timeoutMs: 30_000 }), true, "burst 2 acked");
    const atKill = bridge.stats();
    assert.equal(atKill.ackedSeq, 219);
    await learner.kill();
    // The robot keeps running while the learner is down: burst 3 goes to the spool.
    burst(60);
    await waitFor(() => bridge.stats().lastSeq === 279, "burst 3 spooled", 30_000);
    assert.equal(bridge.stats().durableSeq >= atKill.durableSeq, true);
    // The learner restarts on the same run_dir and ports, resumes from its checkpoint; the robot re-greets and resends.
    learner = s.learner();
    await learner.event("resumed");
    burst(80);
    assert.equal(await bridge.flush({ timeoutMs: 60_000 }), true, "everything acked by the restarted learner");
    assert.equal(await bridge.flush({ durable: true, timeoutMs: 30_000 }), true, "and checkpointed");
    const st = bridge.stats();
    const resumedAt = welcomes.at(-1)!.ackedSeq;
    assert.ok(resumedAt >= atKill.durableSeq && resumedAt <= atKill.ackedSeq, `the restarted learner holds seq ≤ ${resumedAt}: its checkpoint, between the robot's durable ${atKill.durableSeq} and acked ${atKill.ackedSeq}`);
    assert.equal(welcomes.at(-1)!.durableSeq, resumedAt, "all a resumed learner holds is durable");
    assert.deepEqual([st.pushed, st.rejected, st.lost, st.rewound, st.ackedSeq, st.durableSeq, st.lastSeq], [360, 0, 0, atKill.ackedSeq - resumedAt, 359, 359, 359]);
    assert.equal(logger.warnings.some((w) => /renumbering/.test(w)), false, "no renumbering after a checkpoint resume");
    assert.deepEqual((await readdir(join(s.root, "spool", "kill-robot"))).filter((n) => n.startsWith("seg-")), [], "durable: the spool is empty");
    await bridge.close();
    const done = await learner.stop();
    assert.deepEqual(robotCounts(done, "kill-robot"), { acked_seq: 359, durable_seq: 359, online_rows: 360, distinct_seqs: 360 });
    assert.equal(done.online, 360);
    console.log(`# kill test: pushed 360, stored 360 distinct; killed at acked ${atKill.ackedSeq} / durable ${atKill.durableSeq}, resumed at ${resumedAt}, resent ${st.rewound}`);
  } finally {
    await s.cleanup();
  }
});

test("malformed, truncated and wrong-version frames get error replies; the learner keeps serving", { timeout: 90_000 }, async () => {
  const s = await setup();
  const sock = new Dealer({ linger: 0, receiveTimeout: 10_000 });
  try {
    const learner = s.learner();
    await learner.event("progress");
    sock.connect(s.endpoint);
    const ask = async (frames: Buffer[]): Promise<Header> => {
      await sock.send(frames);
      return decodeMessage(await sock.receive()).header;
    };
    const { obsNames: o, actionNames: a } = s.base;
    const good = encodeTransitions(5, "raw", 0, [0, 1, 2].map((i) => makeTransitionOf(1, i, o.length, a.length)));
    const errors: [string, Header][] = [
      ["garbage", await ask([Buffer.from([0xc1, 0x00, 0x01])])],
      ["truncated tensor", await ask([...good.slice(0, 5), good[5].subarray(0, good[5].byteLength - 4), ...good.slice(6)])],
      ["missing frames", await ask(good.slice(0, 4))],
      ["wrong protocol", await ask([Buffer.from(encodeMessage({ type: "heartbeat", seq: 9, robot_id: "raw" })[0].toString("latin1").replace("rlft-exp/1", "rlft-exp/0"), "latin1")])],
    ];
    for (const [what, r] of errors) assert.equal(r.type, "error", `${what} → ${JSON.stringify(r)}`);
    assert.match(String(errors[3][1].reason), /rlft-exp\/1/);
    const w = await ask(encodeHello(6, { robotId: "raw", configHash: "cfg", obsNames: o, actionNames: a, task: s.base.task, basePolicyVersion: s.base.version }));
    assert.deepEqual([w.type, w.acked_seq, w.durable_seq], ["welcome", -1, -1]);
    const ack = await ask(good);
    assert.deepEqual([ack.type, ack.seq, ack.acked_seq], ["ack", 5, 2]);
    const hb = await ask(encodeHeartbeat(7, "raw"));
    assert.deepEqual([hb.type, hb.acked_seq, hb.online_transitions], ["heartbeat", 2, 3]);
    const done = await learner.stop();
    assert.equal(done.malformed, 4);
    assert.deepEqual(robotCounts(done, "raw"), { acked_seq: 2, durable_seq: 2, online_rows: 3, distinct_seqs: 3 });
  } finally {
    sock.close();
    await s.cleanup();
  }
});

test("a robot process SIGKILLed mid-stream, restarted on its spool: every spooled transition reaches the learner once", { timeout: 90_000 }, async () => {
  const s = await setup();
  try {
    const robotId = "crash-robot";
    const opts = { robotId, obsNames: s.base.obsNames, actionNames: s.base.actionNames, task: s.base.task, basePolicyVersion: s.base.version, count: 400, perTick: 2 };
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "..", "bridge", "testing", "streamingRobot.ts"), join(s.root, "spool"), s.endpoint, JSON.stringify(opts)], { stdio: ["ignore", "pipe", "inherit"] });
    let spooled = -1;
    let acked = -1;
    let buf = "";
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      for (const m of buf.matchAll(/(spooled|acked) (-?\d+)\n/g)) {
        if (m[1] === "spooled") spooled = Math.max(spooled, Number(m[2]));
        else acked = Math.max(acked, Number(m[2]));
      }
      buf = buf.slice(buf.lastIndexOf("\n") + 1);
    });
    // The robot records before the learner is up (a backlog in its spool), then is killed once the first acks arrive.
    await waitFor(() => spooled >= 150, "the robot to spool a backlog", 60_000);
    const learner = s.learner();
    await waitFor(() => acked >= 20, "the robot to stream to the learner and get acks", 60_000);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const killedAt = { spooled, acked };
    const bridge = await ExperienceBridge.open(s.bridgeOptions(robotId));
    const restartedAt = bridge.stats();
    assert.ok(restartedAt.lastSeq >= killedAt.spooled, `what the robot reported spooled (${killedAt.spooled}) is in the spool (${restartedAt.lastSeq})`);
    for (let i = 0; i < 20; i++) bridge.push(makeTransitionOf(2, i, s.base.obsNames.length, s.base.actionNames.length));
    assert.equal(await bridge.flush({ durable: true, timeoutMs: 60_000 }), true);
    const total = bridge.stats().lastSeq + 1;
    assert.equal(total, restartedAt.lastSeq + 1 + 20);
    await bridge.close();
    const done = await learner.stop();
    assert.deepEqual(robotCounts(done, robotId), { acked_seq: total - 1, durable_seq: total - 1, online_rows: total, distinct_seqs: total });
    console.log(`# robot crash test: killed with ${killedAt.spooled + 1} spooled / ${killedAt.acked + 1} acked; learner stored ${total} (incl. 20 after restart)`);
  } finally {
    await s.cleanup();
  }
});
