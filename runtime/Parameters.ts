/**
 * Node parameters: declared with a default, overridable at node creation (launch files).
 * An override of the wrong type is an error that names the node, the parameter and both types.
 */
import type { ParamValue } from "./Runtime.ts";

/** "number", "string", "boolean", "number[]", "string[]" (empty arrays match either array kind). */
export function paramKind(v: unknown): string {
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x === "number")) return v.length === 0 ? "array" : "number[]";
    if (v.every((x) => typeof x === "string")) return "string[]";
    return "mixed array";
  }
  return typeof v;
}

function sameKind(declared: unknown, override: unknown): boolean {
  const a = paramKind(declared);
  const b = paramKind(override);
  if (a === b) return true;
  if (a === "array") return b === "number[]" || b === "string[]";
  if (b === "array") return a === "number[]" || a === "string[]";
  return false;
}

/** The parameters of one node. */
export class ParameterStore {
  #values = new Map<string, ParamValue>();

  constructor(
    readonly nodeName: string,
    readonly overrides: Readonly<Record<string, ParamValue>> = {},
  ) {}

  /** Declares `name` with a default; an override replaces it if its type matches. */
  declare<V extends ParamValue>(name: string, defaultValue: V): V {
    if (this.#values.has(name)) {
      throw new Error(`Parameter "${name}" of node "${this.nodeName}" is already declared`);
    }
    const kind = paramKind(defaultValue);
    if (!["number", "string", "boolean", "number[]", "string[]", "array"].includes(kind)) {
      throw new Error(`Parameter "${name}" of node "${this.nodeName}": default must be a number, string, boolean, number[] or string[], got ${kind}`);
    }
    let value: ParamValue = defaultValue;
    if (Object.hasOwn(this.overrides, name)) {
      const o = this.overrides[name]!;
      if (!sameKind(defaultValue, o)) {
        throw new Error(
          `Parameter "${name}" of node "${this.nodeName}" is a ${kind} (default ${JSON.stringify(defaultValue)}), ` +
            `but the override is ${JSON.stringify(o)} (${paramKind(o)}): fix the value in the launch file`,
        );
      }
      value = o;
    }
    this.#values.set(name, value);
    return value as V;
  }

  /** The value of a declared parameter. */
  get<V extends ParamValue>(name: string): V {
    if (!this.#values.has(name)) {
      throw new Error(`Parameter "${name}" of node "${this.nodeName}" is not declared: call declareParameter("${name}", default) first`);
    }
    return this.#values.get(name) as V;
  }

  /** Overrides that no declared parameter used (likely typos in a launch file). */
  unused(): string[] {
    return Object.keys(this.overrides).filter((k) => !this.#values.has(k));
  }
}
