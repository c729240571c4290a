/**
 * The `rlft` command line. Each subcommand lives in cli/commands/ and has --help with an example.
 * Errors print one clear message (the stack trace only with RLFT_DEBUG=1) and exit 1 at once: a socket, timer or
 * child left open by the failed work never keeps the process alive (issue 24 item 7: a session hung for minutes after
 * its fatal error). Ctrl-C: a command that handles it (session, launch) gets the first one to stop cleanly; a second
 * one, or the first where no command handles it, exits at once (130, as a shell reports SIGINT). SIGTERM and SIGHUP
 * count as Ctrl-C (exiting 143 and 129 where they exit at once).
 */
import { buildProgram } from "./program.ts";

const program = buildProgram();

/** Exit status after a signal, as a shell reports it: 128 + the signal's number. */
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
type StopSignal = keyof typeof SIGNAL_EXIT;
// SIGTERM (systemd, docker stop, kill) and SIGHUP (the terminal closed) stop as Ctrl-C does. Node's default for them
// ends the process without its exit handlers, so a learner child (its own process group, for Ctrl-C's sake) ran on,
// orphaned, holding its ports and run directory.
let stops = 0;
let forwarding = false;
function onStop(signal: StopSignal): void {
  if (forwarding) return; // our own SIGINT, forwarded below to a command's clean stop
  stops++;
  if (signal === "SIGHUP") {
    // The terminal is gone: a progress bar's write to it fails with EIO, which must not end the clean stop half-way.
    for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
  }
  if (stops > 1) {
    console.error(`\nrlft: second stop signal (${signal}), exiting now`);
    process.exit(SIGNAL_EXIT[signal]);
  }
  // A command with its own listener for this signal (rlft node: SIGTERM) got it too, after this one.
  if (process.listenerCount(signal) > 1) return;
  // A command that stops cleanly on Ctrl-C (session, launch) gets SIGTERM and SIGHUP as one.
  if (signal !== "SIGINT" && process.listenerCount("SIGINT") > 1) {
    forwarding = true;
    try {
      process.emit("SIGINT");
    } finally {
      forwarding = false;
    }
    return;
  }
  process.exit(SIGNAL_EXIT[signal]); // nobody stops cleanly: now (the exit handlers stop child learners)
}
for (const signal of Object.keys(SIGNAL_EXIT) as StopSignal[]) process.on(signal, () => onStop(signal));

try {
  await program.parseAsync(process.argv);
} catch (e) {
  const err = e as Error;
  console.error(`rlft: ${err.message}`);
  if (process.env.RLFT_DEBUG) console.error(err.stack);
  // stderr is synchronous for files, pipes and terminals on Linux and macOS (Node's process I/O notes): the message is out.
  process.exit(1);
}
