/**
 * docs/security.md stays true to the repository: its "Attacks tried" table names exactly the attack rows of
 * `npm run test:faults` (rows "attack: …" and "learner: …" of test/faults/), every fault row it quotes exists, and
 * every repository path and learner symbol (`transport.security.bind_checked`) it cites is still where it says.
 * A file moved or a row renamed fails here instead of leaving the security document pointing at nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { basename, join, normalize } from "node:path";
import { FAULT_SCENARIOS } from "./faults/scenarios.ts";

const root = join(import.meta.dirname, "..");
const doc = readFileSync(join(root, "docs", "security.md"), "utf8");
const tracked = new Set(execFileSync("git", ["ls-files"], { cwd: root, encoding: "utf8" }).split("\n").filter(Boolean));
const trackedDirs = new Set([...tracked].flatMap((f) => f.split("/").slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join("/"))));
const topDirs = new Set([...tracked].filter((f) => f.includes("/")).map((f) => f.split("/")[0]));
const basenames = new Set([...tracked].map((f) => basename(f)));

/** Names of the fault rows that are attacks (issue 24): robot side "attack: …", learner side "learner: …". */
const attackRows = FAULT_SCENARIOS.map((s) => s.name).filter((n) => n.startsWith("attack: ") || n.startsWith("learner: "));

/** The "Attacks tried" section up to the next heading. */
function attacksSection(): string {
  const start = doc.indexOf("## Attacks tried");
  assert.ok(start >= 0, 'docs/security.md has no "## Attacks tried" section');
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** Row names quoted after "row" / "rows" ("row \"a\"", "rows \"a\", \"b\""); placeholders ending in "…" are skipped. */
function quotedRows(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\brows?\s+((?:"[^"]+"(?:,?\s+and\s+|,\s*)?)+)/g)) {
    for (const q of m[1].matchAll(/"([^"]+)"/g)) if (!q[1].endsWith("…")) out.push(q[1].replace(/\s+/g, " "));
  }
  return out;
}

/** Every `code` span and markdown link target in the document. */
function citedTokens(): string[] {
  const spans = [...doc.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
  const links = [...doc.matchAll(/\]\(([^)\s#]+)[^)]*\)/g)].map((m) => normalize(join("docs", m[1])));
  return [...spans, ...links];
}

test("every attack row of npm run test:faults is in docs/security.md's table of attacks, and every row it names exists", () => {
  assert.ok(attackRows.length >= 20, `expected the issue-24 attack rows, found ${attackRows.length}`);
  const table = attacksSection().split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| #") && !l.startsWith("|---"));
  assert.ok(table.length > 0, "no table rows in Attacks tried");
  const inTable = new Set(table.flatMap((l) => quotedRows(l)));
  const missing = attackRows.filter((n) => !inTable.has(n));
  assert.deepEqual(missing, [], `fault rows without a line in docs/security.md's "Attacks tried" table: ${JSON.stringify(missing)}`);
  const unknownInTable = [...inTable].filter((n) => !attackRows.includes(n));
  assert.deepEqual(unknownInTable, [], `the "Attacks tried" table names rows that are no attack row of test/faults/: ${JSON.stringify(unknownInTable)}`);
  // Anywhere else in the document a quoted fault row must exist too (attack or not: "bad policy packages").
  const all = FAULT_SCENARIOS.map((s) => s.name);
  const unknown = quotedRows(doc).filter((n) => !all.includes(n));
  assert.deepEqual(unknown, [], `docs/security.md quotes fault rows that test/faults/ does not have: ${JSON.stringify(unknown)}`);
});

test("every repository path docs/security.md cites exists (git ls-files)", () => {
  const stale: string[] = [];
  for (const raw of citedTokens()) {
    const t = raw.replace(/^\.\//, "").replace(/\/$/, "");
    if (/[<>{}*…#\s]/.test(t) || t.startsWith("/") || t.includes("://")) continue;
    if (t.includes("/")) {
      // A path when it starts in a tracked top-level folder (topic names like rlft/sim-0/cmd do not).
      if (!topDirs.has(t.split("/")[0])) continue;
      if (!tracked.has(t) && !trackedDirs.has(t)) stale.push(raw);
    } else if (/\.(ts|py|mjs)$/.test(t) && !basenames.has(t)) {
      stale.push(raw);
    }
  }
  assert.deepEqual(stale, [], `docs/security.md cites paths that are not in the repository: ${JSON.stringify(stale)}`);
});

test("every learner symbol docs/security.md cites (module.name) is defined in that module", () => {
  // Top-level names each learner module defines (def, class, assignment).
  const defined = new Map<string, Set<string>>();
  for (const f of [...tracked].filter((f) => f.startsWith("learner/rlft_learner/") && f.endsWith(".py"))) {
    const names = readFileSync(join(root, f), "utf8").matchAll(/^(?:def |class )?([A-Za-z_]\w*)\b\s*[(:=]|^(?:def|class) ([A-Za-z_]\w*)/gm);
    defined.set(f, new Set([...names].map((m) => m[1] ?? m[2])));
  }
  const learnerNames = new Set([...defined.values()].flatMap((names) => [...names]));
  const stale: string[] = [];
  for (const t of citedTokens()) {
    // `module.name` whose name is defined somewhere in the learner (finite.StepGuard, options.allow): a learner symbol,
    // named by its module path under learner/rlft_learner/ (transport.security.bind_checked).
    const m = /^([a-z_]+(?:\.[a-z_]+)*)\.([A-Za-z_]\w*)$/.exec(t);
    if (!m || !learnerNames.has(m[2])) continue;
    const mod = `learner/rlft_learner/${m[1].replaceAll(".", "/")}`;
    const file = [`${mod}.py`, `${mod}/__init__.py`].find((f) => tracked.has(f));
    if (!file || !defined.get(file)!.has(m[2])) stale.push(`${t} (expected ${mod}.py to define ${m[2]})`);
  }
  assert.deepEqual(stale, [], `docs/security.md names learner symbols that are not where it says: ${JSON.stringify(stale)}`);
});
