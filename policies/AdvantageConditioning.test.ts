// RECAP on the robot side: an indicator-conditioned package exported by the learner (make-fixture --indicator
// --cfg-beta 1.5) runs in both sampler modes and agrees with PyTorch, CFG in TS equals the learner's combination,
// the value head matches, advantages match hand-computed episodes, and mismatched packages are refused at load.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DiffusionPolicy } from "./DiffusionPolicy.ts";
import { InferenceClient, InferenceError } from "./InferenceClient.ts";
import { PolicyPackageError } from "./PolicyPackageError.ts";
import { cfgCombine, type Indicator } from "./AdvantageConditioning.ts";
import { episodeRewards, nStepAdvantages, normalisedReturns } from "./advantage.ts";
import { makeLearnerFixture, type LearnerFixture } from "./testing/learnerFixture.ts";

interface Vectors {
  obs: number[][];
  noise: number[][][];
  action: number[][][];
  indicator: number[];
  cfg: { beta: number; t: number; eps_cond: number[][][]; eps_uncond: number[][][]; eps: number[][][] };
  value: { obs: number[][]; value: number[]; probs: number[][] };
}

let recap: LearnerFixture;
let plain: LearnerFixture;
let v: Vectors;
const quiet = { warn: () => {}, info: () => {} };
const NAMES: Indicator[] = ["negative", "positive", "unconditioned"];

before(async () => {
  [recap, plain] = await Promise.all([makeLearnerFixture({ indicator: true, cfgBeta: 1.5 }), makeLearnerFixture()]);
  v = JSON.parse(await readFile(join(recap.dir, "test_vectors.json"), "utf8")) as Vectors;
});
after(async () => {
  await recap?.cleanup();
  await plain?.cleanup();
});

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

for (const mode of ["graph", "ts"] as const) {
  test(`${mode} mode with indicator and CFG β = 1.5 matches the PyTorch sampler within 1e-4`, async () => {
    const policy = await DiffusionPolicy.create(recap.dir, { mode, logger: quiet });
    try {
      assert.equal(policy.indicator, "positive");
      assert.equal(policy.cfgBeta, 1.5);
      assert.deepEqual(new Set(v.indicator), new Set([0, 1, 2]));
      for (let b = 0; b < v.obs.length; b++) {
        const out = await policy.denoise(Float32Array.from(v.obs[b]), Float32Array.from(v.noise[b].flat()), NAMES[v.indicator[b]]);
        const d = maxAbsDiff(out, v.action[b].flat());
        assert.ok(d <= 1e-4, `vector ${b} (indicator ${NAMES[v.indicator[b]]}): max |Δ| = ${d}`);
      }
    } finally {
      await policy.close();
    }
  });
}

for (const mode of ["graph", "ts"] as const) {
  test(`${mode} mode with CFG: a batch of noises gives each one's guided chunk (best-of-N on a RECAP package)`, async () => {
    const policy = await DiffusionPolicy.create(recap.dir, { mode, logger: quiet });
    try {
      const obs = Float32Array.from(v.obs[0]);
      const noises = v.noise.slice(0, 3).map((x) => Float32Array.from(x.flat()));
      const alone = await Promise.all(noises.map((x) => policy.denoise(obs, x, "positive")));
      const batch = new Float32Array(noises.reduce((a, x) => a + x.length, 0));
      noises.forEach((x, i) => batch.set(x, i * x.length));
      const out = await policy.denoise(obs, batch, "positive");
      alone.forEach((a, i) => {
        const d = maxAbsDiff(out.subarray(i * a.length, (i + 1) * a.length), a);
        assert.ok(d <= 1e-5, `noise ${i}: max |Δ| = ${d}`);
      });
    } finally {
      await policy.close();
    }
  });
}

test("CFG: TS cfgCombine equals the learner's combination of its own conditioned and unconditioned passes", async () => {
  const client = await InferenceClient.create({ denoiser: join(recap.dir, "denoiser.onnx") }, { logger: quiet });
  try {
    assert.deepEqual(client.inputNames.denoiser, ["obs", "x", "t", "indicator"]);
    for (let b = 0; b < v.obs.length; b++) {
      const run = async (ind: number) =>
        (
          await client.run("denoiser", {
            obs: { data: Float32Array.from(v.obs[b]), dims: [1, v.obs[b].length] },
            x: { data: Float32Array.from(v.noise[b].flat()), dims: [1, v.noise[b].length, v.noise[b][0].length] },
            t: { data: new BigInt64Array([BigInt(v.cfg.t)]), dims: [1] },
            indicator: { data: new BigInt64Array([BigInt(ind)]), dims: [1] },
          })
        ).outputs.eps.data as Float32Array;
      const [c, u] = [await run(v.indicator[b]), await run(2)];
      assert.ok(maxAbsDiff(c, v.cfg.eps_cond[b].flat()) <= 1e-4);
      assert.ok(maxAbsDiff(u, v.cfg.eps_uncond[b].flat()) <= 1e-4);
      // Same inputs as PyTorch's: the combination itself agrees to float32 rounding.
      const ts = cfgCombine(Float32Array.from(v.cfg.eps_cond[b].flat()), Float32Array.from(v.cfg.eps_uncond[b].flat()), v.cfg.beta);
      assert.ok(maxAbsDiff(ts, v.cfg.eps[b].flat()) <= 1e-6, `vector ${b}`);
    }
  } finally {
    await client.close();
  }
  const c = Float32Array.from([1, -2, 0.5]);
  const u = Float32Array.from([0, 1, 0.5]);
  assert.deepEqual(Array.from(cfgCombine(c, u, 1)), Array.from(c), "β = 1 is the conditioned pass");
  assert.deepEqual(Array.from(cfgCombine(c, u, 2)), [2, -5, 0.5]);
});

test("the value head (value.onnx) matches PyTorch and its probabilities sum to 1", async () => {
  const client = await InferenceClient.create({ value: join(recap.dir, "value.onnx") }, { logger: quiet });
  try {
    const n = v.value.obs.length;
    const d = v.value.obs[0].length;
    const { outputs } = await client.run("value", { obs: { data: Float32Array.from(v.value.obs.flat()), dims: [n, d] } });
    assert.ok(maxAbsDiff(outputs.value.data as Float32Array, v.value.value) <= 1e-5);
    const probs = outputs.probs.data as Float32Array;
    const bins = probs.length / n;
    for (let i = 0; i < n; i++) assert.ok(Math.abs(probs.subarray(i * bins, (i + 1) * bins).reduce((a, b) => a + b, 0) - 1) < 1e-5);
  } finally {
    await client.close();
  }
});

test("advantages match the hand-computed episode (same numbers as the learner's test)", () => {
  assert.deepEqual(episodeRewards(4, true, 10), [-1, -1, -1, 0]);
  assert.deepEqual(episodeRewards(3, false, 5), [-1, -1, -5]);
  const close = (a: number[], b: number[]) => a.forEach((x, i) => assert.ok(Math.abs(x - b[i]) < 1e-9, `[${i}] ${x} vs ${b[i]}`));
  close(normalisedReturns([-1, -1, -1, 0], 10), [-0.3, -0.2, -0.1, 0]);
  close(normalisedReturns(episodeRewards(3, false, 20), 10), [-1, -1, -1]);
  const r = [-0.1, -0.1, -0.1, 0];
  close(nStepAdvantages(r, [-0.5, -0.2, -0.1, 0], 2), [0.2, 0, 0, 0]);
  close(nStepAdvantages(r, [-0.3, -0.3, -0.3, -0.3], 1), [-0.1, -0.1, -0.1, 0.3]);
  close(nStepAdvantages(r, [-0.3, -0.3, -0.3, -0.3], 0), [0, 0.1, 0.2, 0.3]);
  close(nStepAdvantages(r, [-0.3, -0.3, -0.3, -0.3], 99), [0, 0.1, 0.2, 0.3]);
});

test("indicator settings that do not match the package are refused at load, naming the mismatch", async () => {
  await assert.rejects(DiffusionPolicy.create(plain.dir, { indicator: "positive", logger: quiet }), (e: unknown) => {
    assert.ok(e instanceof PolicyPackageError && e.code === "incompatible", String(e));
    assert.match(e.message, /actor\.indicator: positive/);
    assert.match(e.message, /no indicator input/);
    return true;
  });
  await assert.rejects(DiffusionPolicy.create(recap.dir, { indicator: "none", logger: quiet }), (e: unknown) => e instanceof PolicyPackageError && /advantage-conditioned \(input "indicator"/.test(e.message));
  const p = await DiffusionPolicy.create(plain.dir, { logger: quiet });
  assert.equal(p.indicator, null);
  await p.close();
  const n = await DiffusionPolicy.create(recap.dir, { indicator: "unconditioned", mode: "ts", logger: quiet });
  assert.equal(n.indicator, "unconditioned");
  await n.close();
});

test("actor.cfg_beta overrides the package's guidance weight: another β runs the TS sampler; a plain package refuses it", async () => {
  const infos: string[] = [];
  const log = { info: (m: string) => infos.push(m), warn: () => {} };
  const same = await DiffusionPolicy.create(recap.dir, { cfgBeta: 1.5, logger: log });
  const other = await DiffusionPolicy.create(recap.dir, { cfgBeta: 2.5, logger: log });
  try {
    assert.equal(same.mode, "graph", "the baked β keeps the one-graph sampler");
    assert.equal(other.mode, "ts");
    assert.equal(other.cfgBeta, 2.5);
    assert.ok(infos.some((m) => /cfg_beta 2\.5 differs from the 1\.5 baked/.test(m)), infos.join("\n"));
    const obs = Float32Array.from(v.obs[0]);
    const noise = Float32Array.from(v.noise[0].flat());
    const a = await same.denoise(obs, noise, "positive");
    const b = await other.denoise(obs, noise, "positive");
    assert.ok(maxAbsDiff(a, b) > 1e-3, "a stronger guidance weight changes the chunk");
  } finally {
    await same.close();
    await other.close();
  }
  await assert.rejects(DiffusionPolicy.create(plain.dir, { cfgBeta: 2, logger: quiet }), (e: unknown) => {
    assert.ok(e instanceof PolicyPackageError && e.code === "incompatible", String(e));
    assert.match(e.message, /cfg_beta 2 set in the robot config/);
    return true;
  });
});

/** A copy of `from` with policy.json edited by `edit` (hash entries stay valid: only policy.json changes). */
async function edited(from: string, to: string, edit: (j: Record<string, unknown>) => void): Promise<void> {
  await cp(from, to, { recursive: true });
  const path = join(to, "policy.json");
  const j = JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
  edit(j);
  await writeFile(path, JSON.stringify(j));
}

test("policy.json and graphs that disagree on the indicator input are refused, naming the input and the file", async () => {
  const root = join(plain.dir, "..");
  const claimsIndicator = join(root, "claims");
  const recapJson = JSON.parse(await readFile(join(recap.dir, "policy.json"), "utf8")) as { advantage: Record<string, unknown> };
  await edited(plain.dir, claimsIndicator, (j) => {
    const { value: _value, ...adv } = recapJson.advantage;
    j.advantage = adv;
  });
  for (const mode of ["graph", "ts"] as const) {
    await assert.rejects(DiffusionPolicy.create(claimsIndicator, { mode, logger: quiet }), (e: unknown) => {
      assert.ok(e instanceof InferenceError && e.code === "input_mismatch", String(e));
      assert.match(e.message, /lacks "indicator"/);
      assert.ok(e.message.includes(mode === "graph" ? "sampler.onnx" : "denoiser.onnx"), e.message);
      return true;
    });
  }
  const hidesIndicator = join(root, "hides");
  await edited(recap.dir, hidesIndicator, (j) => {
    delete j.advantage;
  });
  await assert.rejects(DiffusionPolicy.create(hidesIndicator, { logger: quiet }), (e: unknown) => e instanceof InferenceError && /has unexpected "indicator"/.test(e.message));
  const badName = join(root, "badname");
  await edited(recap.dir, badName, (j) => {
    (j.advantage as Record<string, unknown>).input = "t";
  });
  await assert.rejects(DiffusionPolicy.create(badName, { logger: quiet }), (e: unknown) => e instanceof PolicyPackageError && /advantage\.input: "t" is already a sampler input/.test(e.message));
  // A hashed file changed under the package is still caught first.
  const tampered = join(root, "tampered");
  await cp(recap.dir, tampered, { recursive: true });
  await writeFile(join(tampered, "value.onnx"), Buffer.from("not onnx"));
  await assert.rejects(DiffusionPolicy.create(tampered, { logger: quiet }), (e: unknown) => e instanceof PolicyPackageError && e.code === "sha256_mismatch" && e.message.includes("value.onnx"));
});
