/** Tests: the largest |a[i] − b[i]| of two arrays of the same length (an agreement check against PyTorch). */
import assert from "node:assert/strict";

export function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}
