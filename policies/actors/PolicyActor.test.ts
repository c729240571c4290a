// Best-of-N base chunks: the consensus (medoid) choice, the critic-free control of critic-ranked best-of-N.
import { test } from "node:test";
import assert from "node:assert/strict";
import { medoidChunk, sumStandardised } from "./bestOf.ts";

test("medoidChunk picks the chunk closest to all the others over the executed steps only", () => {
  const chunk = (a: number, tail = 0) => [[a, 0], [a, 0], [tail, tail]];
  // Four chunks agree near 0.1, one outlier at 2; the last step (not executed, k = 2) would favour the outlier.
  const chunks = [chunk(2, 0.1), chunk(0.0, 9), chunk(0.1, 9), chunk(0.1, 9), chunk(0.2, 9)];
  assert.equal(medoidChunk(chunks, 2), 2);
  assert.equal(medoidChunk([chunk(1)], 2), 0);
  assert.equal(medoidChunk([chunk(0), chunk(1)], 2), 0, "ties go to the first sample");
});

test("sumStandardised: each critic's scores count on one scale, so two critics vote and a constant one abstains", () => {
  // The step critic prefers 2 slightly, the chunk critic (100x its scale) prefers 1 strongly: z-scores make both count.
  const step = [0.50, 0.51, 0.52];
  const chunk = [10, 90, 20];
  const z = sumStandardised([step, chunk]);
  assert.equal(z.indexOf(Math.max(...z)), 1);
  assert.ok(Math.abs(z.reduce((a, x) => a + x, 0)) < 1e-9, "z-scores sum to zero");
  assert.deepEqual(sumStandardised([[3, 3, 3], [1, 2, 3]]).map((x) => Math.round(x * 1e6) / 1e6), [-1.224745, 0, 1.224745]);
});

test("best-of-N ranked by the chunk critic: evaluation runs the chunk it scores highest; training explores with the first sample", async () => {
  const { makeResidualFixture } = await import("../testing/residualFixture.ts");
  const { PolicyActor } = await import("./PolicyActor.ts");
  const fx = await makeResidualFixture();
  try {
    const { PolicyPackage } = await import("../PolicyPackage.ts");
    const j = (await PolicyPackage.load(fx.baseDir)).json;
    const obs = { names: [...j.observation.names], values: j.observation.mean.map((m, i) => m + 0.5 * j.observation.std[i] * Math.sin(i)) };
    const run = async (training: boolean, explore: number, select: "chunk_critic" | "critics" = "chunk_critic") => {
      const actor = await PolicyActor.create(fx.baseDir, {
        jointNames: j.action.names, observationNames: j.observation.names, residual: fx.residualDir, training,
        bestOf: { n: 6, select, explore }, logger: { warn: () => {}, info: () => {} },
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
    const both = await run(false, 1, "critics");
    assert.equal(both.chunks, 4);
    assert.ok(both.reranked > 0, "both critics voting rank the samples too");
  } finally {
    await fx.cleanup();
  }
});

test("on a real robot, a package that reads sim-only state is refused at load; in sim it runs on the joints it reads", async () => {
  const { makeLearnerFixture } = await import("../testing/learnerFixture.ts");
  const { PolicyActor } = await import("./PolicyActor.ts");
  const { simOnlySignals } = await import("../../sim/tasks.ts");
  const { readFile, writeFile } = await import("node:fs/promises");
  const { join } = await import("node:path");
  const fx = await makeLearnerFixture({ obsDim: 3, actionDim: 2 });
  try {
    // A state policy trained on the sim's observation: two joints and the cube's x (privileged).
    const file = join(fx.dir, "policy.json");
    const pj = JSON.parse(await readFile(file, "utf8"));
    pj.observation.names = ["q.a", "q.b", "cube.x"];
    pj.action.names = ["a", "b"];
    await writeFile(file, JSON.stringify(pj));
    const quiet = { warn: () => {}, info: () => {} };
    await assert.rejects(
      PolicyActor.create(fx.dir, { jointNames: ["a", "b"], observationNames: ["q.a", "q.b", "cube.x"], simOnlySignals: simOnlySignals(), logger: quiet }),
      /reads cube\.x: state only the simulator has .* retrain it with rlft train-bc --state joints --cameras/,
    );
    // In the sim (no simOnlySignals) it loads, and reads its three columns out of a wider observation in its own order.
    const actor = await PolicyActor.create(fx.dir, { jointNames: ["a", "b"], observationNames: ["ee.x", "cube.x", "q.b", "q.a"], logger: quiet });
    try {
      const a = await actor.act({ names: ["ee.x", "cube.x", "q.b", "q.a"], values: [9, 0.1, 0.2, 0.3] });
      assert.equal(a.length, 2);
    } finally {
      await actor.close();
    }
  } finally {
    await fx.cleanup();
  }
});
