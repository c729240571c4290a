import { test } from "node:test";
import assert from "node:assert/strict";
import { ActionChunker, type ChunkSource } from "./ActionChunker.ts";

/** A source whose chunk k has actions [[k*100 + i]] for i in 0..H-1, recording the histories it saw. */
function stubSource(horizon: number, delay: () => Promise<void> = async () => {}): ChunkSource & { histories: number[][][] } {
  const histories: number[][][] = [];
  return {
    histories,
    async sampleChunk(h: number[][]) {
      const k = histories.length;
      histories.push(h);
      await delay();
      return { actions: Array.from({ length: horizon }, (_, i) => [k * 100 + i]) };
    },
  };
}

test("executes K actions of each chunk, then re-plans from the newest history", async () => {
  const src = stubSource(6);
  const chunker = new ActionChunker(src, { history: 2, horizon: 6, executeSteps: 4 });
  const got: number[] = [];
  for (let t = 0; t < 9; t++) got.push((await chunker.next([t]))[0]);
  assert.deepEqual(got, [0, 1, 2, 3, 100, 101, 102, 103, 200]);
  assert.deepEqual(src.histories, [[[0], [0]], [[3], [4]], [[7], [8]]]);
});

test("pads the history with the first observation and reset() starts a new episode", async () => {
  const src = stubSource(4);
  const chunker = new ActionChunker(src, { history: 3, horizon: 4, executeSteps: 2 });
  await chunker.next([5]);
  await chunker.next([6]);
  chunker.reset();
  assert.deepEqual(await chunker.next([9]), [100]);
  assert.deepEqual(src.histories, [[[5], [5], [5]], [[9], [9], [9]]]);
});

test("prefetch: the next chunk is requested early and entered at the skipped offset", async () => {
  const src = stubSource(8);
  const chunker = new ActionChunker(src, { history: 1, horizon: 8, executeSteps: 4, prefetchTicks: 2 });
  const got: number[] = [];
  for (let t = 0; t < 10; t++) got.push((await chunker.next([t]))[0]);
  // Chunk 1 is requested at tick 2 (obs 2); at tick 4 its action[2] is for tick 4.
  assert.deepEqual(got, [0, 1, 2, 3, 102, 103, 104, 105, 202, 203]);
  assert.deepEqual(src.histories, [[[0]], [[2]], [[6]]]);
});

test("prefetch is deterministic whatever the inference delay", async () => {
  const run = async (delayMs: number) => {
    const src = stubSource(8, () => new Promise((r) => setTimeout(r, delayMs)));
    const chunker = new ActionChunker(src, { history: 2, horizon: 8, executeSteps: 4, prefetchTicks: 3 });
    const got: number[] = [];
    for (let t = 0; t < 12; t++) got.push((await chunker.next([t]))[0]);
    return { got, histories: src.histories };
  };
  assert.deepEqual(await run(0), await run(5));
});

test("a prefetched chunk from before reset() is dropped", async () => {
  let release: () => void = () => {};
  let first = true;
  const src = stubSource(8, () => (first ? ((first = false), Promise.resolve()) : new Promise<void>((r) => (release = r))));
  const chunker = new ActionChunker(src, { history: 1, horizon: 8, executeSteps: 4, prefetchTicks: 2 });
  for (let t = 0; t < 3; t++) await chunker.next([t]); // chunk 1 requested at tick 2, still in flight
  chunker.reset();
  release();
  const p = chunker.next([50]);
  release(); // chunk 2 (the fresh episode's)
  assert.deepEqual(await p, [200]);
  assert.deepEqual(src.histories.at(-1), [[50]]);
});

test("a failing policy rejects next() and the following tick re-plans", async () => {
  let fail = true;
  const src: ChunkSource = {
    sampleChunk: async () => {
      if (fail) throw new Error("observation q.x is NaN");
      return { actions: [[1], [2]] };
    },
  };
  const chunker = new ActionChunker(src, { history: 1, horizon: 2, executeSteps: 2 });
  await assert.rejects(chunker.next([0]), /NaN/);
  fail = false;
  assert.deepEqual(await chunker.next([0]), [1]);
});

test("invalid options are refused", () => {
  const src = stubSource(4);
  assert.throws(() => new ActionChunker(src, { history: 1, horizon: 4, executeSteps: 5 }), /executeSteps/);
  assert.throws(() => new ActionChunker(src, { history: 1, horizon: 4, executeSteps: 3, prefetchTicks: 2 }), /prefetchTicks/);
  assert.throws(() => new ActionChunker(src, { history: 0, horizon: 4, executeSteps: 3 }), /history/);
});
