/**
 * The `ARROW:schema` key of a parquet file: an Arrow IPC schema message (base64), which pyarrow, pandas, polars and
 * Hugging Face `datasets` use to restore Arrow types that parquet cannot say, here `fixed_size_list<float>[n]` for
 * LeRobot's vector features (parquet stores them as plain LISTs). LeRobot's own files carry it (pyarrow writes it).
 *
 * Encoding per the Arrow columnar format spec, "Serialization and Interprocess Communication (IPC)": an encapsulated
 * message = 0xFFFFFFFF, int32 metadata length, then a FlatBuffer `Message { version: V5, header: Schema }` (format/
 * Message.fbs, format/Schema.fbs of apache/arrow), padded to 8 bytes. The FlatBuffer is laid out front to back:
 * every table/string/vector is written after the object that points at it, so all uoffsets are positive.
 */

/** The Arrow types the exporter writes. */
export type ArrowType =
  | { type: "float32" | "float64" | "int64" | "bool" | "utf8" }
  | { type: "fixed_size_list"; size: number; item: "float32" | "float64" | "int64" };

/** One column of the schema. */
export interface ArrowField {
  name: string;
  type: ArrowType;
}

type Scalar = { kind: "u8" | "bool"; value: number } | { kind: "i16"; value: number } | { kind: "i32"; value: number } | { kind: "i64"; value: bigint };
type Ref = { kind: "ref"; value: FbObject };
type Slot = Scalar | Ref | undefined;
type FbObject = { table: Slot[] } | { string: string } | { vector: FbObject[] };

const SIZE = { u8: 1, bool: 1, i16: 2, i32: 4, i64: 8, ref: 4 } as const;

/** Front-to-back FlatBuffer writer for trees of tables, strings and vectors of tables/strings. */
class FlatWriter {
  #buf = Buffer.alloc(1024);
  #len = 0;

  #ensure(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const next = Buffer.alloc(Math.max(this.#buf.length * 2, this.#len + n));
    this.#buf.copy(next, 0, 0, this.#len);
    this.#buf = next;
  }

  #pad(align: number): void {
    const n = (align - (this.#len % align)) % align;
    this.#ensure(n);
    this.#len += n;
  }

  /** The root: a uoffset at 0 to the root table. */
  finish(root: FbObject): Buffer {
    this.#len = 4;
    this.#patch(0, this.#place(root)); // placing may grow (replace) the buffer: write after
    this.#pad(8);
    return this.#buf.subarray(0, this.#len);
  }

  /** Writes `obj` at the end; returns its position (what a uoffset points at). */
  #place(obj: FbObject): number {
    if ("string" in obj) {
      const bytes = Buffer.from(obj.string, "utf8");
      this.#pad(4);
      const pos = this.#len;
      this.#ensure(4 + bytes.length + 1);
      this.#buf.writeUInt32LE(bytes.length, pos);
      bytes.copy(this.#buf, pos + 4);
      this.#buf[pos + 4 + bytes.length] = 0;
      this.#len += 4 + bytes.length + 1;
      return pos;
    }
    if ("vector" in obj) {
      this.#pad(4);
      const pos = this.#len;
      this.#ensure(4 + 4 * obj.vector.length);
      this.#buf.writeUInt32LE(obj.vector.length, pos);
      this.#len += 4 + 4 * obj.vector.length;
      obj.vector.forEach((child, i) => this.#patch(pos + 4 + 4 * i, this.#place(child)));
      return pos;
    }
    // vtable (u16 vtable size, u16 table size, u16 offset per slot), then the table: i32 soffset to the vtable, fields.
    const slots = obj.table;
    this.#pad(2);
    const vt = this.#len;
    const vtSize = 4 + 2 * slots.length;
    this.#ensure(vtSize);
    this.#len += vtSize;
    this.#pad(8);
    const start = this.#len;
    let cur = start + 4;
    const at: number[] = [];
    // Widest first keeps padding small; each field sits at a multiple of its size (FlatBuffers alignment rule).
    const order = slots.map((s, i) => i).filter((i) => slots[i]).sort((a, b) => SIZE[slots[b]!.kind] - SIZE[slots[a]!.kind]);
    for (const i of order) {
      const size = SIZE[slots[i]!.kind];
      cur += (size - (cur % size)) % size;
      at[i] = cur;
      cur += size;
    }
    this.#ensure(cur - start);
    this.#len = cur;
    this.#buf.writeUInt16LE(vtSize, vt);
    this.#buf.writeUInt16LE(cur - start, vt + 2);
    slots.forEach((_, i) => this.#buf.writeUInt16LE(at[i] === undefined ? 0 : at[i] - start, vt + 4 + 2 * i));
    this.#buf.writeInt32LE(start - vt, start);
    for (const i of order) {
      const s = slots[i]!;
      if (s.kind === "u8" || s.kind === "bool") this.#buf.writeUInt8(s.value, at[i]);
      else if (s.kind === "i16") this.#buf.writeInt16LE(s.value, at[i]);
      else if (s.kind === "i32") this.#buf.writeInt32LE(s.value, at[i]);
      else if (s.kind === "i64") this.#buf.writeBigInt64LE(s.value, at[i]);
    }
    for (const i of order) {
      const s = slots[i]!;
      if (s.kind === "ref") this.#patch(at[i], this.#place(s.value));
    }
    return start;
  }

  #patch(at: number, target: number): void {
    this.#buf.writeUInt32LE(target - at, at);
  }
}

// Enum values from Schema.fbs / Message.fbs.
const TYPE = { Int: 2, FloatingPoint: 3, Bool: 6, Utf8: 5, FixedSizeList: 16 } as const;
const PRECISION = { float32: 1, float64: 2 } as const;
const HEADER_SCHEMA = 1;
const METADATA_V5 = 4;

const ref = (value: FbObject): Ref => ({ kind: "ref", value });
const str = (s: string): Ref => ref({ string: s });

function typeTable(t: "float32" | "float64" | "int64" | "bool" | "utf8"): [number, FbObject] {
  if (t === "int64") return [TYPE.Int, { table: [{ kind: "i32", value: 64 }, { kind: "bool", value: 1 }] }];
  if (t === "bool") return [TYPE.Bool, { table: [] }];
  if (t === "utf8") return [TYPE.Utf8, { table: [] }];
  return [TYPE.FloatingPoint, { table: [{ kind: "i16", value: PRECISION[t] }] }];
}

/** Field { name, nullable, type_type, type, dictionary, children, custom_metadata }. */
function fieldTable(name: string, t: ArrowType): FbObject {
  let typeType: number;
  let type: FbObject;
  let children: FbObject[] = [];
  if (t.type === "fixed_size_list") {
    typeType = TYPE.FixedSizeList;
    type = { table: [{ kind: "i32", value: t.size }] };
    children = [fieldTable("item", { type: t.item })];
  } else [typeType, type] = typeTable(t.type);
  return { table: [str(name), { kind: "bool", value: 1 }, { kind: "u8", value: typeType }, ref(type), undefined, ref({ vector: children })] };
}

/** The base64 `ARROW:schema` value for `fields`, with `metadata` as the schema's custom metadata. */
export function arrowSchemaBase64(fields: readonly ArrowField[], metadata: Record<string, string> = {}): string {
  const kv: FbObject[] = Object.entries(metadata).map(([k, v]) => ({ table: [str(k), str(v)] }));
  // Schema { endianness: Little (0, the default: left out), fields, custom_metadata }
  const schema: FbObject = { table: [undefined, ref({ vector: fields.map((f) => fieldTable(f.name, f.type)) }), ref({ vector: kv })] };
  // Message { version, header_type, header, bodyLength }
  const message: FbObject = { table: [{ kind: "i16", value: METADATA_V5 }, { kind: "u8", value: HEADER_SCHEMA }, ref(schema), { kind: "i64", value: 0n }] };
  const fb = new FlatWriter().finish(message);
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32LE(0xffffffff, 0);
  prefix.writeInt32LE(fb.length, 4);
  return Buffer.concat([prefix, fb]).toString("base64");
}
