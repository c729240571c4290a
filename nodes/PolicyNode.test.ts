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

test("best-of-N ranked by the chunk critic: evaluation runs the chunk it scores highest; training explores with the first sample", async () => {
  const { makeResidualFixture } = await import("../policies/testing/residualFixture.ts");
  const { PolicyActor } = await import("./PolicyNode.ts");
  const fx = await makeResidualFixture();
  try {
    const { PolicyPackage } = await import("../policies/PolicyPackage.ts");
    const j = (await PolicyPackage.load(fx.baseDir)).json;
    const obs = { names: [...j.observation.names], values: j.observation.mean.map((m, i) => m + 0.5 * j.observation.std[i] * Math.sin(i)) };
    const run = async (training: boolean, explore: number) => {
      const actor = await PolicyActor.create(fx.baseDir, {
        jointNames: j.action.names, observationNames: j.observation.names, residual: fx.residualDir, training,
        bestOf: { n: 6, select: "chunk_critic", explore }, logger: { warn: () => {}, info: () => {} },
      });
      try {
        actor.reset(7);
        for (let t = 0; t < 4 * j.action.execute_steps; t++) await actor.act(obs);
        return { ...actor.bestOfStats };
      } finally {
        await actor.close();
      }
    };
    const ranked = await run(false, 1);
    assert.equal(ranked.chunks, 4);
    assert.ok(ranked.reranked > 0, "with a random critic the best of 6 is rarely always the first sample");
    assert.deepEqual(await run(true, 1), { chunks: 4, reranked: 0 }, "training with explore 1 always runs the unranked first sample");
  } finally {
    await fx.cleanup();
  }
});
