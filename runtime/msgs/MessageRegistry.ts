/**
 * Message registry: every message type a node may publish, parsed once from `.msg` text.
 * Sources: the standard ROS 2 (Jazzy) definitions of @foxglove/rosmsg-msgs-common and our own
 * interface package `interfaces/rlft_interfaces/msg/*.msg`. Gives CDR encode/decode and the
 * `ros2msg` schema text that MCAP files and `ros2 bag` carry.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { parse } from "@foxglove/rosmsg";
import { ros2jazzy } from "@foxglove/rosmsg-msgs-common";
import { MessageReader, MessageWriter } from "@foxglove/rosmsg2-serialization";
import {
  definitionToMsgText,
  directDependencies,
  completeDefinition,
  ros2TypeName,
  shortTypeName,
  type MessageDefinition,
} from "./ros2msgText.ts";

/** Thrown for a type name the registry does not know. `code` is stable for callers. */
export class UnknownMessageTypeError extends Error {
  readonly code = "RLFT_UNKNOWN_MESSAGE_TYPE";
  constructor(readonly type: string, known: string[]) {
    const ours = known.filter((t) => t.startsWith("rlft_interfaces/"));
    super(
      `Unknown message type "${type}": expected a standard ROS 2 type such as sensor_msgs/JointState ` +
        `or one of ours (${ours.join(", ")}); add new types as .msg files in interfaces/rlft_interfaces/msg/`,
    );
    this.name = "UnknownMessageTypeError";
  }
}

/** Where our interface package lives in the repo. */
export const RLFT_INTERFACES_DIR = fileURLToPath(new URL("../../interfaces/rlft_interfaces/msg/", import.meta.url));

/** Typed arrays the CDR reader returns for numeric arrays; we hand out plain arrays except for bytes. */
function plainArrays(value: unknown): unknown {
  if (value instanceof Uint8Array || value instanceof Int8Array) return value;
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number | bigint>);
  if (Array.isArray(value)) return value.map(plainArrays);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = plainArrays(v);
    return out;
  }
  return value;
}

/** Every message type we can encode, decode and describe. */
export class MessageRegistry {
  static #default: MessageRegistry | undefined;
  #defs = new Map<string, MessageDefinition>();
  #texts = new Map<string, string>();
  #writers = new Map<string, MessageWriter>();
  #readers = new Map<string, MessageReader>();

  /** The shared registry: standard ROS 2 Jazzy types + interfaces/rlft_interfaces. */
  static default(): MessageRegistry {
    if (!MessageRegistry.#default) {
      const reg = new MessageRegistry();
      reg.addStandardRos2();
      reg.addMsgDir("rlft_interfaces", RLFT_INTERFACES_DIR);
      MessageRegistry.#default = reg;
    }
    return MessageRegistry.#default;
  }

  /** Adds the standard definitions (their text is regenerated from the parsed form). */
  addStandardRos2(): void {
    for (const [name, def] of Object.entries(ros2jazzy)) {
      const type = shortTypeName(name);
      this.#defs.set(type, { ...def, name: type });
      this.#texts.set(type, definitionToMsgText(def));
    }
  }

  /** Adds every `X.msg` of a directory as `pkg/X`, keeping the file text (comments included) for schemas. */
  addMsgDir(pkg: string, dir: string): void {
    for (const file of readdirSync(dir).sort()) {
      if (!file.endsWith(".msg")) continue;
      this.addMsgText(`${pkg}/${file.slice(0, -4)}`, readFileSync(join(dir, file), "utf8"));
    }
  }

  /** Adds one type from its `.msg` text. Types without a package refer to the same package. */
  addMsgText(type: string, text: string): void {
    const name = shortTypeName(type);
    const pkg = name.split("/")[0];
    let parsed: MessageDefinition[];
    try {
      parsed = parse(text, { ros2: true, skipTypeFixup: true });
    } catch (err) {
      throw new Error(`Cannot parse the .msg text of ${name}: ${(err as Error).message}`, { cause: err });
    }
    const def = parsed[0];
    if (!def) throw new Error(`The .msg text of ${name} has no fields`);
    const definitions = def.definitions.map((f) =>
      f.isComplex ? { ...f, type: f.type.includes("/") ? shortTypeName(f.type) : `${pkg}/${f.type}` } : f,
    );
    this.#defs.set(name, { name, definitions });
    this.#texts.set(name, text);
    this.#writers.delete(name);
    this.#readers.delete(name);
  }

  /** All known type names ("pkg/Type"), sorted. */
  types(): string[] {
    return [...this.#defs.keys()].sort();
  }

  /** True when `type` ("pkg/Type" or "pkg/msg/Type") is known. */
  has(type: string): boolean {
    return this.#defs.has(shortTypeName(type));
  }

  /** Throws UnknownMessageTypeError unless `type` is known; returns the canonical "pkg/Type" name. */
  assertKnown(type: string): string {
    const name = shortTypeName(type);
    if (!this.#defs.has(name)) throw new UnknownMessageTypeError(type, this.types());
    return name;
  }

  /** The parsed definition of one type (fields only, dependencies not included). */
  definition(type: string): MessageDefinition {
    return this.#defs.get(this.assertKnown(type))!;
  }

  /** Every type `type` depends on, depth-first in field order, each once. */
  dependencies(type: string): string[] {
    const root = this.assertKnown(type);
    const seen: string[] = [];
    const visit = (t: string): void => {
      for (const dep of directDependencies(this.definition(t))) {
        if (dep === root || seen.includes(dep)) continue;
        seen.push(dep);
        visit(dep);
      }
    };
    visit(root);
    return seen;
  }

  /** The type's own `.msg` text. */
  msgText(type: string): string {
    return this.#texts.get(this.assertKnown(type))!;
  }

  /** The MCAP / `ros2 bag` schema name: "sensor_msgs/msg/JointState". */
  schemaName(type: string): string {
    return ros2TypeName(this.assertKnown(type));
  }

  /** The complete `ros2msg` definition: own text, then each dependency after a delimiter and `MSG:` line. */
  schemaText(type: string): string {
    const name = this.assertKnown(type);
    return completeDefinition(
      name,
      (t) => this.msgText(t),
      (t) => directDependencies(this.definition(t)),
    );
  }

  /** Root definition first, then its dependencies: what MessageWriter/MessageReader expect. */
  definitionsFor(type: string): MessageDefinition[] {
    const name = this.assertKnown(type);
    return [this.definition(name), ...this.dependencies(name).map((d) => this.definition(d))];
  }

  /** CDR-encodes a plain message object (missing fields get ROS 2 defaults). */
  encode(type: string, msg: unknown): Uint8Array {
    const name = this.assertKnown(type);
    let w = this.#writers.get(name);
    if (!w) {
      w = new MessageWriter(this.definitionsFor(name));
      this.#writers.set(name, w);
    }
    try {
      return w.writeMessage(msg);
    } catch (err) {
      throw new Error(`Cannot encode a ${name} message: ${(err as Error).message}`, { cause: err });
    }
  }

  /**
   * Decodes CDR bytes to a plain object: numeric arrays become plain arrays (uint8/int8 arrays
   * stay Uint8Array/Int8Array), int64/uint64 are bigint, time is {sec, nanosec}.
   */
  decode<T = Record<string, unknown>>(type: string, bytes: ArrayBufferView): T {
    const name = this.assertKnown(type);
    let r = this.#readers.get(name);
    if (!r) {
      r = new MessageReader(this.definitionsFor(name));
      this.#readers.set(name, r);
    }
    try {
      return plainArrays(r.readMessage(bytes)) as T;
    } catch (err) {
      throw new Error(`Cannot decode a ${name} message (${bytes.byteLength} bytes): ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
}

export { plainArrays };
