// The fault-injection suite in its short form (docs/faults.md; `npm run test:faults` runs the full sizes and writes the
// table to bench/results/). Every scenario must survive: no transition lost, no unsafe command reached the driver.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runFaultSuite } from "./faults/run.ts";
import { formatFaultTable } from "./faults/FaultScenario.ts";

test("fault-injection suite (short form): every scenario survives with nothing lost and nothing unsafe", { timeout: 600_000 }, async () => {
  const rows = await runFaultSuite({ full: false });
  console.log(formatFaultTable(rows).split("\n").map((l) => `# ${l}`).join("\n"));
  for (const r of rows) {
    assert.equal(r.survived, true, `${r.scenario}: ${r.detail}`);
    assert.equal(r.transitionsLost, 0, r.scenario);
    assert.equal(r.unsafeCommands, 0, r.scenario);
  }
});
