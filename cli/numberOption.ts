/**
 * The one parser of numeric command-line options, used by every rlft command (issue 24 item 9: `--episodes abc` ran
 * 0 episodes and reported "success 0.0%", because `Number("abc")` is NaN and `i < NaN` is false). A value is taken
 * only when the whole argument is a number of the expected kind inside its range; anything else (`abc`, `-3` for a
 * count, `1.5` for an integer, `1e999`, `0x10`, an empty string) stops the command with commander's usual
 * "option '--episodes <n>' argument 'abc' is invalid." followed by what was expected.
 */
import { InvalidArgumentError } from "commander";

/** Bounds of a numeric option; both inclusive. */
export interface NumberRange {
  min?: number;
  max?: number;
}

const INTEGER = /^[+-]?\d+$/;
// Plain decimal notation with an optional exponent; no hex, binary, octal, "Infinity" or blanks.
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function range(r: NumberRange): string {
  if (r.min !== undefined && r.max !== undefined) return ` in [${r.min}, ${r.max}]`;
  if (r.min !== undefined) return ` ≥ ${r.min}`;
  if (r.max !== undefined) return ` ≤ ${r.max}`;
  return "";
}

function check(v: string, kind: "integer" | "number", r: NumberRange): number {
  const text = v.trim();
  const ok = kind === "integer" ? INTEGER.test(text) : DECIMAL.test(text);
  const n = Number(text);
  const what = `expected ${kind === "integer" ? "an integer" : "a number"}${range(r)}`;
  if (!ok || !Number.isFinite(n) || (kind === "integer" && !Number.isSafeInteger(n))) throw new InvalidArgumentError(`${what}.`);
  if ((r.min !== undefined && n < r.min) || (r.max !== undefined && n > r.max)) throw new InvalidArgumentError(`${what}; got ${n}.`);
  return n;
}

/** Marks a parser as this module's, so cli/program.test.ts can tell every numeric option uses one of them. */
export const NUMBER_OPTION = Symbol("rlft.numberOption");

function tagged<F extends object>(f: F): F {
  return Object.assign(f, { [NUMBER_OPTION]: true });
}

/** An integer option: `.option("--episodes <n>", "...", integer({ min: 1 }), 50)`. */
export function integer(r: NumberRange = {}): (v: string) => number {
  return tagged((v: string) => check(v, "integer", r));
}

/** A real-valued option: `.option("--quality <q>", "...", decimal({ min: 0, max: 1 }), 0.7)`. */
export function decimal(r: NumberRange = {}): (v: string) => number {
  return tagged((v: string) => check(v, "number", r));
}

/** A TCP port (0 = any free port when `allowZero`). */
export function tcpPort(o: { allowZero?: boolean } = {}): (v: string) => number {
  return integer({ min: o.allowZero ? 0 : 1, max: 65535 });
}

/** A repeatable integer option (`--ids 1 2 3`), each value checked; for commander's variadic options. */
export function integerList(r: NumberRange = {}): (v: string, previous?: number[]) => number[] {
  const one = integer(r);
  return tagged((v: string, previous: number[] = []) => [...previous, one(v)]);
}
