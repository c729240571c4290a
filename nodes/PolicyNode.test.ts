// Best-of-N base chunks: the consensus (medoid) choice, the critic-free control of critic-ranked best-of-N.
import { test } from "node:test";
import assert from "node:assert/strict";
import { medoidChunk } from "./PolicyNode.ts";

test("medoidChunk picks the chunk closest to all the others over the executed steps only", () => {
  const chunk = (a: number, tail = 0) => [[a, 0], [a, 0], [tail, tail]];
  // Four chunks agree near 0.1, one outlier at 2; the last step (not executed, k = 2) would favour the outlier.
  const chunks = [chunk(2, 0.1), chunk(0.0, 9), chunk(0.1, 9), chunk(0.1, 9), chunk(0.2, 9)];
  assert.equal(medoidChunk(chunks, 2), 2);
  assert.equal(medoidChunk([chunk(1)], 2), 0);
  assert.equal(medoidChunk([chunk(0), chunk(1)], 2), 0, "ties go to the first sample");
});
