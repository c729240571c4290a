/**
 * The fault scenarios (docs/faults.md). Each one runs the sim stack (real MuJoCo, real ONNX policy, real learner
 * process over ZeroMQ where the fault involves it), injects its fault and measures what survived.
 * To add one, append it to FAULT_SCENARIOS.
 */
import { spawn } from "node:child_process";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { Dealer, Publisher } from "zeromq";
import { runSession } from "../../app/session.ts";
import { Stack } from "../../launch/Stack.ts";
import { EpisodeReader } from "../../recording/EpisodeReader.ts";
import { PolicySync } from "../../bridge/PolicySync.ts";
import { decodeMessage } from "../../bridge/wire.ts";
import { rssOf } from "../support/LearnerProc.ts";
import { freePort } from "../servers.ts";
import { auditDriver, drainSpool, launchConfig, LearnerRig } from "./rig.ts";
import type { FaultContext, FaultScenario } from "./FaultScenario.ts";
import { policyPackageFaults } from "./packageFaults.ts";
import { OPERATOR_FAULT_SCENARIOS } from "./operatorFaults.ts";
import { LEARNER_ATTACK_SCENARIOS } from "./learnerAttacks.ts";
import { ATTACK_SCENARIOS } from "./attackScenarios.ts";

const quiet = { warn: () => undefined, info: () => undefined };

/** Session against `rig` with an audit on the driver; returns the result and the audit. */
async function auditedSession(ctx: FaultContext, rig: LearnerRig, o: { episodes: number; extra?: string; recorder?: string; stop?: Promise<void>; afterEpisode?: Parameters<typeof runSession>[0]["afterEpisode"]; onPause?: (why: string | null, stack: Stack) => void }) {
  const out = join(ctx.root, "robot");
  const cfg = launchConfig({ baseDir: ctx.baseDir, out, extra: o.extra, recorder: o.recorder });
  let audit: ReturnType<typeof auditDriver> | undefined;
  let stack: Stack | undefined;
  const res = await runSession({
    config: cfg, learner: rig.experience, policyEndpoint: rig.policy, episodes: o.episodes, seed: 100, out, pausePollMs: 100,
    onStack: (s) => {
      stack = s;
      audit = auditDriver(s);
    },
    afterEpisode: o.afterEpisode,
    stop: o.stop,
    onPause: (why) => o.onPause?.(why, stack!),
  });
  return { res, audit: audit!, cfg, out };
}

/** Lost = what the robot produced minus what the learner stores (distinct seqs), after the spool is drained. */
async function settle(rig: LearnerRig, cfg: ReturnType<typeof launchConfig>, out: string): Promise<{ produced: number; stored: number; lost: number }> {
  const lastSeq = await drainSpool(cfg, out, rig.experience);
  const c = await rig.finish(cfg.learner.robot_id);
  return { produced: lastSeq + 1, stored: c.distinct_seqs, lost: lastSeq + 1 - c.distinct_seqs };
}

const learnerKills: FaultScenario = {
  name: "learner killed and restarted",
  async run(ctx) {
    const kills = ctx.full ? 5 : 2;
    const rig = await LearnerRig.create(ctx.root, ctx.baseDir);
    try {
      await rig.current.event("progress");
      const versions: string[] = [];
      const { res, audit, cfg, out } = await auditedSession(ctx, rig, {
        episodes: kills + 2,
        afterEpisode: async (i, { stack }) => {
          versions.push((stack.actor.actor as unknown as { version: string }).version);
          if (i >= kills) return;
          await rig.current.kill(); // SIGKILL: no checkpoint, no goodbye; the next episode runs with the learner down
          rig.start();
        },
      });
      const s = await settle(rig, cfg, out);
      const kept = versions.every((v, i) => i === 0 || v === versions[i - 1] || !v.startsWith("bc-") || !versions[i - 1].startsWith("res-"));
      return {
        scenario: "learner killed and restarted", injected: `${kills} × SIGKILL + restart`, survived: s.lost === 0 && kept && audit.unsafe === 0 && res.episodes.length === kills + 2,
        transitionsLost: s.lost, unsafeCommands: audit.unsafe,
        detail: `${s.produced} transitions produced, ${s.stored} stored once each; policy kept across kills (${[...new Set(versions)].length} version(s) live); ${res.bridge?.rewound ?? 0} resent after checkpoint resumes`,
      };
    } finally {
      await rig.cleanup();
    }
  },
};

const robotCrash: FaultScenario = {
  name: "robot process killed mid-episode",
  async run(ctx) {
    const rig = await LearnerRig.create(ctx.root, ctx.baseDir);
    try {
      await rig.current.event("progress");
      const out = join(ctx.root, "robot");
      const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "robotChild.ts"), JSON.stringify({ baseDir: ctx.baseDir, out, experience: rig.experience, policy: rig.policy })], { stdio: ["ignore", "pipe", "inherit"] });
      let episodesDone = 0;
      child.stdout.on("data", (d: Buffer) => (episodesDone += (d.toString().match(/episode done/g) ?? []).length));
      const until = Date.now() + 120_000;
      while (episodesDone < 2 && Date.now() < until && child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
      // Kill inside the next (200-step) episode once its file holds a complete chunk, whatever the machine's speed:
      // a fixed sleep raced the recorder's first flush on a loaded CI machine.
      const dir = join(out, "episodes");
      while (Date.now() < until && child.exitCode === null && (await openEpisodeMessages(dir, episodesDone)) === 0) await new Promise((r) => setTimeout(r, 50));
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
      // Every MCAP file opens; the one being written when the process died reads up to its last complete chunk.
      const files = (await readdir(dir)).filter((f) => f.endsWith(".mcap")).sort();
      const counts: number[] = [];
      for (const f of files) {
        const r = await EpisodeReader.open(join(dir, f));
        let n = 0;
        for await (const _ of r.messages()) n++;
        await r.close();
        counts.push(n);
      }
      const cfg = launchConfig({ baseDir: ctx.baseDir, out });
      const s = await settle(rig, cfg, out); // the restarted robot replays its spool
      const open = counts.at(-1) ?? 0;
      return {
        scenario: "robot process killed mid-episode", injected: `SIGKILL after ${episodesDone} episodes`, survived: s.lost === 0 && files.length >= episodesDone && open > 0,
        transitionsLost: s.lost, unsafeCommands: 0,
        detail: `${files.length} MCAP files all readable (open episode: ${open} messages up to its last chunk); spool replayed on restart: ${s.stored}/${s.produced} transitions stored`,
      };
    } finally {
      await rig.cleanup();
    }
  },
};

/** Messages readable so far in the episode file after the first `done` ones (0 while it has no complete chunk). */
async function openEpisodeMessages(dir: string, done: number): Promise<number> {
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith(".mcap")).sort();
  if (files.length <= done) return 0;
  try {
    const r = await EpisodeReader.open(join(dir, files[files.length - 1]));
    let n = 0;
    try {
      for await (const _ of r.messages()) n++;
    } finally {
      await r.close();
    }
    return n;
  } catch {
    return 0; // not even a header yet
  }
}

/** Heap in use after a full collection (what the process really holds). */
function heapAfterGc(): number {
  v8.setFlagsFromString("--expose-gc");
  (vm.runInNewContext("gc") as () => void)();
  return process.memoryUsage().heapUsed;
}

const linkDrop: FaultScenario = {
  name: "link to the learner dropped",
  async run(ctx) {
    const rig = await LearnerRig.create(ctx.root, ctx.baseDir);
    const wallMs = ctx.full ? 60_000 : 6_000;
    try {
      await rig.current.event("progress");
      let droppedAt = 0;
      let simAtDrop = 0;
      let heapAtDrop = 0;
      let heapMax = 0;
      let simDuring = 0;
      let done = false;
      let stop = () => undefined as void;
      const stopped = new Promise<void>((r) => (stop = r));
      // Drop after episode 1; keep the robot running until the drop lasted 60 s of robot (sim) time and `wallMs` of wall
      // time (so the robot's deadlines expire and it reconnects), then restore it and run two more episodes.
      let after = 0;
      const { audit, cfg, out } = await auditedSession(ctx, rig, {
        episodes: 100_000,
        stop: stopped,
        afterEpisode: (i, { stack }) => {
          const sim = stack.runtime.clock.now();
          if (i === 0) {
            rig.current.pause();
            droppedAt = Date.now();
            simAtDrop = sim;
            heapAtDrop = heapAfterGc();
          } else if (!done && sim - simAtDrop >= 60 && Date.now() - droppedAt >= wallMs) {
            heapMax = heapAfterGc(); // live memory at the end of the drop: garbage would make this a measure of GC timing
            rig.current.resume();
            simDuring = sim - simAtDrop;
            done = true;
          } else if (done && ++after >= 2) stop();
        },
      });
      const dropSec = simDuring;
      const s = await settle(rig, cfg, out);
      const heapGrowthMb = (heapMax - heapAtDrop) / 1e6;
      return {
        scenario: "link dropped (learner SIGSTOP)", injected: `SIGSTOP ≥ ${wallMs / 1000} s wall / ${dropSec.toFixed(0)} s robot time`, survived: s.lost === 0 && audit.unsafe === 0 && heapGrowthMb < 50,
        transitionsLost: s.lost, unsafeCommands: audit.unsafe,
        detail: `robot kept running and spooling; reconnected; ${s.stored}/${s.produced} stored; live heap (after GC) ${heapGrowthMb >= 0 ? "+" : ""}${heapGrowthMb.toFixed(1)} MB over the drop (bridge holds one batch in memory, the rest on disk)`,
      };
    } finally {
      await rig.cleanup();
    }
  },
};

const backpressure: FaultScenario = {
  name: "slow learner (backpressure)",
  async run(ctx) {
    const rig = await LearnerRig.create(ctx.root, ctx.baseDir);
    const capMb = 0.15;
    try {
      await rig.current.event("progress");
      let maxSpool = 0;
      let pauseMsg = "";
      let resumed = false;
      // The learner stops consuming after episode 1 (frozen: nothing is acked or checkpointed, the spool only grows).
      const { res, audit, cfg, out } = await auditedSession(ctx, rig, {
        episodes: ctx.full ? 40 : 24,
        extra: `learner: {spool_cap_mb: ${capMb}}\n`,
        afterEpisode: (i, { bridge }) => {
          maxSpool = Math.max(maxSpool, bridge.stats().spoolBytes);
          if (i === 0) rig.current.pause();
        },
        onPause: (why) => {
          if (why !== null && !pauseMsg) {
            pauseMsg = why;
            rig.current.resume(); // the learner catches up; episodes resume by themselves
          } else if (why === null) resumed = true;
        },
      });
      const s = await settle(rig, cfg, out);
      const missRate = res.loop.deadlineMisses / Math.max(1, res.loop.ticks);
      return {
        scenario: "slow learner (backpressure)", injected: `learner frozen; spool cap ${capMb} MB`,
        survived: s.lost === 0 && (res.bridge?.overflowed ?? 0) === 0 && maxSpool <= capMb * 1e6 && /paused until it catches up/.test(pauseMsg) && resumed && missRate <= 0.001 && audit.unsafe === 0,
        transitionsLost: s.lost, unsafeCommands: audit.unsafe,
        detail: `spool peaked at ${(maxSpool / 1e6).toFixed(3)} MB ≤ cap; episodes paused ("${pauseMsg.split(";")[0]}") and resumed; missed ticks ${res.loop.deadlineMisses}/${res.loop.ticks} (${(100 * missRate).toFixed(2)}%, sim clock); ${s.stored}/${s.produced} stored`,
      };
    } finally {
      await rig.cleanup();
    }
  },
};

const diskFull: FaultScenario = {
  name: "disk full while recording",
  async run(ctx) {
    const rig = await LearnerRig.create(ctx.root, ctx.baseDir);
    try {
      await rig.current.event("progress");
      let pauseMsg = "";
      let before: { files: string[]; readable: number } = { files: [], readable: 0 };
      let ticksWhilePaused = -1;
      const dir = join(ctx.root, "robot", "episodes");
      const { res, audit, cfg, out } = await auditedSession(ctx, rig, {
        episodes: 8,
        recorder: "max_mb: 0.15",
        onPause: (why, stack) => {
          if (why === null || pauseMsg) return;
          pauseMsg = why;
          const t0 = stack.runtime.clock.now();
          void (async () => {
            // While paused: every file already written opens and reads; then the operator frees space.
            const files = (await readdir(dir)).filter((f) => f.endsWith(".mcap")).sort();
            let readable = 0;
            for (const f of files) {
              try {
                const r = await EpisodeReader.open(join(dir, f));
                for await (const _ of r.messages()) break;
                await r.close();
                readable++;
              } catch {
                // counted as unreadable
              }
            }
            before = { files, readable };
            await new Promise((r) => setTimeout(r, 300));
            ticksWhilePaused = Math.round((stack.runtime.clock.now() - t0) * stack.config.control_hz);
            stack.recorder!.quota!.limitBytes += 50e6;
          })();
        },
      });
      const s = await settle(rig, cfg, out);
      const aborted = res.episodes.filter((e) => e.outcome === "abort" && /recording failed/.test(e.detail)).length;
      return {
        scenario: "disk full while recording", injected: "recorder quota 0.15 MB (ENOSPC)",
        survived: /recording stopped: .*ENOSPC/.test(pauseMsg) && aborted <= 1 && before.files.length > 0 && before.readable === before.files.length && ticksWhilePaused === 0 && res.episodes.length === 8 && audit.unsafe === 0 && s.lost === 0,
        transitionsLost: s.lost, unsafeCommands: audit.unsafe,
        detail: `ENOSPC ${aborted ? "mid-episode: episode aborted" : "while closing an episode"}, session paused ("${pauseMsg.slice(0, 60)}…"), ${ticksWhilePaused} ticks while paused (robot held); ${before.readable}/${before.files.length} files readable; resumed after space was freed`,
      };
    } finally {
      await rig.cleanup();
    }
  },
};

const inferenceOverrun: FaultScenario = {
  name: "policy inference overrun",
  async run(ctx) {
    const cfg = launchConfig({ baseDir: ctx.baseDir, out: join(ctx.root, "robot") });
    Object.assign(cfg, { clock: "wall", control_hz: 20 });
    cfg.operator.enabled = false;
    cfg.recorder.enabled = false;
    cfg.episodes.max_steps = 50;
    const stack = await Stack.create(cfg, { quiet: true });
    try {
      const audit = auditDriver(stack);
      const actor = stack.actor.actor as { act(o: { names: string[]; values: number[] }): Promise<number[]> | number[] };
      const act = actor.act.bind(actor);
      let calls = 0;
      let slowAt = -1;
      let holdAt = -1;
      actor.act = async (obs) => {
        if (++calls === 20) {
          slowAt = audit.writes; // this tick's command will come 400 ms (8 ticks) late: a slowed model
          await new Promise((r) => setTimeout(r, 400));
        }
        return act(obs);
      };
      const write = stack.driver.write.bind(stack.driver);
      stack.driver.write = (q) => {
        if (holdAt < 0 && (stack.safety.counts.deadline_miss ?? 0) > 0) holdAt = audit.writes;
        return write(q);
      };
      await stack.runEpisodes({ count: 1, seed: 3 });
      // Writes after the missed tick until the hold reaches the driver: the stale target is executed for this many ticks.
      const staleTicks = holdAt - slowAt - 1;
      return {
        scenario: "policy inference overrun", injected: "one act() 400 ms late at 20 Hz (wall clock)",
        survived: (stack.safety.counts.deadline_miss ?? 0) >= 1 && holdAt > slowAt && staleTicks <= 1 && audit.unsafe === 0,
        transitionsLost: 0, unsafeCommands: audit.unsafe,
        detail: `safety reported deadline_miss ${stack.safety.counts.deadline_miss ?? 0}× (${stack.safety.counts.deadline_miss_ticks ?? 0} late ticks); hold reached the driver ${staleTicks + 1} tick(s) after the missed deadline`,
      };
    } finally {
      await stack.shutdown();
    }
  },
};

const badActions: FaultScenario = {
  name: "NaN / Inf / out-of-range actions, malformed frames",
  async run(ctx) {
    const cfg = launchConfig({ baseDir: ctx.baseDir, out: join(ctx.root, "robot") });
    cfg.operator.enabled = false;
    cfg.recorder.enabled = false;
    const stack = await Stack.create(cfg, { quiet: true });
    const rig = await LearnerRig.create(ctx.root, ctx.baseDir);
    const closers: (() => unknown)[] = [];
    try {
      const audit = auditDriver(stack);
      const actor = stack.actor.actor as { act(o: { names: string[]; values: number[] }): Promise<number[]> | number[] };
      const act = actor.act.bind(actor);
      let n = 0;
      const injected = { nan: 0, inf: 0, range: 0, length: 0 };
      actor.act = async (obs) => {
        const a = await act(obs);
        n++;
        if (n % 8 === 1) return (injected.nan++, a.map((v, i) => (i === 0 ? NaN : v)));
        if (n % 8 === 3) return (injected.inf++, a.map((v, i) => (i === 1 ? -Infinity : v)));
        if (n % 8 === 5) return (injected.range++, a.map((v, i) => (i === 2 ? v + 100 : v)));
        if (n % 8 === 7) return (injected.length++, a.slice(0, 2));
        return a;
      };
      await stack.runEpisodes({ count: 2, seed: 5 });
      const c = stack.safety.counts;
      const refusedActions = (c.nan_guard ?? 0) + (c.joint_limit ?? 0) + (c.length_mismatch ?? 0);
      const totalActions = injected.nan + injected.inf + injected.range + injected.length;
      // Malformed frames both ways: garbage to the learner's ROUTER, garbage on a PUB the robot's PolicySync follows.
      await rig.current.event("progress");
      const dealer = new Dealer({ linger: 0, receiveTimeout: 10_000 });
      closers.push(() => dealer.close());
      dealer.connect(rig.experience);
      const garbage = [[Buffer.from([0xc1])], [Buffer.from("not msgpack at all")], [Buffer.from([0x81, 0xa1, 0x78, 0x01]), Buffer.alloc(3)]];
      let errorReplies = 0;
      for (const g of garbage) {
        await dealer.send(g);
        if (decodeMessage(await dealer.receive()).header.type === "error") errorReplies++;
      }
      const pubEndpoint = `tcp://127.0.0.1:${await freePort()}`;
      const pub = new Publisher({ linger: 0 });
      closers.push(() => pub.close());
      await pub.bind(pubEndpoint);
      const sync = await PolicySync.start({ endpoint: pubEndpoint, cacheDir: join(ctx.root, "cache"), logger: quiet });
      closers.push(() => sync.close());
      const until = Date.now() + 10_000;
      while (sync.counters.rejected < 2 && Date.now() < until) {
        await pub.send([Buffer.from("policy"), Buffer.from([0xc1, 0xff])]);
        await new Promise((r) => setTimeout(r, 50));
      }
      const done = await rig.current.stop();
      return {
        scenario: "NaN / Inf / out-of-range actions, malformed frames",
        injected: `${injected.nan} NaN, ${injected.inf} -Inf, ${injected.range} +100 rad, ${injected.length} short actions; ${garbage.length} garbage requests, garbage publications`,
        survived: refusedActions >= totalActions && audit.unsafe === 0 && errorReplies === garbage.length && done.malformed === garbage.length && sync.counters.rejected >= 2 && sync.counters.accepted === 0,
        transitionsLost: 0, unsafeCommands: audit.unsafe,
        detail: `safety: nan_guard ${c.nan_guard ?? 0}, joint_limit ${c.joint_limit ?? 0}, length_mismatch ${c.length_mismatch ?? 0}; learner answered ${errorReplies} errors, counted ${done.malformed} malformed; robot refused ${sync.counters.rejected} publications`,
      };
    } finally {
      for (const c of closers.reverse()) await c();
      await rig.cleanup();
      await stack.shutdown();
    }
  },
};

const packages: FaultScenario = { name: "bad policy packages", run: policyPackageFaults };

/** Every scenario, in table order (the e-stop and malformed-MQTT scenarios live in operatorFaults.ts). */
export const FAULT_SCENARIOS: FaultScenario[] = [learnerKills, robotCrash, linkDrop, backpressure, diskFull, inferenceOverrun, packages, badActions, ...OPERATOR_FAULT_SCENARIOS, ...LEARNER_ATTACK_SCENARIOS, ...ATTACK_SCENARIOS];

/** Process RSS helper re-exported for the soak bench. */
export { rssOf };
