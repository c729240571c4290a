/** The attacker's side of test/support/robotTargetChild.ts: starts the robot child, asks it for numbers, stops it. */
import { fork, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { TargetConfig, TargetStats } from "./robotTargetChild.ts";

export type { TargetConfig, TargetStats };

/** A running robot process under attack. */
export class RobotTarget {
  readonly child: ChildProcess;
  /** Filled once the child is ready. */
  ready!: TargetStats;
  stderr = "";
  #exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(child: ChildProcess) {
    this.child = child;
    child.stderr?.on("data", (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    this.#exit = new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
  }

  /** Starts the robot and waits until its episode runs. */
  static async start(cfg: TargetConfig): Promise<RobotTarget> {
    const child = fork(join(import.meta.dirname, "robotTargetChild.ts"), [JSON.stringify(cfg)], { execArgv: ["--import", "tsx"], stdio: ["ignore", "ignore", "pipe", "ipc"] });
    const t = new RobotTarget(child);
    t.ready = await new Promise<TargetStats>((resolve, reject) => {
      const onMsg = (m: { type: string; stats: TargetStats }) => {
        if (m.type !== "ready") return;
        child.off("message", onMsg);
        resolve(m.stats);
      };
      child.on("message", onMsg);
      void t.#exit.then((e) => reject(new Error(`the robot target exited (${e.code ?? e.signal}) before it was ready:\n${t.stderr}`)));
    });
    return t;
  }

  /** True while the robot process runs. */
  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** How the process ended, once it has. */
  get ended(): string {
    return this.alive ? "running" : `exited ${this.child.exitCode ?? this.child.signalCode}: ${this.stderr.split("\n").filter(Boolean).slice(-3).join(" / ")}`;
  }

  /** The robot's numbers now; rejects when the process is gone. */
  stats(): Promise<TargetStats> {
    if (!this.alive) return Promise.reject(new Error(`the robot process is gone (${this.ended})`));
    return new Promise((resolve, reject) => {
      const onMsg = (m: { type: string; stats: TargetStats }) => {
        if (m.type !== "stats") return;
        this.child.off("message", onMsg);
        resolve(m.stats);
      };
      this.child.on("message", onMsg);
      void this.#exit.then(() => reject(new Error(`the robot process died (${this.ended})`)));
      this.child.send({ type: "stats" });
    });
  }

  /** Stops the robot cleanly (or kills it when it does not answer). */
  async stop(): Promise<void> {
    if (!this.alive) return;
    this.child.send({ type: "stop" });
    const t = setTimeout(() => this.child.kill("SIGKILL"), 15_000);
    await this.#exit;
    clearTimeout(t);
  }
}
