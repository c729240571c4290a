/**
 * Cached benchmark stages (demos → BC → mixed episodes …) that remember the options they were built with. A stage
 * built with other options than now is removed together with every stage after it (which were built from it), so a
 * rerun with other flags never silently compares against a stale cache; stages built with the same options are kept.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** One cached stage: its files or folders and the options that decide its contents (JSON-comparable). */
export interface Stage {
  name: string;
  paths: string[];
  key: unknown;
}

/** Removes the first stage whose recorded key differs from `stages[i].key` and all after it, records the keys in
 * `<work>/cache-keys.json`; returns the names removed (empty when the cache matches or nothing was built yet). */
export function invalidateStaleStages(work: string, stages: Stage[], log: (line: string) => void = console.log): string[] {
  const keysFile = join(work, "cache-keys.json");
  let had: Record<string, unknown> = {};
  if (existsSync(keysFile)) {
    try {
      had = JSON.parse(readFileSync(keysFile, "utf8")) as Record<string, unknown>;
    } catch {
      had = {}; // unreadable: treat every stage as built with unknown options
    }
  }
  const exists = stages.map((st) => st.paths.some((p) => existsSync(p)));
  const built = exists.some(Boolean);
  const changed = stages.findIndex((st) => JSON.stringify(had[st.name]) !== JSON.stringify(st.key));
  // A stage removed by hand (say bc/, to retrain) while a later one is still there: the later one was built from the old.
  const gone = exists.findIndex((e, i) => !e && exists.slice(i + 1).some(Boolean));
  const first = [changed, gone].filter((i) => i >= 0).reduce((a, b) => Math.min(a, b), Infinity);
  const removed: string[] = [];
  if (Number.isFinite(first) && built) {
    const st = stages[first];
    const why = first === changed ? `was built with other options (${st.name}: ${JSON.stringify(had[st.name] ?? "unknown")}, now ${JSON.stringify(st.key)})` : `lacks ${st.name}, which later stages were built from`;
    log(`the cache in ${work} ${why}; rebuilding ${stages.slice(first).map((s) => s.name).join(", ")}`);
    for (const s of stages.slice(first)) {
      for (const p of s.paths) rmSync(p, { recursive: true, force: true });
      removed.push(s.name);
    }
  }
  writeFileSync(keysFile, JSON.stringify(Object.fromEntries(stages.map((s) => [s.name, s.key])), null, 2));
  return removed;
}
