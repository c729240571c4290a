/**
 * Parquet tables of a LeRobot dataset, written with hyparquet-writer the way pyarrow writes LeRobot's: vector
 * features as parquet LISTs (group LIST > repeated `list` > `element`) declared `fixed_size_list<float>[n]` in the
 * `ARROW:schema` key, and the Hugging Face `datasets` features in the `huggingface` key, so `datasets`, pyarrow and
 * pandas read the same column types from rlft's files as from LeRobot's. Episodes go in as row groups.
 */
import { ParquetWriter, fileWriter } from "hyparquet-writer";
import { arrowSchemaBase64, type ArrowField } from "./arrowSchema.ts";

/** A frame column: a scalar, or a fixed-length vector when `length` is set. */
export interface FrameColumn {
  name: string;
  dtype: "float32" | "int64" | "bool";
  length?: number;
}

/** A metadata column: `depth` levels of lists around a leaf. */
export interface MetaColumn {
  name: string;
  leaf: "INT64" | "DOUBLE" | "BOOLEAN" | "STRING";
  depth: number;
}

type SchemaElement = Record<string, unknown>;

const PHYSICAL = { float32: "FLOAT", int64: "INT64", bool: "BOOLEAN" } as const;

/** Elements of an optional column with `depth` list levels (parquet LogicalTypes.md, "Lists": 3-level form). */
function columnElements(name: string, leaf: SchemaElement, depth: number): SchemaElement[] {
  const out: SchemaElement[] = [];
  for (let d = 0; d < depth; d++) {
    out.push({ name: d === 0 ? name : "element", repetition_type: "OPTIONAL", num_children: 1, converted_type: "LIST" }, { name: "list", repetition_type: "REPEATED", num_children: 1 });
  }
  out.push({ ...leaf, name: depth === 0 ? name : "element", repetition_type: "OPTIONAL" });
  return out;
}

/**
 * The `datasets` feature of a column (datasets/features/features.py): datasets 4 (LeRobot 0.4, v3.0) names a
 * fixed-length list `List`, datasets 2–3 (LeRobot 0.1–0.3, v2.1) `Sequence`.
 */
function hfFeature(c: FrameColumn, flavor: "List" | "Sequence"): Record<string, unknown> {
  const value = { dtype: c.dtype, _type: "Value" };
  return c.length === undefined ? value : { feature: value, length: c.length, _type: flavor };
}

/** One parquet file being written, one `write` per row group. */
export class ParquetTable {
  readonly #writer: ReturnType<typeof fileWriter>;
  readonly #pq: ParquetWriter;
  readonly names: string[];
  rows = 0;

  private constructor(path: string, schema: SchemaElement[], names: string[], kv: { key: string; value: string }[]) {
    this.#writer = fileWriter(path);
    this.#pq = new ParquetWriter({ writer: this.#writer, schema: schema as never, kvMetadata: kv, createdBy: "rlft (hyparquet-writer)" });
    this.names = names;
  }

  /** A frame table (data/): the columns in order, with ARROW:schema and huggingface metadata. */
  static frames(path: string, columns: readonly FrameColumn[], flavor: "List" | "Sequence"): ParquetTable {
    const schema: SchemaElement[] = [{ name: "root", num_children: columns.length }];
    const arrow: ArrowField[] = [];
    const hf: Record<string, unknown> = {};
    for (const c of columns) {
      schema.push(...columnElements(c.name, { type: PHYSICAL[c.dtype] }, c.length === undefined ? 0 : 1));
      arrow.push({ name: c.name, type: c.length === undefined ? { type: c.dtype } : { type: "fixed_size_list", size: c.length, item: c.dtype === "bool" ? "int64" : c.dtype } });
      hf[c.name] = hfFeature(c, flavor);
    }
    const huggingface = JSON.stringify({ info: { features: hf } });
    return new ParquetTable(path, schema, columns.map((c) => c.name), [
      { key: "huggingface", value: huggingface },
      { key: "ARROW:schema", value: arrowSchemaBase64(arrow, { huggingface }) },
    ]);
  }

  /** A metadata table (meta/episodes, meta/tasks): plain parquet types, optional extra key-value metadata. */
  static meta(path: string, columns: readonly MetaColumn[], kv: { key: string; value: string }[] = []): ParquetTable {
    const schema: SchemaElement[] = [{ name: "root", num_children: columns.length }];
    for (const c of columns) {
      const leaf = c.leaf === "STRING" ? { type: "BYTE_ARRAY", converted_type: "UTF8" } : { type: c.leaf };
      schema.push(...columnElements(c.name, leaf, c.depth));
    }
    return new ParquetTable(path, schema, columns.map((c) => c.name), kv);
  }

  /** Appends one row group; `data` holds a column of equal length per name. */
  write(data: Record<string, unknown[]>): void {
    const n = data[this.names[0]].length;
    this.#pq.write({ columnData: this.names.map((name) => ({ name, data: data[name] })), rowGroupSize: Math.max(1, n) });
    this.rows += n;
  }

  /** Bytes written so far. */
  get bytes(): number {
    return this.#writer.offset;
  }

  finish(): void {
    this.#pq.finish();
  }
}
