/**
 * NumPy `.npy` files (format 1.0: magic, version, little-endian u16 header length, a Python dict literal padded with
 * spaces to a multiple of 64 bytes and ended by "\n", then the C-order data), as numpy.lib.format documents it.
 * What rlft hands the learner (labelled frames, VLA datasets) is written in this format so numpy memory-maps it.
 */

/** The header of a C-order array of `descr` ("<f4", "|u1", ...) and `shape`. */
export function npyHeader(descr: string, shape: readonly number[]): Buffer {
  const dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  const total = Math.ceil((10 + dict.length + 1) / 64) * 64;
  const header = dict + " ".repeat(total - 10 - dict.length - 1) + "\n";
  const pre = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 0xff, header.length >> 8]);
  return Buffer.concat([pre, Buffer.from(header, "latin1")]);
}

/** A whole .npy file: header and `data` (already in C order and the dtype's byte layout). */
export function npy(descr: string, shape: readonly number[], data: Uint8Array): Buffer {
  return Buffer.concat([npyHeader(descr, shape), data]);
}
