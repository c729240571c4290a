/** `x` repeated `times` times back to back, in a new Float32Array (a batch of one row for an ONNX feed; feeds are transferred to the worker, so each gets its own). */
export function tile(x: ArrayLike<number>, times: number): Float32Array {
  const out = new Float32Array(times * x.length);
  for (let i = 0; i < times; i++) out.set(x, i * x.length);
  return out;
}
