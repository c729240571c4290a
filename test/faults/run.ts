/**
 * `npm run test:faults`: every fault scenario at the issue's sizes (5 learner kills, a 60 s link drop, ...), the table
 * printed and written to bench/results/faults-<time>.{md,json} and faults-latest.*. Exit code 1 when one did not
 * survive. `-- --short` runs the short form (what `npm test` runs), `-- --only <substring>` one scenario.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { robotPolicyFixture } from "../robotFixture.ts";
import { FAULT_SCENARIOS } from "./scenarios.ts";
import { formatFaultTable, type FaultRow } from "./FaultScenario.ts";

/** Runs the scenarios whose name contains `only` (all by default); rows in order. */
export async function runFaultSuite(o: { full: boolean; only?: string; log?: (m: string) => void }): Promise<FaultRow[]> {
  const log = o.log ?? (() => undefined);
  const fx = await robotPolicyFixture("push_cube");
  const rows: FaultRow[] = [];
  try {
    for (const s of FAULT_SCENARIOS.filter((x) => !o.only || x.name.includes(o.only))) {
      const root = await mkdtemp(join(tmpdir(), "rlft-fault-"));
      const t0 = Date.now();
      log(`fault: ${s.name} ...`);
      try {
        rows.push(await s.run({ full: o.full, root, baseDir: fx.dir, log }));
      } catch (e) {
        rows.push({ scenario: s.name, injected: "(scenario failed to run)", survived: false, transitionsLost: -1, unsafeCommands: -1, detail: (e as Error).stack?.split("\n").slice(0, 3).join(" ") ?? String(e) });
      } finally {
        await rm(root, { recursive: true, force: true });
      }
      log(`fault: ${s.name}: ${rows.at(-1)!.survived ? "survived" : "FAILED"} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
  } finally {
    await fx.cleanup();
  }
  return rows;
}

if (process.argv[1]?.endsWith(join("faults", "run.ts"))) {
  const args = process.argv.slice(2);
  const full = !args.includes("--short");
  const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined;
  const rows = await runFaultSuite({ full, only, log: (m) => console.error(m) });
  const table = formatFaultTable(rows);
  console.log(table);
  const dir = join(import.meta.dirname, "..", "..", "bench", "results");
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replaceAll(":", "-").replace(".", "-");
  const form = `${full ? "full" : "short"} form${only ? `, only "${only}"` : ""}`;
  const md = `# Fault injection (${form}), ${new Date().toISOString()}\n\n${table}\n`;
  // A run of one scenario is dated only: faults-latest stays the whole suite's table.
  for (const name of only ? [`faults-${stamp}`] : [`faults-${stamp}`, "faults-latest"]) {
    writeFileSync(join(dir, `${name}.md`), md);
    writeFileSync(join(dir, `${name}.json`), JSON.stringify({ form: full ? "full" : "short", only: only ?? null, rows }, null, 2));
  }
  process.exitCode = rows.every((r) => r.survived) ? 0 : 1;
}
