/**
 * The external-data files an ONNX graph makes onnxruntime open (TensorProto.external_data "location", ONNX's format for
 * graphs over protobuf's 2 GB limit: the weights live in files beside the .onnx). A package must hash each of them, or
 * a signed package could load unsigned weights. A minimal protobuf walk: ModelProto.graph → initializers, node
 * attributes' tensors and subgraphs, recursively; everything else is skipped by its wire type.
 */
import { open } from "node:fs/promises";

// Field numbers from onnx.proto3.
const MODEL_GRAPH = 7;
const MODEL_FUNCTIONS = 25;
const FUNCTION_NODE = 7;
const GRAPH_NODE = 1;
const GRAPH_INITIALIZER = 5;
const GRAPH_SPARSE_INITIALIZER = 15;
const NODE_ATTRIBUTE = 5;
const ATTR_T = 5;
const ATTR_G = 6;
const ATTR_TENSORS = 10;
const ATTR_GRAPHS = 11;
const ATTR_SPARSE_TENSOR = 22;
const ATTR_SPARSE_TENSORS = 23;
const SPARSE_VALUES = 1;
const SPARSE_INDICES = 2;
const TENSOR_EXTERNAL_DATA = 13;
const ENTRY_KEY = 1;
const ENTRY_VALUE = 2;

/** Thrown for bytes that are not a protobuf message. */
export class OnnxParseError extends Error {}

type Visit = (field: number, body: Uint8Array) => void;
type VisitInt = (field: number, value: number) => void;

function varint(buf: Uint8Array, pos: number): [number, number] {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= buf.length) throw new OnnxParseError("truncated varint");
    const b = buf[pos++];
    v += (b & 0x7f) * mul;
    if ((b & 0x80) === 0) return [v, pos];
    mul *= 128;
  }
  throw new OnnxParseError("varint longer than 10 bytes");
}

/** Calls `visit` for every length-delimited field of the message in `buf`; skips the other wire types. */
function fields(buf: Uint8Array, visit: Visit, visitInt?: VisitInt): void {
  let pos = 0;
  while (pos < buf.length) {
    const [key, p1] = varint(buf, pos);
    pos = p1;
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) {
      const [v, p2] = varint(buf, pos);
      visitInt?.(field, v);
      pos = p2;
    } else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      const [len, p2] = varint(buf, pos);
      if (p2 + len > buf.length) throw new OnnxParseError(`field ${field} runs past the end of its message`);
      visit(field, buf.subarray(p2, p2 + len));
      pos = p2 + len;
    } else throw new OnnxParseError(`unsupported wire type ${wire}`);
    if (pos > buf.length) throw new OnnxParseError("truncated field");
  }
}

const text = new TextDecoder("utf-8", { fatal: false });

function tensor(buf: Uint8Array, out: Set<string>): void {
  fields(buf, (f, body) => {
    if (f !== TENSOR_EXTERNAL_DATA) return;
    let key = "";
    let value = "";
    fields(body, (g, b) => {
      if (g === ENTRY_KEY) key = text.decode(b);
      else if (g === ENTRY_VALUE) value = text.decode(b);
    });
    if (key === "location") out.add(value);
  });
}

function sparse(buf: Uint8Array, out: Set<string>): void {
  fields(buf, (f, body) => {
    if (f === SPARSE_VALUES || f === SPARSE_INDICES) tensor(body, out);
  });
}

function node(buf: Uint8Array, out: Set<string>): void {
  fields(buf, (f, body) => {
    if (f !== NODE_ATTRIBUTE) return;
    fields(body, (g, b) => {
      if (g === ATTR_T || g === ATTR_TENSORS) tensor(b, out);
      else if (g === ATTR_G || g === ATTR_GRAPHS) graph(b, out);
      else if (g === ATTR_SPARSE_TENSOR || g === ATTR_SPARSE_TENSORS) sparse(b, out);
    });
  });
}

function graph(buf: Uint8Array, out: Set<string>): void {
  fields(buf, (f, body) => {
    if (f === GRAPH_INITIALIZER) tensor(body, out);
    else if (f === GRAPH_SPARSE_INITIALIZER) sparse(body, out);
    else if (f === GRAPH_NODE) node(body, out);
  });
}

/** External-data locations named in an ONNX model's bytes (deduplicated, in first-seen order). */
export function externalDataLocations(model: Uint8Array): string[] {
  const out = new Set<string>();
  fields(model, (f, body) => {
    if (f === MODEL_GRAPH) graph(body, out);
    else if (f === MODEL_FUNCTIONS) fields(body, (g, b) => g === FUNCTION_NODE && node(b, out));
  });
  return [...out];
}

/** {@link externalDataLocations} of the file at `path` (read whole: the graph file, not its data, is what is parsed). */
export async function externalDataOf(path: string): Promise<string[]> {
  const fh = await open(path, "r");
  try {
    const { size } = await fh.stat();
    if (size > 2 ** 31 - 1) throw new OnnxParseError(`${path} is ${(size / 2 ** 30).toFixed(1)} GiB: protobuf cannot hold a graph over 2 GiB; its weights belong in external data`);
    const buf = Buffer.alloc(size);
    await fh.read(buf, 0, size, 0);
    return externalDataLocations(buf);
  } finally {
    await fh.close();
  }
}

/** ONNX TensorProto.DataType names by number (onnx.proto3). */
export const ONNX_TYPES: Record<number, string> = {
  1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string", 9: "bool", 10: "float16",
  11: "float64", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128", 16: "bfloat16", 17: "float8e4m3fn",
  18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4e2m1",
};

/** The graph's inputs and outputs with their element types (names from the .onnx bytes, as the file declares them). */
export function graphIo(model: Uint8Array): { name: string; io: "input" | "output"; type: string }[] {
  const out: { name: string; io: "input" | "output"; type: string }[] = [];
  const valueInfo = (buf: Uint8Array, io: "input" | "output"): void => {
    let name = "";
    let elem = 0;
    fields(buf, (f, b) => {
      if (f === 1) name = text.decode(b);
      else if (f === 2) fields(b, (g, tb) => g === 1 && fields(tb, () => undefined, (k, v) => k === 1 && (elem = v)));
    });
    out.push({ name, io, type: ONNX_TYPES[elem] ?? (elem === 0 ? "a non-tensor value" : `type ${elem}`) });
  };
  fields(model, (f, body) => {
    if (f !== MODEL_GRAPH) return;
    fields(body, (g, b) => {
      if (g === 11) valueInfo(b, "input");
      else if (g === 12) valueInfo(b, "output");
    });
  });
  return out;
}
