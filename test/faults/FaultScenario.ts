/**
 * The fault-injection suite's shape (docs/faults.md): each scenario injects one fault into a running sim stack (with the
 * real learner where the fault involves it) and returns one row of the table. `full` selects the sizes (×5
 * restarts, a 60 s link drop in wall time, ...); the short form run by `npm test` keeps the same checks on smaller
 * budgets. New scenarios are added to FAULT_SCENARIOS in scenarios.ts.
 */

/** One row of the fault table. */
export interface FaultRow {
  scenario: string;
  /** What was injected, in numbers ("5 × SIGKILL", "60 s SIGSTOP"). */
  injected: string;
  survived: boolean;
  /** Transitions produced by the robot that the learner does not hold at the end. */
  transitionsLost: number;
  /** Commands that reached the driver non-finite, outside the joint limits or beyond the step limit. */
  unsafeCommands: number;
  /** Measured numbers and why `survived` is what it is. */
  detail: string;
}

/** What every scenario gets. */
export interface FaultContext {
  full: boolean;
  /** A fresh directory for this scenario. */
  root: string;
  /** A robot-compatible BC package exported by the learner (the robot's and the learner's base). */
  baseDir: string;
  log(msg: string): void;
}

/** One scenario of the suite. */
export interface FaultScenario {
  name: string;
  run(ctx: FaultContext): Promise<FaultRow>;
}

/** The table as markdown. */
export function formatFaultTable(rows: readonly FaultRow[]): string {
  const head = "| scenario | injected | survived | transitions lost | unsafe commands | detail |\n|---|---|---|---|---|---|";
  const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");
  const lines = rows.map((r) => `| ${cell(r.scenario)} | ${cell(r.injected)} | ${r.survived ? "yes" : "**NO**"} | ${r.transitionsLost} | ${r.unsafeCommands} | ${cell(r.detail)} |`);
  return [head, ...lines].join("\n");
}
