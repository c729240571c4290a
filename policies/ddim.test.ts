import { test } from "node:test";
import assert from "node:assert/strict";
import { clipUnit, ddimSchedule, ddimStep } from "./ddim.ts";
import { gaussian, gaussianArray } from "./gaussian.ts";

test("ddimSchedule pairs each timestep with the next one's alpha, and 1 after the last", () => {
  const ac = [0.9, 0.8, 0.7, 0.6, 0.5];
  assert.deepEqual(ddimSchedule([4, 2, 0], ac), [
    { t: 4, abT: 0.5, abPrev: 0.7 },
    { t: 2, abT: 0.7, abPrev: 0.9 },
    { t: 0, abT: 0.9, abPrev: 1 },
  ]);
  assert.throws(() => ddimSchedule([5], ac), RangeError);
});

test("with the true noise, one step recovers x0 exactly when abPrev = 1", () => {
  const normal = gaussian(1);
  const x0 = gaussianArray(normal, 64).map((v) => Math.max(-0.9, Math.min(0.9, v * 0.3)));
  const eps = gaussianArray(normal, 64);
  const ab = 0.3;
  const xt = x0.map((v, i) => Math.sqrt(ab) * v + Math.sqrt(1 - ab) * eps[i]);
  const out = ddimStep(xt, eps, { abT: ab, abPrev: 1 });
  out.forEach((v, i) => assert.ok(Math.abs(v - x0[i]) < 1e-5, `${v} vs ${x0[i]}`));
});

test("property: x0 is clipped to [-1, 1], so a final step (abPrev = 1) lands in [-1, 1]", () => {
  for (let seed = 0; seed < 20; seed++) {
    const normal = gaussian(seed);
    const x = gaussianArray(normal, 32).map((v) => v * 5);
    const eps = gaussianArray(normal, 32);
    const out = ddimStep(x, eps, { abT: 0.05 + 0.9 * ((seed * 0.37) % 1), abPrev: 1 });
    for (const v of out) assert.ok(v >= -1 && v <= 1, String(v));
  }
});

test("ddimStep may write in place and matches the learner's formula (eps kept after clipping)", () => {
  const x = Float32Array.from([3, -0.2, 0.5]);
  const eps = Float32Array.from([0.1, -0.3, 2]);
  const s = { abT: 0.6, abPrev: 0.8 };
  const expected = Array.from(x, (xi, i) => {
    const x0 = Math.max(-1, Math.min(1, (xi - Math.sqrt(1 - s.abT) * eps[i]) / Math.sqrt(s.abT)));
    return Math.sqrt(s.abPrev) * x0 + Math.sqrt(1 - s.abPrev) * eps[i];
  });
  ddimStep(x, eps, s, x);
  x.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) < 1e-6));
  assert.throws(() => ddimStep(x, new Float32Array(2), s), RangeError);
});

test("clipUnit clips in place", () => {
  assert.deepEqual(Array.from(clipUnit(Float32Array.from([-3, 0.25, 2]))), [-1, 0.25, 1]);
});

test("gaussian: seeded, reproducible, roughly standard normal", () => {
  const a = gaussianArray(gaussian(42), 20000);
  assert.deepEqual(a, gaussianArray(gaussian(42), 20000));
  assert.notDeepEqual(a.slice(0, 10), gaussianArray(gaussian(43), 10));
  const mean = a.reduce((s, v) => s + v, 0) / a.length;
  const variance = a.reduce((s, v) => s + (v - mean) ** 2, 0) / a.length;
  assert.ok(Math.abs(mean) < 0.05, `mean ${mean}`);
  assert.ok(Math.abs(variance - 1) < 0.05, `variance ${variance}`);
  assert.ok(a.every(Number.isFinite));
});
