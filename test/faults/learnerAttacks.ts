/**
 * Fault-table rows for the attacks on the learner's door found in issue 24, each run against the real learner process
 * (`python3 -m rlft_learner serve`, or the command under attack) over loopback; the impostor row also runs the real sim
 * robot. The attacker is a raw zeromq.js DEALER that builds its own frames: nothing here goes through the robot-side
 * checks an rlft robot applies before sending. Each row says what was sent, what the learner did, and whether it held.
 */
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { encode as msgpackEncode, decode as msgpackDecode } from "@msgpack/msgpack";
import { Dealer } from "zeromq";
import { encodeHello, encodeTransitions } from "../../bridge/messages.ts";
import { decodeMessage, type Header } from "../../bridge/wire.ts";
import { makeTransitionOf } from "../../bridge/testing/helpers.ts";
import { findPython } from "../../app/python.ts";
import { LEARNER_DIR } from "../../policies/testing/learnerFixture.ts";
import { runSession } from "../../app/session.ts";
import { createRng, type Rng } from "../../sim/rng.ts";
import { freePort } from "../servers.ts";
import { auditDriver, drainSpool, launchConfig, LearnerRig } from "./rig.ts";
import type { FaultContext, FaultRow, FaultScenario } from "./FaultScenario.ts";

interface Base {
  version: string;
  task: string;
  obsNames: string[];
  actionNames: string[];
}

async function baseOf(dir: string): Promise<Base> {
  const pj = JSON.parse(await readFile(join(dir, "policy.json"), "utf8"));
  return { version: pj.version, task: pj.provenance?.task ?? "task", obsNames: pj.observation.names, actionNames: pj.action.names };
}

/** A raw DEALER, as an attacker holds one: one reply per request (null when none comes within the timeout). */
class RawPeer {
  readonly sock: Dealer;

  constructor(endpoint: string, timeoutMs = 10_000) {
    this.sock = new Dealer({ linger: 0, receiveTimeout: timeoutMs });
    this.sock.connect(endpoint);
  }

  async ask(frames: Buffer[]): Promise<Header | null> {
    await this.sock.send(frames);
    try {
      const reply = await this.sock.receive();
      // A message whose first frame is empty reads as a REQ envelope: the learner echoes the delimiter.
      return decodeMessage(reply.length > 1 && reply[0].byteLength === 0 ? reply.slice(1) : reply).header;
    } catch (e) {
      if ((e as { code?: string }).code === "EAGAIN") return null;
      throw e;
    }
  }

  close(): void {
    this.sock.close();
  }
}

const hello = (seq: number, b: Base, robotId: string) => encodeHello(seq, { robotId, configHash: "attacker", obsNames: b.obsNames, actionNames: b.actionNames, task: b.task, basePolicyVersion: b.version });
const batch = (seq: number, b: Base, robotId: string, first: number, n: number) =>
  encodeTransitions(seq, robotId, first, Array.from({ length: n }, (_, i) => makeTransitionOf(1, first + i, b.obsNames.length, b.actionNames.length)));

/** `frames` (a transitions message) with obs, next_obs and reward (frames 1, 2, 7) set to `value`, as an attacker would. */
function poisoned(frames: Buffer[], value: number): Buffer[] {
  const out = [...frames];
  for (const i of [1, 2, 7]) out[i] = Buffer.from(new Float32Array(frames[i].byteLength / 4).fill(value).buffer);
  return out;
}

/** `python3 -m rlft_learner <args>` to completion: exit code and stderr. */
function learnerCommand(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(findPython(), ["-m", "rlft_learner", ...args], { cwd: LEARNER_DIR, env: { ...process.env, OPENBLAS_NUM_THREADS: "1" }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    c.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    c.on("exit", (code) => resolve({ code, stderr }));
  });
}

const lastLine = (s: string) => s.trim().split("\n").at(-1) ?? "";

/** A learner on free ports with a raw peer connected to it, for one scenario: `attack` gets them once it trains. */
async function againstLearner(ctx: FaultContext, attack: (rig: LearnerRig, peer: RawPeer, b: Base) => Promise<FaultRow>): Promise<FaultRow> {
  const b = await baseOf(ctx.baseDir);
  const rig = await LearnerRig.create(ctx.root, ctx.baseDir);
  const peer = new RawPeer(rig.experience);
  try {
    await rig.current.event("progress");
    return await attack(rig, peer, b);
  } finally {
    peer.close();
    await rig.cleanup();
  }
}
const held = (scenario: string, injected: string, survived: boolean, detail: string): FaultRow => ({ scenario, injected, survived, transitionsLost: 0, unsafeCommands: 0, detail });

const poisonedTransitions: FaultScenario = {
  name: "learner: poisoned transitions (3e38)",
  run: (ctx) =>
    againstLearner(ctx, async (rig, peer, b) => {
      await peer.ask(hello(0, b, "lab-pc"));
      // The attack: ten finite float32 transitions of 3e38 (observations and rewards).
      const refused = await peer.ask(poisoned(batch(1, b, "lab-pc", 0, 10), 3e38));
      // Then clean data from the same peer until a package is published: seq 0.. were never taken by the poison.
      const n = 320;
      for (let first = 0, seq = 2; first < n; first += 32) await peer.ask(batch(seq++, b, "lab-pc", first, 32));
      const policy = await rig.current.event("policy", 120_000);
      const vectors = JSON.parse(await readFile(join(rig.runDir, "packages", String(policy.version), "test_vectors.json"), "utf8"));
      const values = [...(vectors.residual as number[][]).flat(), ...((vectors.critic?.q ?? []) as number[][]).flat()];
      const finite = values.length > 0 && values.every(Number.isFinite);
      const done = await rig.current.stop();
      const guards = done.guards as { rejected_values: number; refused_exports: { publish: number; checkpoint: number } };
      const stored = (done.robots as Record<string, { distinct_seqs: number }>)["lab-pc"]?.distinct_seqs ?? -1;
      const ok = refused?.type === "error" && /beyond ±1e\+06/.test(String(refused.reason)) && guards.rejected_values === 1 && finite && stored === n && guards.refused_exports.publish === 0;
      return held("learner: poisoned transitions (3e38)", "10 transitions with obs/reward 3e38 (finite float32), then 320 clean ones", ok,
        `refused with "${String(refused?.reason).slice(0, 70)}…", counted (rejected_values ${guards.rejected_values}), nothing stored; the ${stored} clean transitions after it stored; package ${String(policy.version).slice(0, 24)}… published with ${values.length} finite test-vector outputs; exports refused ${guards.refused_exports.publish}`);
    }),
};

const impostor: FaultScenario = {
  name: "learner: a second peer claims a live robot's id",
  run: (ctx) =>
    againstLearner(ctx, async (rig, peer, b) => {
      const out = join(ctx.root, "robot");
      const cfg = launchConfig({ baseDir: ctx.baseDir, out });
      const rid = cfg.learner.robot_id;
      const replies: (Header | null)[] = [];
      let audit: ReturnType<typeof auditDriver> | undefined;
      const res = await runSession({
        config: cfg, learner: rig.experience, policyEndpoint: rig.policy, episodes: 3, seed: 11, out, pausePollMs: 100,
        onStack: (s) => (audit = auditDriver(s)),
        afterEpisode: async (i) => {
          if (i !== 0) return;
          // While the real robot is connected: hello as it, then its seq 0.. (which would make the robot's own duplicates).
          replies.push(await peer.ask(hello(0, b, rid)), await peer.ask(batch(1, b, rid, 0, 32)), await peer.ask(batch(2, b, rid, 1000, 32)));
        },
      });
      const lastSeq = await drainSpool(cfg, out, rig.experience);
      const done = await rig.current.stop();
      const mine = (done.robots as Record<string, { distinct_seqs: number }>)[rid];
      const lost = lastSeq + 1 - (mine?.distinct_seqs ?? 0);
      const refused = replies.filter((r) => r?.type === "error").length;
      const ok = refused === 3 && /in use by another connection/.test(String(replies[0]?.reason)) && lost === 0 && res.episodes.length === 3 && audit!.unsafe === 0;
      return { scenario: "learner: a second peer claims a live robot's id", injected: `hello as ${rid} + 2 batches as ${rid}, while ${rid} runs`, survived: ok, transitionsLost: lost, unsafeCommands: audit!.unsafe,
        detail: `hello refused ("${String(replies[0]?.reason).slice(0, 60)}…"), both batches refused (${refused}/3 errors); the real ${rid}: ${mine?.distinct_seqs}/${lastSeq + 1} transitions stored once each, none dropped as duplicates` };
    }),
};

const publicBinds: FaultScenario = {
  name: "learner: public binds without CURVE",
  async run(ctx) {
    const port = await freePort();
    const runs = await Promise.all([
      learnerCommand(["train-bc", "--bind", `tcp://0.0.0.0:${port}`, "--timeout", "1"]),
      learnerCommand(["recap", "--bind", `tcp://*:${port}`, "--pretrained", ctx.baseDir, "--timeout", "1"]),
      learnerCommand(["serve", "--experience-bind", `tcp://0.0.0.0:${port}`, "--base-package", ctx.baseDir, "--run-dir", join(ctx.root, "run")]),
    ]);
    const ok = runs.every((r) => r.code === 1 && /listens beyond this machine without CURVE/.test(lastLine(r.stderr)));
    return held("learner: public binds without CURVE", "train-bc, recap and serve on 0.0.0.0 / * without curve_secret",
      ok, `each exited ${runs.map((r) => r.code).join("/")} before binding: "${lastLine(runs[0].stderr).slice(0, 90)}…"`);
  },
};

/** Seeded mutations of the golden frames (test/golden/rlft-exp-1), built with an msgpack implementation of its own. */
async function fuzzFrames(rng: Rng, n: number): Promise<Buffer[][]> {
  const dir = join(import.meta.dirname, "..", "golden", "rlft-exp-1");
  const seeds: Buffer[][] = [];
  for (const name of ["hello-online", "transitions", "heartbeat-request", "episode", "end"]) {
    seeds.push((JSON.parse(await readFile(join(dir, `${name}.json`), "utf8")).frames_b64 as string[]).map((f) => Buffer.from(f, "base64")));
  }
  const hostile: unknown[] = [2n ** 64n - 1n, -(2n ** 63n), 2 ** 53, -1, 1e308, NaN, Infinity, 3e38, "", "x".repeat(3000), [], {}, null, true, [[[[]]]], Array(2000).fill(7)];
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng.next() * xs.length)];
  return Array.from({ length: n }, () => {
    const frames = pick(seeds).map((f) => Buffer.from(f));
    const op = Math.floor(rng.next() * 4);
    if (op === 0) {
      const h = msgpackDecode(frames[0]) as Record<string, unknown>;
      h[pick([...Object.keys(h), "step", "first_seq", "count", "seq"])] = pick(hostile);
      frames[0] = Buffer.from(msgpackEncode(h, { useBigInt64: true }));
    } else if (op === 1) {
      const f = pick(frames);
      for (let k = 0; k < 1 + rng.next() * 8; k++) f[Math.floor(rng.next() * f.length)] ^= 1 << Math.floor(rng.next() * 8);
    } else if (op === 2 && frames.length > 1) {
      const i = 1 + Math.floor(rng.next() * (frames.length - 1));
      frames[i] = Buffer.from(new Float32Array(frames[i].byteLength / 4).fill(pick([3e38, -3e38, NaN, Infinity, 1.5e6])).buffer);
    } else {
      frames.splice(Math.floor(rng.next() * frames.length), 1, Buffer.from(Array.from({ length: Math.floor(rng.next() * 48) }, () => Math.floor(rng.next() * 256))));
    }
    return frames;
  });
}

const hostileFrames: FaultScenario = {
  name: "learner: extreme integers, oversize and fuzzed frames",
  run: (ctx) =>
    againstLearner(ctx, async (rig, peer, b) => {
      const rss0 = rig.current.rss();
      await peer.ask(hello(0, b, "lab-pc"));
      const t = batch(1, b, "lab-pc", 0, 2);
      const h = msgpackDecode(t[0]) as Record<string, unknown>;
      const extreme = [
        await peer.ask([Buffer.from(msgpackEncode({ ...h, step: [0n, 2n ** 64n - 1n] }, { useBigInt64: true })), ...t.slice(1)]),
        await peer.ask([Buffer.from(msgpackEncode({ ...h, seq: 2n ** 64n - 1n }, { useBigInt64: true })), ...t.slice(1)]),
        await peer.ask([Buffer.from(msgpackEncode({ ...h, first_seq: -(2n ** 63n) }, { useBigInt64: true })), ...t.slice(1)]),
      ];
      const big = new RawPeer(rig.experience, 3000);
      const oversize = await big.ask([Buffer.alloc(65 * 2 ** 20, 0x41)]).finally(() => big.close()); // over the 64 MiB cap: the connection is closed
      const frames = await fuzzFrames(createRng(24), ctx.full ? 3000 : 300);
      let answered = 0;
      for (const f of frames) if ((await peer.ask(f)) !== null) answered++;
      const after = await peer.ask(hello(1000, b, "lab-pc"));
      const rss1 = rig.current.rss();
      const done = await rig.current.stop();
      const g = done.guards as { internal_errors: number; malformed: number; rejected_values: number };
      const grownMb = (rss1 - rss0) / 2 ** 20;
      const ok = extreme.every((r) => r?.type === "error") && oversize === null && answered === frames.length && after?.type === "welcome" && g.internal_errors === 0 && grownMb < 150;
      return held("learner: extreme integers, oversize and fuzzed frames", `step/seq 2^64-1, first_seq -2^63, one 65 MiB message, ${frames.length} seeded mutations of the golden frames`, ok,
        `integers refused ("${String(extreme[0]?.reason).slice(0, 60)}…"); 65 MiB message dropped by ZeroMQ (no reply, connection closed); ${answered}/${frames.length} fuzzed messages answered, ${g.malformed} malformed (${g.rejected_values} for values), internal errors ${g.internal_errors}; learner RSS ${grownMb >= 0 ? "+" : ""}${grownMb.toFixed(1)} MiB; a clean hello still welcomed`);
    }),
};

const inventedIds: FaultScenario = {
  name: "learner: invented robot ids",
  run: (ctx) =>
    againstLearner(ctx, async (rig, peer, b) => {
      await peer.ask(hello(0, b, "lab-pc"));
      await peer.ask(batch(1, b, "lab-pc", 0, 8)); // one real robot holds transitions
      const ghost = new RawPeer(rig.experience);
      let welcomed = 0;
      for (let i = 0; i < 200; i++) if ((await ghost.ask(hello(i, b, `ghost-${i}`)))?.type === "welcome") welcomed++;
      ghost.close();
      const done = await rig.current.stop();
      const ckpt = JSON.parse(await readFile(join(rig.runDir, "checkpoint.json"), "utf8")).dir as string;
      const kept = Object.keys(JSON.parse(await readFile(join(rig.runDir, ckpt, "meta.json"), "utf8")).robots as Record<string, unknown>);
      const inMemory = Object.keys(done.robots as Record<string, unknown>).length;
      const ok = kept.length === 1 && kept[0] === "lab-pc" && inMemory <= 64;
      return held("learner: invented robot ids", `200 hellos with invented robot ids (${welcomed} welcomed), no transitions`, ok,
        `checkpoint keeps ${JSON.stringify(kept)} only; ${inMemory} ids in memory (max_robots 64; ids that never sent a transition are forgotten first)`);
    }),
};

const badConfig: FaultScenario = {
  name: "learner: out-of-range config and YAML syntax errors",
  async run(ctx) {
    const yaml = join(ctx.root, "learner.yaml");
    await writeFile(yaml, `base_package: ${JSON.stringify(ctx.baseDir)}\ngamma: 0.99\n  tau: 0.005\n`);
    const runs = await Promise.all([
      learnerCommand(["serve", "--base-package", ctx.baseDir, "--gamma", "7", "--run-dir", join(ctx.root, "run")]),
      learnerCommand(["serve", "--config", yaml]),
    ]);
    const expect = [/gamma = 7\.0 is out of range; allowed: \(0, 1\]/, /learner\.yaml:3:6: YAML syntax error: mapping values are not allowed here/];
    const ok = runs.every((r, i) => r.code === 1 && expect[i].test(lastLine(r.stderr)) && !r.stderr.includes("Traceback"));
    return held("learner: out-of-range config and YAML syntax errors", "serve with gamma 7, and a YAML file with a syntax error (tau: -3 and the rest: learner/tests/test_config.py)", ok,
      runs.map((r) => `exit ${r.code}: "${lastLine(r.stderr).replace(/^serve: /, "").slice(0, 60)}"`).join("; ") + "; no traceback");
  },
};

/** The learner-door rows, in table order (registered in scenarios.ts; `npm run test:faults -- --only learner:` runs them alone). */
export const LEARNER_ATTACK_SCENARIOS: FaultScenario[] = [poisonedTransitions, impostor, publicBinds, hostileFrames, inventedIds, badConfig];
