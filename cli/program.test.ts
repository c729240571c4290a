/**
 * Every numeric option of every rlft command goes through the one strict parser (cli/numberOption.ts), and the real
 * CLI refuses `--episodes abc`, `-3`, `1.5` with one clear message instead of running 0 episodes (issue 24 item 9).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InvalidArgumentError, type Command, type Option } from "commander";
import { buildProgram } from "./program.ts";
import { decimal, integer, NUMBER_OPTION, tcpPort } from "./numberOption.ts";

/** Every command, nested ones included (`calibrate intrinsics`), with its path. */
function commands(c: Command, path: string[] = []): { path: string; command: Command }[] {
  return c.commands.flatMap((sub) => [{ path: [...path, sub.name()].join(" "), command: sub }, ...commands(sub, [...path, sub.name()])]);
}

// Value placeholders that always stand for a number in rlft's help texts.
const NUMERIC_PLACEHOLDER = /<(n|q|s|beta|rad|ticks|bps)>|^--[a-z-]*port <port>/;

test("every numeric option of every command uses the shared strict parser", () => {
  const numeric: string[] = [];
  for (const { path, command } of commands(buildProgram())) {
    for (const o of command.options as (Option & { parseArg?: unknown })[]) {
      const tagged = typeof o.parseArg === "function" && (o.parseArg as unknown as Record<symbol, unknown>)[NUMBER_OPTION] === true;
      const looksNumeric = typeof o.defaultValue === "number" || (NUMERIC_PLACEHOLDER.test(o.flags) && !/leader-port/.test(o.flags));
      if (looksNumeric) assert.ok(tagged, `rlft ${path} ${o.flags}: parse it with cli/numberOption.ts (integer / decimal / tcpPort)`);
      if (!tagged) continue;
      numeric.push(`${path} ${o.long}`);
      const parse = o.parseArg as (v: string, prev?: unknown) => unknown;
      for (const bad of ["abc", "", "1e999", "NaN", "Infinity", "0x10", "3 4"]) assert.throws(() => parse(bad, undefined), InvalidArgumentError, `rlft ${path} ${o.flags} took ${JSON.stringify(bad)}`);
    }
  }
  for (const must of ["collect --episodes", "eval --episodes", "launch --episodes", "session --episodes", "session --seed", "session --ui-port", "recap --iterations", "demo --online-episodes", "train-vla --steps", "train-bc --steps"]) {
    assert.ok(numeric.includes(must), `${must} is parsed strictly (found: ${numeric.join(", ")})`);
  }
});

test("the parsers: whole numbers of the right kind, inside their range", () => {
  assert.equal(integer({ min: 1 })("50"), 50);
  assert.equal(integer({ min: 0 })(" 7 "), 7);
  for (const bad of ["-3", "0", "1.5", "1e2", "abc", "9007199254740993"]) assert.throws(() => integer({ min: 1 })(bad), InvalidArgumentError, bad);
  assert.throws(() => integer({ min: 1 })("-3"), /expected an integer ≥ 1; got -3/);
  assert.equal(decimal({ min: 0, max: 1 })("0.25"), 0.25);
  assert.equal(decimal({ min: 0, max: 1 })(".5"), 0.5);
  assert.equal(decimal({ min: 0 })("1e-3"), 0.001);
  assert.throws(() => decimal({ min: 0, max: 1 })("1.5"), /expected a number in \[0, 1\]; got 1\.5/);
  assert.equal(tcpPort({ allowZero: true })("0"), 0);
  assert.throws(() => tcpPort()("0"));
  assert.throws(() => tcpPort()("70000"));
});

test("rlft collect --episodes abc | -3 | 1.5 stops with one clear error and runs nothing", () => {
  const dir = mkdtempSync(join(tmpdir(), "rlft-args-"));
  try {
    for (const bad of ["abc", "-3", "1.5"]) {
      const out = join(dir, `out-${bad}`);
      const r = spawnSync(process.execPath, [join(import.meta.dirname, "..", "bin", "rlft.js"), "collect", "--episodes", bad, "--out", out, "--no-camera"], { encoding: "utf8", timeout: 120_000 });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`option '--episodes <n>' argument '${bad.replace(".", "\\.")}' is invalid\\. expected an integer ≥ 1`));
      assert.doesNotMatch(r.stdout, /success rate/);
      assert.equal(existsSync(out), false, "nothing was recorded");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("rlft train-vla --cameras with something that is not a camera name stops with the fix before any dataset is written", () => {
  const dir = mkdtempSync(join(tmpdir(), "rlft-args-"));
  try {
    for (const bad of ["front;rm -rf", ",", "../wrist"]) {
      const out = join(dir, "vla");
      const r = spawnSync(process.execPath, [join(import.meta.dirname, "..", "bin", "rlft.js"), "train-vla", "--data", dir, "--out", out, "--cameras", bad], { encoding: "utf8", timeout: 120_000 });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /--cameras .*: give camera names \(letters, digits, _\) separated by commas, e\.g\. --cameras front,wrist/);
      assert.equal(existsSync(out), false, "nothing was written");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
