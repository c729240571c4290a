import { resolve } from "node:path";

/** Tiny argument reader shared by the bench scripts (`npm run bench:* -- --key value --flag`). */
export interface BenchArgs {
  /** True when `--name` is present. */
  flag(name: string): boolean;
  /** The value after `--name`, or `dflt`. */
  arg(name: string, dflt: string): string;
  /** Every value given after a repeated `--name`. */
  args(name: string): string[];
  /** The value after `--name` as a finite number, or `dflt`; anything else is an error naming the flag. */
  num(name: string, dflt: number): number;
}

/** Reads `argv` (default: this process's arguments after the script). */
export function benchArgs(argv: string[] = process.argv.slice(2)): BenchArgs {
  const arg = (name: string, dflt: string) => {
    const i = argv.indexOf(name);
    return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
  };
  return {
    flag: (name) => argv.includes(name),
    arg,
    args: (name) => argv.flatMap((a, i) => (a === name && i + 1 < argv.length ? [argv[i + 1]] : [])),
    num: (name, dflt) => {
      const v = Number(arg(name, String(dflt)));
      if (!Number.isFinite(v)) throw new Error(`${name}: expected a number, got ${arg(name, "")}`);
      return v;
    },
  };
}

/**
 * A bench result as JSON text whose paths under the repository are written relative to its root (bench/work/...),
 * so a tracked `*-latest.json` names no directory of the machine that ran it.
 */
export function resultJson(value: unknown): string {
  const root = JSON.stringify(`${resolve(import.meta.dirname, "..")}/`).slice(1, -1); // as it appears inside JSON strings
  return JSON.stringify(value, null, 2).replaceAll(root, "");
}
