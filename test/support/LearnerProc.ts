/**
 * Test/bench helper: a real `python3 -m rlft_learner serve` child whose JSON stdout lines are collected, with the
 * fault-injection verbs the suites need (SIGKILL, SIGSTOP/SIGCONT, SIGINT-and-wait-for-done) and its RSS.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { LEARNER_DIR } from "../../policies/testing/learnerFixture.ts";
import { findPython } from "../../app/python.ts";
import { freePorts } from "../../app/ports.ts";

const PYTHON = findPython();

/** A `serve` process; `events` are its JSON stdout lines. */
export class LearnerProc {
  events: Record<string, unknown>[] = [];
  stderr = "";
  exit: Promise<number | null>;
  readonly child: ChildProcess;

  constructor(args: string[]) {
    this.child = spawn(PYTHON, ["-m", "rlft_learner", "serve", ...args], {
      cwd: LEARNER_DIR, env: { ...process.env, OPENBLAS_NUM_THREADS: "1", OMP_NUM_THREADS: "1" }, stdio: ["ignore", "pipe", "pipe"],
    });
    let buf = "";
    this.child.stdout!.on("data", (d: Buffer) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          this.events.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // not a JSON event
        }
      }
    });
    this.child.stderr!.on("data", (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    this.exit = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The first event named `name` (waits for it). */
  async event(name: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const e = this.events.find((x) => x.event === name);
      if (e !== undefined) return e;
      if (!this.alive) throw new Error(`learner exited ${this.child.exitCode ?? this.child.signalCode} before a ${name} event:\n${this.stderr}`);
      if (Date.now() > end) throw new Error(`no ${name} event from the learner within ${timeoutMs} ms:\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** SIGINT: the learner checkpoints and prints `done`; resolves with it. */
  async stop(): Promise<Record<string, unknown>> {
    this.child.kill("SIGCONT");
    this.child.kill("SIGINT");
    const code = await this.exit;
    if (code !== 0) throw new Error(`learner exit code ${code}; stderr:\n${this.stderr}`);
    return this.event("done", 1000);
  }

  /** SIGKILL (no checkpoint, no goodbye). */
  async kill(): Promise<void> {
    if (!this.alive) return;
    this.child.kill("SIGKILL");
    await this.exit;
  }

  /** SIGSTOP: the process is frozen; its sockets stay open but nothing answers (a dead link). */
  pause(): void {
    this.child.kill("SIGSTOP");
  }

  resume(): void {
    this.child.kill("SIGCONT");
  }

  /** Resident set size in bytes (Linux /proc), 0 when gone. */
  rss(): number {
    return rssOf(this.child.pid);
  }
}

/**
 * Starts a learner on two fresh loopback ports and waits until it has bound them (its `ready` line). Another test
 * running in parallel can take a port between freePorts() and the bind; the learner then exits naming the address,
 * and it starts again on fresh ports (up to 3 tries). `argsFor` builds the serve flags for a pair of endpoints.
 */
export async function startLearnerOnFreePorts(argsFor: (experience: string, policy: string) => string[]): Promise<{ proc: LearnerProc; experience: string; policy: string; args: string[] }> {
  for (let attempt = 1; ; attempt++) {
    const [p1, p2] = await freePorts(2);
    const experience = `tcp://127.0.0.1:${p1}`;
    const policy = `tcp://127.0.0.1:${p2}`;
    const args = argsFor(experience, policy);
    const proc = new LearnerProc(args);
    try {
      await proc.event("ready");
      return { proc, experience, policy, args };
    } catch (e) {
      await proc.kill();
      if (attempt < 3 && /Address already in use/.test(proc.stderr)) continue;
      throw e;
    }
  }
}

/** RSS of a process in bytes from /proc/<pid>/status (0 when unreadable). */
export function rssOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** `serve` flags for a tiny, fast learner (test budgets; the algorithm is unchanged). */
export function tinyLearnerArgs(o: { base: string; runDir: string; experience: string; policy: string; extra?: string[] }): string[] {
  return [
    "--base-package", o.base, "--run-dir", o.runDir, "--experience-bind", o.experience, "--policy-bind", o.policy,
    "--critic-heads", "2", "--critic-hidden", "32", "--actor-hidden", "32", "--batch-size", "32", "--learning-starts", "50",
    "--critic-warmup-updates", "20", "--utd", "0.5", "--publish-every", "100", "--checkpoint-every", "1000000",
    "--checkpoint-every-s", "1", "--heartbeat-sec", "0.2", "--progress-every-s", "0.5", "--threads", "1", "--json-progress",
    ...(o.extra ?? []),
  ];
}
