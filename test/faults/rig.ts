/** Shared pieces of the fault scenarios: a learner on free ports, launch configs, a command audit on the driver. */
import { mkdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ExperienceBridge } from "../../bridge/ExperienceBridge.ts";
import { parseLaunch, type LaunchConfig } from "../../launch/LaunchConfig.ts";
import type { Stack } from "../../launch/Stack.ts";
import { LearnerProc, startLearnerOnFreePorts, tinyLearnerArgs } from "../support/LearnerProc.ts";
import { configHash } from "../../app/session.ts";

/** A learner that can be killed, frozen and restarted on the same ports and run_dir. */
export class LearnerRig {
  readonly experience: string;
  readonly policy: string;
  readonly runDir: string;
  current: LearnerProc;
  readonly #args: string[];
  readonly all: LearnerProc[] = [];

  private constructor(experience: string, policy: string, runDir: string, args: string[], first: LearnerProc) {
    this.experience = experience;
    this.policy = policy;
    this.runDir = runDir;
    this.#args = args;
    this.current = first;
    this.all.push(first);
  }

  /** Starts the learner on two free ports (startLearnerOnFreePorts); the rig's restarts reuse the ports it bound. */
  static async create(root: string, baseDir: string, extra: string[] = []): Promise<LearnerRig> {
    const runDir = join(root, "learner");
    const s = await startLearnerOnFreePorts((experience, policy) => tinyLearnerArgs({ base: baseDir, runDir, experience, policy, extra }));
    return new LearnerRig(s.experience, s.policy, runDir, s.args, s.proc);
  }

  start(): LearnerProc {
    this.current = new LearnerProc(this.#args);
    this.all.push(this.current);
    return this.current;
  }

  /** Stops the current learner (SIGINT, checkpoint) and returns its per-robot counts. */
  async finish(robotId: string): Promise<{ acked_seq: number; online_rows: number; distinct_seqs: number }> {
    const done = await this.current.stop();
    const robots = done.robots as Record<string, { acked_seq: number; online_rows: number; distinct_seqs: number }>;
    return robots[robotId] ?? { acked_seq: -1, online_rows: 0, distinct_seqs: 0 };
  }

  async cleanup(): Promise<void> {
    for (const l of this.all) {
      l.resume();
      await l.kill();
    }
  }
}

/** A sim launch config on the fixture package (no camera; tiny episodes). */
export function launchConfig(o: { baseDir: string; out: string; extra?: string; recorder?: string; hz?: number }): LaunchConfig {
  mkdirSync(o.out, { recursive: true });
  return parseLaunch(
    `task: push_cube\nactor: {kind: policy, package: ${JSON.stringify(o.baseDir)}}\ncamera: {enabled: false}\noperator: {enabled: true, patience_sec: 1}\nepisodes: {max_steps: 40}\nrecorder: {out: ${JSON.stringify(join(o.out, "episodes"))}, chunk_bytes: 4096${o.recorder ? `, ${o.recorder}` : ""}}\ncontrol_hz: ${o.hz ?? 10}\n${o.extra ?? ""}`,
    "faults.yaml",
  );
}

/**
 * After a session: reopen its spool (as a restarted robot would), send what is left and wait until the learner's
 * checkpoint holds everything; returns the last seq the robot ever produced.
 */
export async function drainSpool(cfg: LaunchConfig, out: string, experience: string): Promise<number> {
  const pj = JSON.parse(await readFile(join(cfg.actor.package!, "policy.json"), "utf8"));
  const bridge = await ExperienceBridge.open({
    endpoint: experience, spoolDir: join(out, "spool"), robotId: cfg.learner.robot_id, configHash: configHash(cfg), obsNames: pj.observation.names,
    actionNames: pj.action.names, task: cfg.task, basePolicyVersion: pj.version, reconnectDelayMs: 200, logger: { warn: () => undefined, info: () => undefined },
  });
  try {
    if (!(await bridge.flush({ durable: true, timeoutMs: 60_000 }))) throw new Error(`the learner did not take the rest of the spool: ${JSON.stringify(bridge.stats())}`);
    return bridge.stats().lastSeq;
  } finally {
    await bridge.close();
  }
}

/** Counts commands that reach the driver non-finite, outside the joint limits or beyond the step limit. */
export function auditDriver(stack: Stack): { unsafe: number; writes: number; log: number[][] } {
  const audit = { unsafe: 0, writes: 0, log: [] as number[][] };
  const d = stack.driver;
  const write = d.write.bind(d);
  const maxStep = stack.config.safety.max_step;
  // Positions the arm was measured at lately: the supervisor's holds (e-stop, pause, watchdog) are one of them, kept
  // tick after tick while the joints settle onto it.
  const recent: string[] = [];
  d.write = (positions: readonly number[]) => {
    const measured = d.read(0).reading?.position ?? [];
    audit.writes++;
    audit.log.push([...positions]);
    recent.push(measured.join());
    if (recent.length > 400) recent.shift();
    // Holding a measured position is safe even where the sim has it a hair outside a limit (contact penetration);
    // the step limit still applies below.
    const hold = positions.length === measured.length && recent.includes(positions.join());
    const bad = (positions.length !== d.jointNames.length || positions.some((q, i) => {
      const step = typeof maxStep === "number" ? maxStep : maxStep[i];
      return !Number.isFinite(q) || (!hold && (q < d.jointLower[i] - 1e-9 || q > d.jointUpper[i] + 1e-9)) || (measured[i] !== undefined && Math.abs(q - measured[i]) > step + 1e-6);
    }));
    if (bad) {
      audit.unsafe++;
      if (process.env.RLFT_DEBUG) console.error(`unsafe command ${JSON.stringify(positions)} measured ${JSON.stringify(measured)}`);
    }
    return write(positions);
  };
  return audit;
}
