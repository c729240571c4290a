// bench/stageCache.ts (bench:recap's cache): a cached stage built with other options is rebuilt with every stage after it; matching ones stay.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { invalidateStaleStages, type Stage } from "../bench/stageCache.ts";

test("a stage built with other options is removed with the stages after it; the ones before it are kept", () => {
  const work = mkdtempSync(join(tmpdir(), "rlft-stage-"));
  try {
    const stages = (bcSteps: number, mixed: number): Stage[] => [
      { name: "demos", paths: [join(work, "demos")], key: { demos: 100 } },
      { name: "BC", paths: [join(work, "bc")], key: { bcSteps } },
      { name: "mixed", paths: [join(work, "mixed.json")], key: { mixed } },
    ];
    const build = () => {
      mkdirSync(join(work, "demos"), { recursive: true });
      mkdirSync(join(work, "bc"), { recursive: true });
      writeFileSync(join(work, "mixed.json"), "{}");
    };
    const lines: string[] = [];
    assert.deepEqual(invalidateStaleStages(work, stages(3000, 50), (l) => lines.push(l)), [], "nothing built yet");
    build();
    assert.deepEqual(invalidateStaleStages(work, stages(3000, 50), (l) => lines.push(l)), [], "same options: kept");
    assert.deepEqual(invalidateStaleStages(work, stages(6000, 50), (l) => lines.push(l)), ["BC", "mixed"]);
    assert.ok(existsSync(join(work, "demos")) && !existsSync(join(work, "bc")) && !existsSync(join(work, "mixed.json")));
    assert.match(lines.at(-1)!, /BC: \{"bcSteps":3000\}, now \{"bcSteps":6000\}\); rebuilding BC, mixed/);
    build();
    assert.deepEqual(invalidateStaleStages(work, stages(6000, 80), () => undefined), ["mixed"]);
    // BC removed by hand (to retrain) while the mixed episodes built from the old one are still there.
    build();
    rmSync(join(work, "bc"), { recursive: true });
    assert.deepEqual(invalidateStaleStages(work, stages(6000, 80), (l) => lines.push(l)), ["BC", "mixed"]);
    assert.match(lines.at(-1)!, /lacks BC, which later stages were built from; rebuilding BC, mixed/);
    assert.ok(existsSync(join(work, "demos")) && !existsSync(join(work, "mixed.json")));
    // A cache from before the keys were recorded (or with an unreadable keys file): everything is rebuilt.
    build();
    writeFileSync(join(work, "cache-keys.json"), "{not json");
    assert.deepEqual(invalidateStaleStages(work, stages(6000, 80), () => undefined), ["demos", "BC", "mixed"]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
