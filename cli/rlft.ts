/**
 * The `rlft` command line. Each subcommand lives in cli/commands/ and has --help with an example.
 * Errors print one clear message (the stack trace only with RLFT_DEBUG=1) and exit 1 at once: a socket, timer or
 * child left open by the failed work never keeps the process alive (issue 24 item 7: a session hung for minutes after
 * its fatal error). Ctrl-C: a command that handles it (session, launch) gets the first one to stop cleanly; a second
 * one, or the first where no command handles it, exits at once (130, as a shell reports SIGINT). SIGTERM and SIGHUP
 * count as Ctrl-C.
 */
import { buildProgram } from "./program.ts";

const program = buildProgram();

let interrupts = 0;
process.on("SIGINT", () => {
  interrupts++;
  // This listener alone: nobody stops cleanly on Ctrl-C, so stop now. Otherwise the command's own handler got the first.
  if (process.listenerCount("SIGINT") === 1 || interrupts > 1) {
    if (interrupts > 1) console.error("\nrlft: second Ctrl-C, exiting now");
    process.exit(130);
  }
});
// SIGTERM (systemd, docker stop, kill) and SIGHUP (the terminal closed) stop as Ctrl-C does. Node's default for them
// ends the process without its exit handlers, so a learner child (its own process group, for Ctrl-C's sake) ran on,
// orphaned, holding its ports and run directory. A command that handles SIGTERM itself (rlft node) keeps it.
for (const signal of ["SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    if (process.listenerCount(signal) > 1) return;
    process.emit("SIGINT");
  });
}

try {
  await program.parseAsync(process.argv);
} catch (e) {
  const err = e as Error;
  console.error(`rlft: ${err.message}`);
  if (process.env.RLFT_DEBUG) console.error(err.stack);
  // stderr is synchronous for files, pipes and terminals on Linux and macOS (Node's process I/O notes): the message is out.
  process.exit(1);
}
