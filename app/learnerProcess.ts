/**
 * Runs the Python learner as a child process and follows its JSON progress lines
 * (`{"event":"progress",...}`, `{"event":"done",...}`); everything else it prints is passed through
 * to stderr so a failing learner explains itself.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { findPython, learnerEnv } from "./python.ts";

/** A JSON event from the learner. */
export type LearnerEvent = { event: string; [k: string]: unknown };

/** A running learner process. */
export interface LearnerProcess {
  child: ChildProcess;
  /**
   * Resolves with the "ready" event (its sockets are bound, so clients may connect); rejects, with the tail of its
   * output, when the process exits first. There is no fixed timeout: a cold `import torch` on a busy machine can take
   * many seconds, and a learner that dies says why.
   */
  ready: Promise<LearnerEvent>;
  /** Resolves with the "done" event; rejects when the process exits without one. */
  done: Promise<LearnerEvent>;
}

/** Options of {@link startLearner}. */
export interface StartLearnerOptions {
  /** Print a progress line to stderr every 5 s until the learner's first JSON event (default true). */
  announceWait?: boolean;
}

/** Starts `python -m rlft_learner <args...>` (JSON progress expected); `onEvent` gets every JSON event. */
export function startLearner(args: string[], onEvent: (e: LearnerEvent) => void = () => undefined, options: StartLearnerOptions = {}): LearnerProcess {
  const py = findPython();
  // Own process group: a Ctrl-C in the terminal reaches only us, and we stop the learner in order
  // (episode closed, spool flushed, then SIGINT → the learner checkpoints).
  const child = spawn(py, ["-m", "rlft_learner", ...args], { env: learnerEnv(), stdio: ["ignore", "pipe", "pipe"], detached: true });
  const killOnExit = () => child.exitCode === null && child.kill("SIGTERM");
  process.once("exit", killOnExit);
  child.once("exit", () => process.removeListener("exit", killOnExit));
  const tail: string[] = [];
  let doneEvent: LearnerEvent | null = null;
  let markReady: (e: LearnerEvent) => void = () => undefined;
  let readyFailed: (e: Error) => void = () => undefined;
  const ready = new Promise<LearnerEvent>((resolve, reject) => {
    markReady = resolve;
    readyFailed = reject;
  });
  ready.catch(() => undefined); // callers that only await `done` must not see an unhandled rejection
  const started = performance.now();
  const waitLine = options.announceWait === false ? null : setInterval(() => {
    const s = (performance.now() - started) / 1000;
    process.stderr.write(`waiting for the learner (${args[0]}) to start: ${s.toFixed(0)} s (loading PyTorch; slow on a busy machine)\n`);
  }, 5000);
  const stopWaitLine = () => waitLine && clearInterval(waitLine);
  const keep = (line: string) => {
    tail.push(line);
    if (tail.length > 30) tail.shift();
  };
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (line.startsWith("{")) {
      try {
        const e = JSON.parse(line) as LearnerEvent;
        if (e.event === "done") doneEvent = e;
        stopWaitLine(); // any event means it is up (commands that bind nothing never send "ready")
        if (e.event === "ready") markReady(e);
        onEvent(e);
        return;
      } catch {
        /* not JSON: pass through */
      }
    }
    keep(line);
  });
  createInterface({ input: child.stderr! }).on("line", (line) => {
    keep(line);
    if (process.env.RLFT_DEBUG) process.stderr.write(`[learner] ${line}\n`);
  });
  const done = new Promise<LearnerEvent>((resolve, reject) => {
    child.on("error", (e) => {
      stopWaitLine();
      const err = new Error(`could not start the learner (${py}): ${e.message}`);
      readyFailed(err);
      reject(err);
    });
    child.on("close", (code, signal) => {
      stopWaitLine();
      const err = new Error(`the learner (${args[0]}) exited with ${signal ?? `code ${code}`} before finishing. Its last output:\n${tail.join("\n")}`);
      readyFailed(err);
      if (doneEvent && code === 0) resolve(doneEvent);
      else reject(err);
    });
  });
  return { child, ready, done };
}
