// The experience uplink against a TS learner stub on loopback: no transition lost or duplicated across partial acks,
// learner restarts, dropped links, crashes and malformed replies. Assertions are on counts, never on timing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExperienceBridge, type ExperienceBridgeOptions } from "./ExperienceBridge.ts";
import { LearnerStub } from "./testing/LearnerStub.ts";
import { makeTransition, recordingLogger, waitFor } from "./testing/helpers.ts";
import type { Transition, TransitionFrame } from "../contracts/Transition.ts";

const ROBOT = "r1";

async function setup(options: Partial<ExperienceBridgeOptions> & { heartbeatSec?: number; reportDurable?: boolean } = {}) {
  const stub = await LearnerStub.start({ heartbeatSec: options.heartbeatSec, reportDurable: options.reportDurable });
  const spoolDir = await mkdtemp(join(tmpdir(), "rlft-bridge-"));
  const logger = recordingLogger();
  const open = (extra: Partial<ExperienceBridgeOptions> = {}) =>
    ExperienceBridge.open({
      endpoint: stub.endpoint, spoolDir, robotId: ROBOT, configHash: "cfg", obsNames: ["a", "b", "c"], actionNames: ["x", "y"], task: "t",
      basePolicyVersion: "bc-1", batchSize: 16, flushIntervalMs: 20, deadlineMs: 300, reconnectDelayMs: 30, heartbeatSec: 0.1, logger, ...options, ...extra,
    });
  const cleanup = async () => {
    stub.close();
    await rm(spoolDir, { recursive: true, force: true });
  };
  return { stub, spoolDir, logger, open, cleanup };
}

/** Every stored transition is the one pushed for its seq (steps 0..n-1 of `episode`, in order), nothing more. */
function assertStoredExactly(stub: LearnerStub, n: number, episode = 1, robot = ROBOT): void {
  const store = stub.stored.get(robot) ?? new Map();
  assert.equal(store.size, n, `stored ${store.size} transitions, expected ${n}`);
  const steps = [...store.keys()].sort((a, b) => a - b).map((seq) => store.get(seq)!.step);
  assert.deepEqual(steps, Array.from({ length: n }, (_, i) => i), "steps by seq");
  for (const t of store.values()) {
    assert.equal(t.episode, episode);
    assert.deepEqual(t, { ...makeTransition(episode, t.step), residualAction: t.residualAction, action: t.action, nextBaseAction: t.nextBaseAction, baseAction: t.baseAction });
    assert.ok(Math.abs(t.action[0] - 0.51) < 1e-6);
  }
}

test("200 transitions arrive once each, in seq order, with their values", async () => {
  const s = await setup();
  try {
    const bridge = await s.open();
    for (let i = 0; i < 200; i++) assert.equal(bridge.push(makeTransition(1, i)), true);
    assert.equal(await bridge.flush(), true);
    assertStoredExactly(s.stub, 200);
    const st = bridge.stats();
    assert.deepEqual([st.pushed, st.spooled, st.acked, st.ackedSeq, st.lastSeq, st.inFlight, st.linkUp], [200, 200, 200, 199, 199, 0, true]);
    await bridge.close();
  } finally {
    await s.cleanup();
  }
});

test("push refuses malformed transitions without throwing", async () => {
  const s = await setup();
  try {
    const bridge = await s.open();
    assert.equal(bridge.push({ ...makeTransition(1, 0), obs: [1, 2] }), false);
    assert.equal(bridge.push({ ...makeTransition(1, 0), action: [NaN, 0] }), false);
    // Finite but beyond the learner's ±1e6 (issue 24): refused here, or the learner would refuse its batch forever.
    assert.equal(bridge.push({ ...makeTransition(1, 0), reward: 3e38 }), false);
    assert.equal(bridge.push({ ...makeTransition(1, 0), nextObs: makeTransition(1, 0).nextObs.map(() => -2e6) }), false);
    assert.equal(bridge.push({ ...makeTransition(1, 0), reward: 1e6 }), true);
    assert.equal(bridge.stats().rejected, 4);
    await bridge.close();
    assert.equal(bridge.push(makeTransition(1, 0)), false);
  } finally {
    await s.cleanup();
  }
});

test("partial acks, then a learner restart: everything after its acked_seq is resent, nothing stored twice", async () => {
  const s = await setup();
  try {
    s.stub.behaviour.partialAck = 5;
    const bridge = await s.open();
    for (let i = 0; i < 64; i++) bridge.push(makeTransition(1, i));
    await waitFor(() => s.stub.batches >= 3, "three partially acked batches");
    await s.stub.restart();
    s.stub.behaviour = {};
    assert.equal(await bridge.flush({ timeoutMs: 15_000 }), true);
    assertStoredExactly(s.stub, 64);
    assert.equal(bridge.stats().ackedSeq, 63);
    await bridge.close();
  } finally {
    await s.cleanup();
  }
});

test("a link that drops mid-stream is detected, re-greeted, and resent: none lost, none duplicated", async () => {
  const s = await setup();
  try {
    s.stub.behaviour.silentAfterBatches = 2;
    const bridge = await s.open();
    for (let i = 0; i < 100; i++) bridge.push(makeTransition(1, i));
    await waitFor(() => s.stub.batches === 2 && !bridge.stats().linkUp, "the link to go down after 2 batches");
    assert.ok(bridge.stats().spooled <= 100);
    s.stub.behaviour = {};
    assert.equal(await bridge.flush({ timeoutMs: 15_000 }), true);
    assertStoredExactly(s.stub, 100);
    assert.ok(bridge.stats().reconnects >= 1);
    assert.ok(s.stub.hellos >= 2);
    await bridge.close();
  } finally {
    await s.cleanup();
  }
});

test("idle heartbeats; three unanswered mark the link down; it comes back with hello", async () => {
  const s = await setup({ heartbeatSec: 0.05 });
  try {
    const bridge = await s.open();
    await waitFor(() => s.stub.heartbeats >= 3, "three heartbeats");
    assert.equal(bridge.stats().linkUp, true);
    s.stub.behaviour.silent = true;
    await waitFor(() => !bridge.stats().linkUp, "link down");
    assert.match(bridge.stats().lastError ?? "", /3 heartbeats/);
    s.stub.behaviour.silent = false;
    await waitFor(() => bridge.stats().linkUp, "link up again");
    assert.equal(bridge.stats().reconnects, 1);
    await bridge.close();
  } finally {
    await s.cleanup();
  }
});

test("malformed and stray replies are counted and ignored", async () => {
  const s = await setup();
  try {
    const bridge = await s.open();
    s.stub.behaviour.malformedReplies = 3;
    for (let i = 0; i < 40; i++) bridge.push(makeTransition(1, i));
    assert.equal(await bridge.flush(), true);
    assertStoredExactly(s.stub, 40);
    assert.equal(bridge.stats().droppedReplies, 6);
    assert.ok(s.logger.warnings.some((w) => /malformed reply/.test(w)));
    await bridge.close();
  } finally {
    await s.cleanup();
  }
});

test("a learner that lost its store gets the unacked batches renumbered after its acked_seq", async () => {
  const s = await setup();
  try {
    let bridge = await s.open();
    for (let i = 0; i < 32; i++) bridge.push(makeTransition(1, i));
    assert.equal(await bridge.flush(), true);
    await bridge.close();
    // Learner restarts empty; robot restarts and records episode 2 while the learner is away.
    s.stub.behaviour.silent = true;
    await s.stub.restart({ wipe: true });
    bridge = await s.open();
    for (let i = 0; i < 20; i++) bridge.push(makeTransition(2, i));
    await waitFor(() => bridge.stats().spooled === 20, "spooled");
    assert.equal(bridge.stats().lastSeq, 51, "seqs continue across robot restarts");
    s.stub.behaviour = {};
    assert.equal(await bridge.flush({ timeoutMs: 15_000 }), true);
    assertStoredExactly(s.stub, 20, 2);
    assert.ok(s.logger.warnings.some((w) => /renumbering/.test(w)));
    await bridge.close();
  } finally {
    await s.cleanup();
  }
});

test("a learner killed hard resumes from its checkpoint: the robot rewinds to its acked_seq and resends, nothing renumbered", async () => {
  const s = await setup({ reportDurable: true });
  try {
    const bridge = await s.open();
    for (let i = 0; i < 40; i++) bridge.push(makeTransition(1, i));
    assert.equal(await bridge.flush(), true);
    s.stub.checkpoint(); // seq ≤ 39 durable
    for (let i = 40; i < 80; i++) bridge.push(makeTransition(1, i));
    assert.equal(await bridge.flush(), true);
    assert.equal(bridge.stats().ackedSeq, 79);
    assert.equal(bridge.stats().durableSeq, 39, "the acks after the checkpoint report it");
    assert.ok((await readdir(join(s.spoolDir, ROBOT))).some((n) => n.startsWith("seg-")), "acked but not durable: kept on disk");
    await s.stub.restart({ fromCheckpoint: true }); // the learner lost seq 40..79
    assert.equal(s.stub.ackedSeq(ROBOT), 39);
    for (let i = 80; i < 100; i++) bridge.push(makeTransition(1, i));
    assert.equal(await bridge.flush({ timeoutMs: 15_000 }), true);
    assertStoredExactly(s.stub, 100);
    const st = bridge.stats();
    assert.deepEqual([st.rewound, st.lost, st.ackedSeq, st.lastSeq], [40, 0, 99, 99]);
    assert.equal(s.logger.warnings.some((w) => /renumbering/.test(w)), false);
    assert.ok(s.logger.warnings.some((w) => /resending those 40 transitions/.test(w)));
    s.stub.checkpoint();
    assert.equal(await bridge.flush({ durable: true, timeoutMs: 15_000 }), true, "a heartbeat reports the new checkpoint");
    assert.equal(bridge.stats().durableSeq, 99);
    assert.deepEqual((await readdir(join(s.spoolDir, ROBOT))).filter((n) => n.startsWith("seg-")), [], "durable: deleted");
    await bridge.close();
  } finally {
    await s.cleanup();
  }
});

test("a learner that lost a checkpointed store: renumbered, and the transitions it cannot get back are counted", async () => {
  const s = await setup({ reportDurable: true });
  try {
    const bridge = await s.open();
    for (let i = 0; i < 30; i++) bridge.push(makeTransition(1, i));
    assert.equal(await bridge.flush(), true);
    s.stub.checkpoint();
    for (let i = 30; i < 50; i++) bridge.push(makeTransition(1, i));
    assert.equal(await bridge.flush(), true);
    assert.equal(bridge.stats().durableSeq, 29);
    await s.stub.restart({ wipe: true });
    await waitFor(() => bridge.stats().lost > 0, "a heartbeat to tell the robot"); // nothing new to send until then
    assert.equal(await bridge.flush({ timeoutMs: 15_000 }), true);
    const st = bridge.stats();
    assert.deepEqual([st.lost, st.ackedSeq, st.lastSeq], [30, 19, 19], "seq 0..29 were deleted once durable; 30..49 renumbered to 0..19");
    assert.equal(s.stub.stored.get(ROBOT)!.size, 20);
    assert.deepEqual([...s.stub.stored.get(ROBOT)!.values()].map((t) => t.step), Array.from({ length: 20 }, (_, i) => 30 + i));
    assert.ok(s.logger.warnings.some((w) => /30 transitions .* cannot be re-sent/.test(w)));
    await bridge.close();
  } finally {
    await s.cleanup();
  }
});

test("a refused hello keeps spooling and says why", async () => {
  const s = await setup();
  try {
    s.stub.behaviour.refuseHello = "config_hash mismatch: learner abc, robot cfg";
    const bridge = await s.open();
    bridge.push(makeTransition(1, 0));
    await waitFor(() => /config_hash mismatch/.test(bridge.stats().lastError ?? ""), "the refusal");
    await waitFor(() => bridge.stats().spooled === 1, "spooled");
    assert.equal(bridge.stats().linkUp, false);
    s.stub.behaviour = {};
    assert.equal(await bridge.flush({ timeoutMs: 15_000 }), true);
    assertStoredExactly(s.stub, 1);
    await bridge.close();
  } finally {
    await s.cleanup();
  }
});

test("a robot killed mid-episode (SIGKILL) sends its spool after restart; seqs continue", async () => {
  const s = await setup();
  try {
    s.stub.behaviour.silent = true; // learner unreachable while the first run records
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "testing", "crashingRobot.ts"), s.spoolDir, s.stub.endpoint, "37"], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    await waitFor(() => /spooled 36/.test(out), "the child to spool 37 transitions", 30_000);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    s.stub.behaviour = {};
    const bridge = await s.open({ robotId: "crashy" });
    assert.equal(bridge.stats().lastSeq, 36);
    for (let i = 37; i < 50; i++) bridge.push(makeTransition(1, i));
    assert.equal(await bridge.flush({ timeoutMs: 15_000 }), true);
    assertStoredExactly(s.stub, 50, 1, "crashy");
    assert.equal(bridge.stats().ackedSeq, 49);
    await bridge.close();
  } finally {
    await s.cleanup();
  }
});

/** Transition `step` of episode 1 with a 6x4 front camera: its frame and the next step's (the same bytes object). */
function withCamera(step: number, frames: TransitionFrame[]): Transition {
  return { ...makeTransition(1, step), images: { front: frames[step] }, nextImages: { front: frames[step + 1] } };
}

const cameraFrames = (n: number): TransitionFrame[] =>
  Array.from({ length: n }, (_, k) => ({ width: 6, height: 4, rgb: Uint8Array.from({ length: 72 }, (_, i) => (k * 31 + (i >> 3)) & 0xff) }));

test("zlib frames (the default) are compressed on the robot and stored by the learner byte-exact", async () => {
  const s = await setup({ cameras: ["front"] });
  try {
    const bridge = await s.open();
    const frames = cameraFrames(41);
    for (let i = 0; i < 40; i++) assert.equal(bridge.push(withCamera(i, frames)), true);
    assert.equal(await bridge.flush(), true);
    const store = s.stub.stored.get(ROBOT)!;
    assert.equal(store.size, 40);
    for (const [seq, t] of store) {
      assert.deepEqual(t.images!.front.rgb, frames[seq].rgb);
      assert.deepEqual(t.nextImages!.front.rgb, frames[seq + 1].rgb);
    }
    await bridge.close();
  } finally {
    await s.cleanup();
  }
});

test("a learner that does not list zlib frames in its welcome keeps the link down, naming learner.frame_encoding; raw frames go", async () => {
  const s = await setup({ cameras: ["front"] });
  s.stub.frameEncodings = undefined; // a learner from before zlib frames
  try {
    const zipped = await s.open();
    const frames = cameraFrames(5);
    for (let i = 0; i < 4; i++) zipped.push(withCamera(i, frames));
    await waitFor(() => s.stub.hellos >= 2, "two hellos");
    assert.equal(zipped.stats().linkUp, false);
    assert.match(zipped.stats().lastError ?? "", /does not take zlib camera frames .* set learner.frame_encoding: raw/);
    assert.equal(s.stub.stored.get(ROBOT)?.size ?? 0, 0);
    await zipped.close();
    await rm(s.spoolDir, { recursive: true, force: true });
    const raw = await s.open({ frameEncoding: "raw" });
    for (let i = 0; i < 4; i++) raw.push(withCamera(i, frames));
    assert.equal(await raw.flush(), true);
    assert.equal(s.stub.stored.get(ROBOT)!.size, 4);
    await raw.close();
  } finally {
    await s.cleanup();
  }
});
