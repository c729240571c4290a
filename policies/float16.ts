/** IEEE 754 half precision ⇄ float32 (Node 20 has no Float16Array): what float16 graph inputs and outputs cross as. */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 → float16 bits, round to nearest even; overflow → ±Infinity, NaN stays NaN. */
export function f32ToF16(src: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(src.length);
  for (let i = 0; i < src.length; i++) {
    f32[0] = src[i];
    const x = u32[0];
    const sign = (x >>> 16) & 0x8000;
    const exp = (x >>> 23) & 0xff;
    let mant = x & 0x7fffff;
    if (exp === 0xff) {
      out[i] = sign | 0x7c00 | (mant ? 0x200 : 0);
      continue;
    }
    const e = exp - 127 + 15;
    if (e >= 0x1f) {
      out[i] = sign | 0x7c00;
      continue;
    }
    if (e <= 0) {
      if (e < -10) {
        out[i] = sign;
        continue;
      }
      // Subnormal half: shift the mantissa (with its implicit 1) right, rounding to nearest even.
      mant |= 0x800000;
      const shift = 14 - e;
      const half = 1 << (shift - 1);
      let m = mant >>> shift;
      const rest = mant & ((1 << shift) - 1);
      if (rest > half || (rest === half && m & 1)) m++;
      out[i] = sign | m;
      continue;
    }
    let h = sign | (e << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && h & 1)) h++; // may carry into the exponent: still correct (→ Infinity at the top)
    out[i] = h;
  }
  return out;
}

/** float16 bits → float32. */
export function f16ToF32(src: Uint16Array): Float32Array {
  const out = new Float32Array(src.length);
  for (let i = 0; i < src.length; i++) {
    const h = src[i];
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >>> 10) & 0x1f;
    const mant = h & 0x3ff;
    if (exp === 0) out[i] = sign * mant * 2 ** -24;
    else if (exp === 0x1f) out[i] = mant ? NaN : sign * Infinity;
    else out[i] = sign * (1 + mant / 1024) * 2 ** (exp - 15);
  }
  return out;
}
