// Equivalence of the ONNX policy (graph and TS-scheduler modes) with the learner's PyTorch sampler, on a real
// package exported by `python3 -m rlft_learner make-fixture`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cp, readFile, writeFile, mkdtemp, rm } from "node:fs/promises";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiffusionPolicy, PolicyInputError } from "./DiffusionPolicy.ts";
import { InferenceClient, InferenceError } from "./InferenceClient.ts";
import { ActionChunker } from "./ActionChunker.ts";
import { gaussian, gaussianArray } from "./gaussian.ts";
import { makeLearnerFixture, type LearnerFixture } from "./testing/learnerFixture.ts";

interface TestVectors {
  obs: number[][];
  noise: number[][][];
  action: number[][][];
}

let fixture: LearnerFixture;
let vectors: TestVectors;
const quiet = { warn: () => {}, info: () => {} };

before(async () => {
  fixture = await makeLearnerFixture();
  vectors = JSON.parse(await readFile(join(fixture.dir, "test_vectors.json"), "utf8")) as TestVectors;
});
after(async () => {
  await fixture?.cleanup();
});

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

for (const mode of ["graph", "ts"] as const) {
  test(`${mode} mode matches the PyTorch sampler within 1e-4`, async () => {
    const policy = await DiffusionPolicy.create(fixture.dir, { mode, threads: 1, logger: quiet });
    try {
      assert.ok(vectors.obs.length > 0);
      for (let b = 0; b < vectors.obs.length; b++) {
        const out = await policy.denoise(Float32Array.from(vectors.obs[b]), Float32Array.from(vectors.noise[b].flat()));
        const d = maxAbsDiff(out, vectors.action[b].flat());
        assert.ok(d <= 1e-4, `vector ${b}: max |Δ| = ${d}`);
      }
    } finally {
      await policy.close();
    }
  });

  test(`${mode} mode: sampleChunk normalises obs and unnormalises actions like the learner`, async () => {
    const policy = await DiffusionPolicy.create(fixture.dir, { mode, logger: quiet });
    try {
      const { observation, action } = policy.package.json;
      const d = observation.names.length;
      // Raw obs whose normalisation is test vector 0.
      const raw = Array.from({ length: observation.history }, (_, h) => observation.names.map((_, i) => vectors.obs[0][h * d + i] * observation.std[i] + observation.mean[i]));
      const { actions, inferenceMs } = await policy.sampleChunk(raw, Float32Array.from(vectors.noise[0].flat()));
      assert.equal(actions.length, action.horizon);
      assert.ok(inferenceMs >= 0);
      actions.forEach((row, h) => {
        assert.equal(row.length, action.names.length);
        row.forEach((a, j) => {
          const expected = action.min[j] + ((vectors.action[0][h][j] + 1) / 2) * (action.max[j] - action.min[j]);
          const tol = 1e-4 * Math.max(1, (action.max[j] - action.min[j]) / 2);
          assert.ok(Math.abs(a - expected) <= tol, `action[${h}][${j}] = ${a}, expected ${expected}`);
        });
      });
    } finally {
      await policy.close();
    }
  });
}

test("seeded noise: same seed, same chunk; chunks differ between calls", async () => {
  const a = await DiffusionPolicy.create(fixture.dir, { seed: 7, logger: quiet });
  const b = await DiffusionPolicy.create(fixture.dir, { seed: 7, logger: quiet });
  try {
    const { history, names } = a.package.json.observation;
    const obs = Array.from({ length: history }, () => names.map(() => 0.1));
    const a1 = (await a.sampleChunk(obs)).actions;
    const b1 = (await b.sampleChunk(obs)).actions;
    assert.deepEqual(a1, b1);
    const a2 = (await a.sampleChunk(obs)).actions;
    assert.notDeepEqual(a1, a2);
  } finally {
    await a.close();
    await b.close();
  }
});

for (const mode of ["graph", "ts"] as const) {
  test(`${mode} mode: sampleChunks(obs, N) is N sampleChunk calls in one batched call (same seeded draws)`, async () => {
    const one = await DiffusionPolicy.create(fixture.dir, { mode, seed: 11, logger: quiet });
    const batched = await DiffusionPolicy.create(fixture.dir, { mode, seed: 11, logger: quiet });
    try {
      const { history, names } = one.package.json.observation;
      const obs = Array.from({ length: history }, (_, h) => names.map((_, i) => 0.05 * (i + 1) - 0.02 * h));
      const sequential: number[][][] = [];
      for (let i = 0; i < 5; i++) sequential.push((await one.sampleChunk(obs)).actions);
      const { chunks, inferenceMs } = await batched.sampleChunks(obs, 5);
      assert.ok(inferenceMs >= 0);
      assert.equal(chunks.length, 5);
      const { min, max } = one.package.json.action;
      chunks.forEach((c, i) => c.forEach((row, h) => row.forEach((a, j) => {
        const tol = 1e-5 * Math.max(1, (max[j] - min[j]) / 2);
        assert.ok(Math.abs(a - sequential[i][h][j]) <= tol, `chunk ${i} [${h}][${j}]: batched ${a}, sequential ${sequential[i][h][j]}`);
      })));
      assert.notDeepEqual(chunks[0], chunks[1], "each sample has its own noise");
      // The generators stay in step: the next call of each draws the same noise again.
      const next = (await one.sampleChunk(obs)).actions;
      const nextB = (await batched.sampleChunks(obs, 1)).chunks[0];
      next.forEach((row, h) => row.forEach((a, j) => assert.ok(Math.abs(a - nextB[h][j]) <= 1e-5 * Math.max(1, (max[j] - min[j]) / 2))));
      await assert.rejects(batched.sampleChunks(obs, 0), (e: unknown) => e instanceof PolicyInputError && e.code === "bad_shape" && /count must be an integer ≥ 1/.test(e.message));
      await assert.rejects(batched.denoise(batched.normaliseObservation(obs), new Float32Array(7)), /noise: expected a multiple of/);
    } finally {
      await one.close();
      await batched.close();
    }
  });
}

test("noiseScale: the seeded noise times the temperature; 0 gives one deterministic chunk; out of range is refused", async () => {
  const half = await DiffusionPolicy.create(fixture.dir, { seed: 7, noiseScale: 0.5, logger: quiet });
  const zero = await DiffusionPolicy.create(fixture.dir, { seed: 7, noiseScale: 0, logger: quiet });
  try {
    const { history, names } = half.package.json.observation;
    const obs = Array.from({ length: history }, () => names.map(() => 0.1));
    const norm = half.normaliseObservation(obs);
    const n = half.package.json.action.horizon * half.package.actionDim;
    // The same draws as seed 7 at scale 1, halved: identical to denoising that noise explicitly.
    const drawn = gaussianArray(gaussian(7), n).map((v) => v * 0.5);
    const expected = half.unnormaliseActions(await half.denoise(norm, drawn));
    assert.deepEqual((await half.sampleChunk(obs)).actions, expected);
    // Temperature 0: every call denoises zeros, so the chunk no longer depends on the draw.
    const z1 = (await zero.sampleChunk(obs)).actions;
    const z2 = (await zero.sampleChunk(obs)).actions;
    assert.deepEqual(z1, z2);
  } finally {
    await half.close();
    await zero.close();
  }
  await assert.rejects(DiffusionPolicy.create(fixture.dir, { noiseScale: 3, logger: quiet }), /noise_scale 3.*\[0, 2\].*actor\.noise_scale/);
  await assert.rejects(DiffusionPolicy.create(fixture.dir, { noiseScale: Number.NaN, logger: quiet }), /noise_scale NaN/);
});

test("NaN or Inf in the observation is refused with the name of the value", async () => {
  const policy = await DiffusionPolicy.create(fixture.dir, { logger: quiet });
  try {
    const { history, names } = policy.package.json.observation;
    const obs = Array.from({ length: history }, () => names.map(() => 0));
    obs[history - 1][2] = Number.NaN;
    await assert.rejects(policy.sampleChunk(obs), (e: unknown) => e instanceof PolicyInputError && e.code === "non_finite_observation" && e.message.includes(names[2]));
    obs[history - 1][2] = Infinity;
    await assert.rejects(policy.sampleChunk(obs), /Infinity/);
    await assert.rejects(policy.sampleChunk(obs.slice(1)), (e: unknown) => e instanceof PolicyInputError && e.code === "bad_shape");
  } finally {
    await policy.close();
  }
});

test("a corrupt ONNX file (with a matching hash) is rejected with an error naming the file", async () => {
  const root = await mkdtemp(join(tmpdir(), "rlft-corrupt-"));
  try {
    const dir = join(root, "pkg");
    await cp(fixture.dir, dir, { recursive: true });
    const samplerPath = join(dir, "sampler.onnx");
    const bytes = await readFile(samplerPath);
    const corrupt = bytes.subarray(0, Math.floor(bytes.length / 3));
    await writeFile(samplerPath, corrupt);
    const json = JSON.parse(await readFile(join(dir, "policy.json"), "utf8"));
    json.sha256["sampler.onnx"] = createHash("sha256").update(corrupt).digest("hex");
    await writeFile(join(dir, "policy.json"), JSON.stringify(json));
    await assert.rejects(DiffusionPolicy.create(dir, { logger: quiet }), (e: unknown) => {
      assert.ok(e instanceof InferenceError, String(e));
      assert.equal(e.code, "invalid_model");
      assert.equal(e.file, samplerPath);
      assert.ok(e.message.includes(samplerPath), e.message);
      return true;
    });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test("an unavailable execution provider falls back to CPU with a warning naming it", async () => {
  const warnings: string[] = [];
  const client = await InferenceClient.create({ denoiser: join(fixture.dir, "denoiser.onnx") }, { providers: ["cuda", "cpu"], logger: { warn: (m) => warnings.push(m), info: () => {} } });
  try {
    if (client.providers.denoiser === "cuda") return; // a machine with a working CUDA EP: nothing to fall back from
    assert.equal(client.providers.denoiser, "cpu");
    assert.ok(warnings.some((w) => w.includes('"cuda"')), warnings.join("\n"));
  } finally {
    await client.close();
  }
});

test("InferenceClient answers concurrent requests by id", async () => {
  const policy = await DiffusionPolicy.create(fixture.dir, { logger: quiet });
  try {
    const results = await Promise.all(vectors.obs.map((o, b) => policy.denoise(Float32Array.from(o), Float32Array.from(vectors.noise[b].flat()))));
    results.forEach((r, b) => assert.ok(maxAbsDiff(r, vectors.action[b].flat()) <= 1e-4, `vector ${b}`));
  } finally {
    await policy.close();
  }
});

test("ActionChunker on the real policy executes K actions of each chunk, then re-plans", async () => {
  const policy = await DiffusionPolicy.create(fixture.dir, { seed: 3, logger: quiet });
  try {
    const { observation, action } = policy.package.json;
    let calls = 0;
    const source = { sampleChunk: (h: number[][]) => (calls++, policy.sampleChunk(h)) };
    const chunker = new ActionChunker(source, { history: observation.history, horizon: action.horizon, executeSteps: action.execute_steps });
    const obs = observation.names.map(() => 0.2);
    for (let t = 0; t < 2 * action.execute_steps + 1; t++) {
      const a = await chunker.next(obs);
      assert.equal(a.length, action.names.length);
      assert.ok(a.every(Number.isFinite));
    }
    assert.equal(calls, 3);
  } finally {
    await policy.close();
  }
});
