/**
 * An online fine-tuning session: the stack runs episodes with a policy (base + residual) and a supervising
 * operator; every tick's transition streams to the learner through the spooled ZeroMQ bridge; new residual
 * packages from the learner are verified and swapped in at chunk boundaries. Used by `rlft session` and `rlft demo`.
 */
import { policyKind } from "../policies/vla/VlaPackage.ts";
import type { JointPositionSource as LeaderSource } from "../hardware/teleop/JointPositionSource.ts";
import { mkdirSync, writeFileSync, appendFileSync, existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createHash } from "node:crypto";
import { stringify } from "yaml";
import type { LaunchConfig } from "../launch/LaunchConfig.ts";
import { Stack } from "../launch/Stack.ts";
import { ExperienceBridge } from "../bridge/ExperienceBridge.ts";
import { PolicySync } from "../bridge/PolicySync.ts";
import { PolicyPackage } from "../policies/PolicyPackage.ts";
import type { Transition } from "../contracts/Transition.ts";
import type { EpisodeResult } from "../nodes/EpisodeManagerNode.ts";
import { PolicyActor } from "../policies/actors/PolicyActor.ts";
import { startLearner, type LearnerProcess } from "./learnerProcess.ts";
import type { Telemetry } from "../telemetry/Telemetry.ts";
import { ControlLoopMonitor } from "../nodes/ControlLoopMonitor.ts";
import { loadCurveClientKeys, type CurveClientKeys } from "../bridge/CurveCertificate.ts";
import { loadPackageTrust, type PackageTrust } from "../policies/PackageSignature.ts";
import type { ExperienceStats } from "../bridge/ExperienceBridge.ts";
import { freePorts } from "./ports.ts";
import { checkListenAddress } from "../runtime/listenAddress.ts";

/** Live numbers of a session, for progress displays. */
export interface SessionStatus {
  episode: number;
  episodes: number;
  /** Success rate over the last `window` episodes. */
  rollingSuccess: number;
  /** Fraction of steps under operator control over the last `window` episodes. */
  interventionRate: number;
  learnerUpdates: number;
  updatesPerSec: number;
  policyVersion: string;
  transitionsSent: number;
  transitionsAcked: number;
}

/** One finished episode of a session. */
export interface SessionEpisode extends EpisodeResult {
  interventionSteps: number;
  policyVersion: string;
  /**
   * Paced sessions with their own learner: its updates and the online transitions its UTD clock counted (a resumed
   * learner's plus this session's) when the episode started, after the robot waited for it.
   */
  pacedAt?: { updates: number; transitions: number };
}

/** Options of {@link runSession}. */
export interface SessionOptions {
  config: LaunchConfig;
  /** Start a learner (true), use the one at this experience endpoint (its policy PUB is `policyEndpoint`), or none (false: record only). */
  learner: true | string | false;
  policyEndpoint?: string;
  episodes: number;
  seed: number;
  /** Run directory: learner run, spool, policy cache, session.jsonl. */
  out: string;
  /** Learner config keys (learner/rlft_learner/commands/serve_config.py ServeConfig) overriding the defaults. */
  learnerConfig?: Record<string, unknown>;
  /**
   * policy (default): the BC base runs and the learner's packages are residuals on it. zero: the base action is 0 and
   * the learner's package is the whole policy (PolicyActor `zeroBase`; the RLPD-SAC baseline, learner algorithm rlpd_sac).
   */
  baseMode?: "policy" | "zero";
  /** Sim only: before each episode wait until the learner has done utd × (transitions − learning_starts) updates. */
  pace?: boolean;
  window?: number;
  onStatus?: (s: SessionStatus) => void;
  /** One-line notes on what the session decided for the user (e.g. which cameras travel to the learner). */
  onNote?: (line: string) => void;
  /** Resolves when the user asks to stop (Ctrl-C): the episode is aborted and everything is flushed. */
  stop?: Promise<void>;
  /** Called once the stack runs (e.g. to print where the operator UI is served). */
  onReady?: (stack: Stack) => void;
  /** Metrics (docs/telemetry.md): control loop, episodes, spool, learner. */
  telemetry?: Telemetry;
  /** Called with the reason when episodes pause (spool at its cap, recording stopped) and with null when they resume. */
  onPause?: (reason: string | null) => void;
  /** Awaited after each episode (fault injection in tests, operator hooks). */
  afterEpisode?: (i: number, ctx: { bridge: ExperienceBridgeLike; stack: Stack }) => Promise<void> | void;
  /** Called once the stack is built, before the first episode (audits, fault injection). */
  onStack?: (stack: Stack) => void;
  /** The leader arm for --operator leader (hardware/servo/openLeaderArm.ts). */
  leaderSource?: LeaderSource;
  /** Poll period while paused (ms). Default 500. */
  pausePollMs?: number;
}

/** What afterEpisode sees of the uplink. */
export type ExperienceBridgeLike = Pick<ExperienceBridge, "stats" | "flush" | "spoolRoom">;

/** Result of a session. */
export interface SessionResult {
  episodes: SessionEpisode[];
  finalPolicyDir: string | null;
  finalVersion: string;
  learnerUpdates: number;
  transitions: { pushed: number; acked: number };
  stoppedEarly: boolean;
  /** Control ticks and ticks whose command came late or never (ControlLoopMonitor). */
  loop: { ticks: number; deadlineMisses: number };
  /** Every pause reason, in order. */
  pauses: string[];
  /** The uplink's final counters (none in an offline session). */
  bridge?: ExperienceStats;
  /** Safety supervisor changes by kind. */
  safety: Record<string, number>;
}

/** Runs an online session; see the file comment. */
export async function runSession(o: SessionOptions): Promise<SessionResult> {
  const out = resolve(o.out);
  mkdirSync(out, { recursive: true });
  const cfg = structuredClone(o.config);
  if (o.learner === false) return runOfflineSession(o, cfg, out);
  if (o.learner === true) {
    // --learner-set may move the learner's binds: the same rule as every listener, before anything starts (the
    // learner checks again itself).
    const lc = o.learnerConfig ?? {};
    for (const key of ["experience_bind", "policy_bind"]) {
      if (lc[key] === undefined) continue; // a free loopback port, chosen below
      checkListenAddress({ setting: key, address: String(lc[key]), authenticated: typeof lc.curve_secret === "string" && typeof lc.curve_authorized === "string", risk: "send the learner experience or receive its policies", authFix: "set curve_secret and curve_authorized (keys from `rlft keys`)", insecurePublicBind: lc.insecure_public_bind === true });
    }
  }
  if (cfg.actor.kind !== "policy" || !cfg.actor.package) throw new Error("a session needs actor.kind: policy and actor.package (the BC base package)");
  if ((await policyKind(cfg.actor.package)) === "vla") {
    throw new Error(`${cfg.actor.package} is a VLA package: the online learner trains residuals over diffusion BC packages only. Record the VLA's supervised episodes with --offline, then fine-tune it with rlft train-vla --recap-data DIR --pretrained ${cfg.actor.package}`);
  }
  const base = await PolicyPackage.load(cfg.actor.package);
  // A base that reads cameras: the learner's residual and critics read them too, so every transition must carry the
  // frames of those cameras. Left empty in the launch file, learner.cameras becomes the base's cameras when the
  // session starts its own learner on this machine; frames leave the robot for another machine only when asked.
  if (base.images.length > 0 && cfg.learner.cameras.length === 0) {
    const cams = base.images.map((i) => i.camera);
    if (o.learner !== true) {
      throw new Error(`the base ${base.json.version} reads cameras ${cams.join(", ")}, so the learner at ${o.learner} needs their frames with every transition: set learner.cameras: [${cams.join(", ")}] in the launch file (the frames then leave the robot), or start the learner here with --learner`);
    }
    cfg.learner.cameras = cams;
    o.onNote?.(`the base ${base.json.version} reads cameras ${cams.join(", ")}: every transition carries their frames to the learner (learner.cameras)`);
  }

  // 1. The learner: ours, or one already running.
  let learner: LearnerProcess | null = null;
  let experience: string;
  let policyEndpoint: string;
  let updates = 0;
  // Online transitions a resumed learner had already counted (its `resumed` event): its UTD clock continues from them,
  // so the pacing below does too (counting only this session's transitions let a resumed run go unpaced).
  let resumedSteps = 0;
  let ups = 0;
  let utd = Number(o.learnerConfig?.utd ?? 2);
  let learningStarts = Number(o.learnerConfig?.learning_starts ?? 500);
  let lastPolicyDir: string | null = null;
  if (o.learner === true) {
    // Two free ports, then the learner binds them: another process may take one in between (parallel test suites,
    // a busy CI machine). The learner then exits naming the address in use, and it is started again on fresh ports.
    for (let attempt = 1; ; attempt++) {
      const [p1, p2] = await freePorts(2);
      experience = `tcp://127.0.0.1:${p1}`;
      policyEndpoint = `tcp://127.0.0.1:${p2}`;
      const lc: Record<string, unknown> = { experience_bind: experience, policy_bind: policyEndpoint, base_package: resolve(cfg.actor.package), run_dir: join(out, "learner"), json_progress: true, ...(cfg.actor.noise_scale !== 1 ? { base_noise_scale: cfg.actor.noise_scale } : {}), ...o.learnerConfig };
      utd = Number(lc.utd ?? utd);
      learningStarts = Number(lc.learning_starts ?? learningStarts);
      const file = join(out, "learner.yaml");
      writeFileSync(file, stringify(lc));
      learner = startLearner(["serve", "--config", file], (e) => {
        if (e.event === "resumed") {
          updates = Math.max(updates, Number(e.updates ?? 0));
          resumedSteps = Number(e.env_steps ?? 0);
        }
        if (e.event === "progress" || e.event === "done") {
          updates = Math.max(updates, Number(e.updates));
          ups = Number(e.updates_per_s ?? 0);
          const losses = (e.losses ?? {}) as Record<string, number>;
          o.telemetry?.point("rlft_learner", { updates, updates_per_s: ups, online: Number(e.online ?? 0), offline: Number(e.offline ?? 0), ...Object.fromEntries(Object.entries(losses).map(([k, v]) => [k.replaceAll("/", "_"), v])) });
        }
      });
      const failed = await learner.ready.then(() => null, (e: Error) => e);
      if (!failed) break;
      // Not ready means it has exited (learnerProcess.ts rejects `ready` only then); its error, when final, is thrown below.
      if (attempt < 3 && /Address already in use/.test(failed.message)) {
        o.onNote?.(`learner: a port picked for it was taken before it could bind (${failed.message.slice(0, 120)}); starting it again on other ports`);
        continue;
      }
      break;
    }
  } else {
    experience = o.learner;
    policyEndpoint = o.policyEndpoint ?? cfg.learner.policy;
  }
  // What is open so far, closed in reverse when the set-up below fails: a failed start never leaves the learner running.
  const undo: (() => Promise<unknown>)[] = [];
  const stopLearner = async () => {
    if (!learner) return;
    learner.child.kill("SIGINT"); // the learner checkpoints and exports on SIGINT
    await learner.done.catch((e: Error) => console.error(`learner: ${e.message}`));
  };
  undo.push(stopLearner);
  const step = async <T>(f: () => Promise<T>, close?: (v: T) => Promise<unknown>): Promise<T> => {
    let v: T;
    try {
      v = await f();
    } catch (e) {
      await closeAll([...undo].reverse()).catch(() => undefined);
      throw e;
    }
    if (close) undo.push(() => close(v));
    return v;
  };
  // A learner we started is waited for until it says it is bound (or dies, with its own error): no fixed timeout.
  if (learner) await step(() => learner!.ready);

  // 2. The uplink with its disk spool, and the policy follower; CURVE and package signatures when configured.
  const sec = cfg.learner.security;
  let curve: CurveClientKeys | undefined;
  let trust: PackageTrust | undefined;
  if (sec) {
    curve = await step(() => loadCurveClientKeys({ secretCertificate: sec.curve_secret, serverCertificate: sec.learner_key }));
    trust = await step(() => loadPackageTrust(sec.trusted_signers));
  }
  const quietLog = { warn: (m: string) => process.env.RLFT_DEBUG && console.error(`[bridge] ${m}`), info: () => undefined };
  const bridge = await step(() => ExperienceBridge.open({
    endpoint: experience,
    spoolDir: join(out, "spool"),
    robotId: cfg.learner.robot_id,
    configHash: configHash(cfg),
    obsNames: base.json.observation.names,
    actionNames: base.json.action.names,
    task: cfg.task,
    basePolicyVersion: base.json.version,
    spoolCapBytes: cfg.learner.spool_cap_mb * 1e6,
    cameras: cfg.learner.cameras,
    frameEncoding: cfg.learner.frame_encoding,
    curve,
    logger: quietLog,
  }), (b) => b.close());
  bridge.onHeartbeat((h) => {
    updates = Math.max(updates, Number((h as { updates?: number }).updates ?? 0));
  });

  const perEpisode = new Map<number, number>();
  const sink = {
    push: (t: Transition) => {
      if (t.intervention) perEpisode.set(t.episode, (perEpisode.get(t.episode) ?? 0) + 1);
      bridge.push(t);
    },
  };
  const stack = await step(() => Stack.create(cfg, { quiet: true, experience: sink, training: cfg.learner.explore, recordTo: join(out, "episodes"), leaderSource: o.leaderSource }), (s) => s.shutdown());
  o.onStack?.(stack);
  const actor = stack.actor.actor as PolicyActor;
  actor.zeroBase = o.baseMode === "zero";
  const sync = await step(() => PolicySync.start({ endpoint: policyEndpoint, cacheDir: join(out, "policies"), experience: bridge, currentVersion: actor.version, curve, trust, logger: quietLog }), (x) => x.close());
  const monitor = new ControlLoopMonitor(stack.runtime.createNode("control_loop_monitor"), { telemetry: o.telemetry });
  await step(async () => {
    await monitor.configure();
    await monitor.activate();
  });
  const bridgeMetrics = o.telemetry
    ? setInterval(() => {
        const st = bridge.stats();
        o.telemetry!.point("rlft_bridge", { spool_bytes: st.spoolBytes, spool_cap_bytes: st.spoolCapBytes, pushed: st.pushed, acked: st.acked, lost: st.lost, overflowed: st.overflowed, rejected: st.rejected, link_up: st.linkUp, reconnects: st.reconnects, policies_rejected: sync.counters.rejected });
      }, 1000)
    : undefined;
  bridgeMetrics?.unref();
  sync.onPackage((p) => {
    if (p.kind !== "residual") return;
    void actor.offerResidual(p.dir).then((r) => {
      if (r.ok) lastPolicyDir = p.dir;
    });
  });
  // The welcome may have come while the stack was loading, before PolicySync listened for it: ask once for the
  // learner's latest package (a zero-base learner publishes one at start); "none yet" or a down link is fine.
  void bridge.getPolicy().then((m) => (m.version === actor.version ? undefined : sync.ingest(m, "get_policy")), () => undefined);

  // 3. Episodes.
  const episodes: SessionEpisode[] = [];
  const window = o.window ?? 20;
  let stopped = false;
  void o.stop?.then(() => {
    stopped = true;
    stack.manager.abort("session stopped by the operator (Ctrl-C)");
    stack.cancelWait();
  });
  const learnerStatus = setInterval(() => {
    const st = bridge.stats();
    stack.station?.console.setLearner({ updates: updates, "updates/s": Math.round(ups), acked: `${st.acked}/${st.pushed}` });
  }, 1000);
  learnerStatus.unref();
  o.onReady?.(stack);
  const log = join(out, "session.jsonl");
  const pauses: string[] = [];
  const maxSteps = cfg.episodes.max_steps ?? stack.world?.sim.task.maxSteps ?? 10_000;
  /** Why the next episode must not start, or null: it must fit the spool, and recording must work. */
  const pauseReason = async (): Promise<string | null> => {
    const rec = stack.recorder;
    if (rec?.failure && !(await rec.recover())) return `recording stopped: ${rec.failure.message}; the robot holds and episodes are paused until there is room (already recorded episodes are intact)`;
    const room = bridge.spoolRoom();
    if (room < maxSteps + 16) {
      const st = bridge.stats();
      return `experience spool at ${(st.spoolBytes / 1e6).toFixed(2)} of its ${(st.spoolCapBytes / 1e6).toFixed(2)} MB cap (room for ${room} transitions, an episode needs up to ${maxSteps}); the learner at ${experience} holds seq ≤ ${st.ackedSeq} of ${st.lastSeq} (link ${st.linkUp ? "up" : `down: ${st.lastError ?? "?"}`}). Episodes are paused until it catches up — check the learner, or raise learner.spool_cap_mb`;
    }
    return null;
  };
  const waitUntilClear = async (): Promise<void> => {
    let last: string | null = null;
    for (;;) {
      const why = stopped ? null : await pauseReason();
      if (why === null) break;
      if (why.split(";")[0] !== last?.split(";")[0]) {
        pauses.push(why);
        o.onPause?.(why);
        if (!o.onPause) console.error(`rlft session: paused: ${why}`);
      }
      last = why;
      await new Promise((r) => setTimeout(r, o.pausePollMs ?? 500));
    }
    if (last !== null) o.onPause?.(null);
  };
  const status = (i: number): SessionStatus => {
    const recent = episodes.slice(-window);
    const steps = recent.reduce((a, e) => a + e.steps, 0);
    const st = bridge.stats();
    return {
      episode: i,
      episodes: o.episodes,
      rollingSuccess: recent.length ? recent.filter((e) => e.outcome === "success").length / recent.length : 0,
      interventionRate: steps ? recent.reduce((a, e) => a + e.interventionSteps, 0) / steps : 0,
      learnerUpdates: updates,
      updatesPerSec: ups,
      policyVersion: actor.version,
      transitionsSent: st.pushed,
      transitionsAcked: st.acked,
    };
  };
  let finalVersion = actor.version;
  const first = resumePoint(stack, log, out);
  // What the learner's UTD clock counts: a resumed learner's transitions plus this session's.
  const produced = () => resumedSteps + bridge.stats().pushed;
  try {
    // Zero base: nothing sensible runs until the learner's first package (published at its start) is loaded.
    if (o.baseMode === "zero") {
      const until = Date.now() + 120_000;
      while (lastPolicyDir === null && !stopped && (learner === null || learner.child.exitCode === null) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    }
    for (let i = 0; i < o.episodes && !stopped; i++) {
      await waitUntilClear();
      if (stopped) break;
      let pacedAt: SessionEpisode["pacedAt"];
      if (o.pace && learner) {
        await paceLearner(() => updates, produced, utd, learningStarts, () => stopped || learner!.child.exitCode !== null);
        pacedAt = { updates, transitions: produced() };
      }
      const [r] = await stack.runEpisodes({ count: 1, seed: o.seed + first + i, firstEpisode: first + i, tolerateRecorderFailure: true });
      if (!r) break; // stopped while waiting for the operator's start
      const ep: SessionEpisode = { ...r, interventionSteps: perEpisode.get(r.episode) ?? 0, policyVersion: actor.version, ...(pacedAt ? { pacedAt } : {}) };
      episodes.push(ep);
      appendFileSync(log, JSON.stringify(ep) + "\n");
      const s = status(i + 1);
      o.telemetry?.point("rlft_episode", { success: ep.outcome === "success", steps: ep.steps, intervention_steps: ep.interventionSteps, duration_s: ep.durationSec, rolling_success: s.rollingSuccess, intervention_rate: s.interventionRate, episode: ep.episode }, { outcome: ep.outcome });
      o.onStatus?.(s);
      await o.afterEpisode?.(i, { bridge, stack });
    }
    finalVersion = actor.version;
  } finally {
    clearInterval(learnerStatus);
    clearInterval(bridgeMetrics);
    // Every step runs whatever failed before it, so a fatal error never leaves the learner (or a socket) running and
    // the process waiting on it (issue 24 item 7); the first failure is rethrown once all is closed.
    await closeAll([
      () => monitor.shutdown(),
      () => stack.shutdown(),
      () => bridge.flush({ timeoutMs: 15_000 }),
      () => sync.close(),
      () => bridge.close(),
      stopLearner,
    ]);
  }
  const st = bridge.stats();
  return {
    episodes, finalPolicyDir: lastPolicyDir, finalVersion, learnerUpdates: updates, transitions: { pushed: st.pushed, acked: st.acked }, stoppedEarly: stopped,
    loop: { ...monitor.totals }, pauses, bridge: st, safety: { ...stack.safety.counts },
  };
}

/** A session without a learner: episodes are recorded (operator interventions and labels included), nothing is trained. */
async function runOfflineSession(o: SessionOptions, cfg: LaunchConfig, out: string): Promise<SessionResult> {
  const stack = await Stack.create(cfg, { quiet: true, recordTo: join(out, "episodes"), leaderSource: o.leaderSource });
  const episodes: SessionEpisode[] = [];
  let stopped = false;
  void o.stop?.then(() => {
    stopped = true;
    stack.manager.abort("session stopped by the operator (Ctrl-C)");
    stack.cancelWait();
  });
  o.onReady?.(stack);
  const log = join(out, "session.jsonl");
  const version = () => (stack.actor.actor as { version?: string }).version ?? `${cfg.actor.kind}`;
  const first = resumePoint(stack, log, out);
  try {
    for (let i = 0; i < o.episodes && !stopped; i++) {
      const before = stack.arbiter.interventionTicks;
      const [r] = await stack.runEpisodes({ count: 1, seed: o.seed + first + i, firstEpisode: first + i });
      if (!r) break;
      const ep: SessionEpisode = { ...r, interventionSteps: stack.arbiter.interventionTicks - before, policyVersion: version() };
      episodes.push(ep);
      appendFileSync(log, JSON.stringify(ep) + "\n");
      const recent = episodes.slice(-(o.window ?? 20));
      const steps = recent.reduce((a, e) => a + e.steps, 0);
      o.onStatus?.({ episode: i + 1, episodes: o.episodes, rollingSuccess: recent.filter((e) => e.outcome === "success").length / recent.length, interventionRate: steps ? recent.reduce((a, e) => a + e.interventionSteps, 0) / steps : 0, learnerUpdates: 0, updatesPerSec: 0, policyVersion: "offline", transitionsSent: 0, transitionsAcked: 0 });
    }
  } finally {
    await stack.shutdown();
  }
  const loop = { ticks: episodes.reduce((a, e) => a + e.steps, 0), deadlineMisses: stack.safety.counts.deadline_miss_ticks ?? 0 };
  return { episodes, finalPolicyDir: null, finalVersion: "offline", learnerUpdates: 0, transitions: { pushed: 0, acked: 0 }, stoppedEarly: stopped, loop, pauses: [], safety: { ...stack.safety.counts } };
}

/** Runs every step in order even when one fails; throws the first failure after the last step. */
async function closeAll(steps: (() => Promise<unknown>)[]): Promise<void> {
  let first: unknown;
  for (const step of steps) {
    try {
      await step();
    } catch (e) {
      first ??= e;
    }
  }
  if (first !== undefined) throw first;
}

/**
 * Where a run directory's episode numbering continues (issue 24 item 7): after the episodes its recorder found and
 * after the last one in session.jsonl (a session recorded without a recorder still counts). Seeds follow the numbers:
 * episode n of the run directory uses seed + n, so a restarted session neither overwrites nor repeats.
 */
function resumePoint(stack: Stack, log: string, out: string): number {
  let next = stack.recorder?.nextEpisode ?? 0;
  if (existsSync(log)) {
    for (const line of readFileSync(log, "utf8").split("\n")) {
      try {
        const n = (JSON.parse(line) as { episode?: unknown }).episode;
        if (typeof n === "number" && Number.isInteger(n)) next = Math.max(next, n + 1);
      } catch {
        // a line cut by a crash
      }
    }
  }
  if (next > 0) console.error(`resuming run directory ${out}: episodes 0..${next - 1} are there; this session continues at episode ${next}`);
  return next;
}

/**
 * Keeps simulated experience from outrunning the learner: the update-to-data ratio holds as on a real robot. `produced`
 * counts what the learner's UTD clock counts (a resumed learner's transitions plus this session's).
 */
async function paceLearner(updates: () => number, produced: () => number, utd: number, starts: number, abort: () => boolean): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!abort() && Date.now() < deadline && updates() < 0.9 * utd * Math.max(0, produced() - starts)) {
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A short, stable hash of a launch config, for the protocol's config_hash. */
export function configHash(cfg: LaunchConfig): string {
  return createHash("sha256").update(JSON.stringify({ task: cfg.task, robot: cfg.robot, hz: cfg.control_hz })).digest("hex").slice(0, 16);
}
