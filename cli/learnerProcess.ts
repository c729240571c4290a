/**
 * Runs the Python learner as a child process and follows its JSON progress lines
 * (`{"event":"progress",...}`, `{"event":"done",...}`); everything else it prints is passed through
 * to stderr so a failing learner explains itself.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { findPython, learnerEnv } from "../app/python.ts";

/** A JSON event from the learner. */
export type LearnerEvent = { event: string; [k: string]: unknown };

/** A running learner process. */
export interface LearnerProcess {
  child: ChildProcess;
  /** Resolves with the "done" event; rejects when the process exits without one. */
  done: Promise<LearnerEvent>;
}

/** Starts `python3 -m rlft_learner <args...>`; `onEvent` gets every JSON event. */
export function startLearner(args: string[], onEvent: (e: LearnerEvent) => void = () => undefined): LearnerProcess {
  const py = findPython();
  // Own process group: a Ctrl-C in the terminal reaches only us, and we stop the learner in order
  // (episode closed, spool flushed, then SIGINT → the learner checkpoints).
  const child = spawn(py, ["-m", "rlft_learner", ...args], { env: learnerEnv(), stdio: ["ignore", "pipe", "pipe"], detached: true });
  const killOnExit = () => child.exitCode === null && child.kill("SIGTERM");
  process.once("exit", killOnExit);
  child.once("exit", () => process.removeListener("exit", killOnExit));
  const tail: string[] = [];
  let doneEvent: LearnerEvent | null = null;
  const keep = (line: string) => {
    tail.push(line);
    if (tail.length > 30) tail.shift();
  };
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (line.startsWith("{")) {
      try {
        const e = JSON.parse(line) as LearnerEvent;
        if (e.event === "done") doneEvent = e;
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
    child.on("error", (e) => reject(new Error(`could not start the learner (${py}): ${e.message}`)));
    child.on("close", (code, signal) => {
      if (doneEvent && code === 0) resolve(doneEvent);
      else reject(new Error(`the learner exited with ${signal ?? `code ${code}`} before finishing. Its last output:\n${tail.join("\n")}`));
    });
  });
  return { child, done };
}
