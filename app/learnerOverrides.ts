/** Learner settings from the command line and preset files, for the commands and benches that start a learner. */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";

/** Parses `key=value` learner overrides (numbers and booleans typed). */
export function parseOverrides(pairs: readonly string[] | undefined, flag: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of pairs ?? []) {
    const i = kv.indexOf("=");
    if (i <= 0) throw new Error(`${flag}: expected key=value, got '${kv}'`);
    const [k, v] = [kv.slice(0, i), kv.slice(i + 1)];
    out[k] = v === "true" ? true : v === "false" ? false : Number.isFinite(Number(v)) && v !== "" ? Number(v) : v;
  }
  return out;
}

/**
 * The learner config a session starts its learner with: the YAML mapping in `file` (e.g. learner/presets/<task>.yaml,
 * the settings bench:learning measured), then each `key=value` of --learner-set on top. Throws naming the file or the
 * flag on a missing file, a non-mapping or a malformed pair; the learner itself checks the keys and values.
 */
export function learnerOverrides(file: string | undefined, sets: readonly string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      throw new Error(`--learner-config ${file}: cannot read it (${(e as Error).message}); the presets are in learner/presets/`);
    }
    let doc: unknown;
    try {
      doc = parseYaml(text);
    } catch (e) {
      throw new Error(`--learner-config ${file}: not valid YAML (${(e as Error).message.split("\n")[0]})`);
    }
    if (doc !== null && doc !== undefined && (typeof doc !== "object" || Array.isArray(doc))) {
      throw new Error(`--learner-config ${file}: expected a mapping of learner config keys (python3 -m rlft_learner serve --help lists them), found ${Array.isArray(doc) ? "a list" : typeof doc}`);
    }
    Object.assign(out, doc ?? {});
  }
  return { ...out, ...parseOverrides(sets, "--learner-set") };
}

/** Learner config values as command-line flags (`key_name: v` → `--key-name v`, booleans as `--x` / `--no-x`). */
export function learnerFlags(values: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(values)) {
    const flag = `--${k.replace(/_/g, "-")}`;
    if (typeof v === "boolean") out.push(v ? flag : `--no-${k.replace(/_/g, "-")}`);
    else out.push(flag, String(v));
  }
  return out;
}
