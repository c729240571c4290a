import { test } from "node:test";
import assert from "node:assert/strict";
import { wilson, percentile } from "./stats.ts";

test("Wilson interval matches a textbook value", () => {
  // 8/10: Wilson 95% CI ≈ [0.490, 0.943]
  const w = wilson(8, 10);
  assert.ok(Math.abs(w.lo - 0.4902) < 1e-3, String(w.lo));
  assert.ok(Math.abs(w.hi - 0.9433) < 1e-3, String(w.hi));
});

test("Wilson stays inside [0,1] at the edges", () => {
  assert.equal(wilson(0, 20).lo, 0);
  assert.ok(wilson(20, 20).hi <= 1);
  assert.ok(wilson(20, 20).lo > 0.8);
});

test("percentile interpolates", () => {
  assert.equal(percentile([1, 2, 3, 4, 5], 50), 3);
  assert.equal(percentile([1, 2], 50), 1.5);
});
