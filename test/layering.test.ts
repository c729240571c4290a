/**
 * Which folder may import which (issue 25, "Where things live"), checked over every TypeScript/JavaScript file that
 * git tracks: static imports, re-exports and dynamic import() of relative paths.
 * - Nothing outside cli/ imports cli/: only the public front door (bin/) and tests of the CLI itself do.
 * - hardware/ imports neither launch/ nor nodes/ (drivers are usable without the stack).
 * - data/, web/, telemetry/ and hardware/ import contracts/, not nodes/.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const ROOT = join(import.meta.dirname, "..");

/** A rule: files under `from` must not import files under any of `to`, unless `allow` says the file may. */
interface Rule {
  from: (file: string) => boolean;
  to: string[];
  why: string;
  allow?: (file: string) => boolean;
}

const under = (...dirs: string[]) => (f: string) => dirs.some((d) => f.startsWith(`${d}/`));
/** Tests of the CLI itself (they drive it as a user does). */
const cliTest = (f: string) => /^test\/[^/]*cli[^/]*\.test\.ts$/i.test(f);

const RULES: Rule[] = [
  { from: (f) => !f.startsWith("cli/"), to: ["cli"], why: "nothing outside cli/ imports cli/ (go through app/ or the public bin/rlft.js)", allow: (f) => f.startsWith("bin/") || cliTest(f) },
  { from: under("hardware"), to: ["launch", "nodes"], why: "hardware/ imports neither launch/ nor nodes/ (shared types live in contracts/)" },
  { from: under("data", "web", "telemetry"), to: ["nodes"], why: "data/, web/ and telemetry/ import contracts/, not nodes/" },
];

const SPEC = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;

/** The relative import specifiers of a source text. */
function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(SPEC)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (spec?.startsWith(".")) out.push(spec);
  }
  return out;
}

/** Every broken rule in `files` (path relative to the repo → its source text), one line each. */
function violations(files: Map<string, string>, rules: Rule[] = RULES): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    for (const spec of importsOf(text)) {
      const target = normalize(join(dirname(file), spec)).split("\\").join("/");
      const top = target.split("/")[0];
      for (const r of rules) {
        if (r.from(file) && r.to.includes(top) && !r.allow?.(file)) out.push(`${file} imports ${target}: ${r.why}`);
      }
    }
  }
  return out;
}

test("the checker sees static, type-only and dynamic imports", () => {
  const files = new Map([
    ["hardware/x.ts", 'import { a } from "../launch/a.ts";\nimport type { B } from "../nodes/B.ts";\nconst c = await import("../cli/c.ts");\nexport { d } from "../contracts/d.ts";'],
    ["web/y.ts", 'import "../nodes/side.ts";'],
    ["bin/rlft.js", 'await import("../cli/rlft.ts");'],
    ["test/cli.test.ts", 'import { run } from "../cli/run.ts";'],
    ["bench/z.ts", 'import { run } from "../cli/run.ts";'],
  ]);
  assert.deepEqual(
    violations(files).map((v) => v.split(":")[0]),
    ["hardware/x.ts imports launch/a.ts", "hardware/x.ts imports nodes/B.ts", "hardware/x.ts imports cli/c.ts", "web/y.ts imports nodes/side.ts", "bench/z.ts imports cli/run.ts"],
  );
});

test("no file imports across the folder rules", () => {
  const tracked = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "*.ts", "*.mts", "*.js", "*.mjs"], { cwd: ROOT, encoding: "utf8" })
    .split("\n")
    // This file's own fixtures above are imports only in a string.
    .filter((f) => f && !f.startsWith("node_modules/") && !f.startsWith("learner/") && f !== "test/layering.test.ts");
  assert.ok(tracked.length > 100, `only ${tracked.length} source files found under ${ROOT}`);
  const files = new Map<string, string>();
  for (const f of tracked) {
    try {
      files.set(relative(ROOT, join(ROOT, f)), readFileSync(join(ROOT, f), "utf8"));
    } catch {
      // deleted in the work tree but still in the index
    }
  }
  assert.deepEqual(violations(files), []);
});
