// The residual policy on a package written by the learner's exporter: equivalence with its PyTorch test vectors,
// base mismatch refusal, exploration noise only in training, and hot swap keeping the old policy on a corrupt package.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PolicyPackage, PolicyPackageError } from "./PolicyPackage.ts";
import { ResidualPolicy } from "./ResidualPolicy.ts";
import { PolicySlot } from "./PolicySlot.ts";
import { makeResidualFixture, type ResidualFixture } from "./testing/residualFixture.ts";
import { poisonPackage } from "./testing/poisonedFixture.ts";

interface Vectors {
  obs: number[][];
  base_action: number[][];
  residual: number[][];
  critic: { action: number[][]; q: number[][] };
  chunk_critic: { chunk: number[][]; q: number[][] };
}

let fx: ResidualFixture;
let base: PolicyPackage;
const quiet = { warn: () => {}, info: () => {} };

before(async () => {
  fx = await makeResidualFixture();
  base = await PolicyPackage.load(fx.baseDir);
});
after(async () => {
  await fx?.cleanup();
});

/** The learner's PyTorch test vectors (normalised inputs and outputs) written next to the fixture's package. */
const vectors = async () => JSON.parse(await readFile(join(fx.residualDir, "test_vectors.json"), "utf8")) as Vectors;
/** A normalised observation / base action of the vectors in robot units, with the base package's stats. */
const rawObs = (norm: readonly number[]) => norm.map((x, i) => x * base.json.observation.std[i] + base.json.observation.mean[i]);
const rawAction = (norm: readonly number[]) => norm.map((a, j) => base.json.action.min[j] + ((a + 1) / 2) * (base.json.action.max[j] - base.json.action.min[j]));

/** A copy of package `src` named `name` next to the fixture, its policy.json changed by `patch`. */
async function patchedCopy<J>(src: string, name: string, patch: (json: J) => void): Promise<string> {
  const dir = join(fx.residualDir, "..", name);
  await cp(src, dir, { recursive: true });
  const pj = JSON.parse(await readFile(join(dir, "policy.json"), "utf8")) as J;
  patch(pj);
  await writeFile(join(dir, "policy.json"), JSON.stringify(pj));
  return dir;
}

test("residual.onnx matches the learner's PyTorch actor within 1e-5", async () => {
  const v = await vectors();
  const policy = await ResidualPolicy.create(fx.residualDir, { base, training: false, logger: quiet });
  try {
    assert.ok(v.obs.length > 0);
    let nonzero = 0;
    for (let i = 0; i < v.obs.length; i++) {
      const r = await policy.residual(Float32Array.from(v.obs[i]), Float32Array.from(v.base_action[i]));
      r.forEach((x, j) => {
        assert.ok(Math.abs(x - v.residual[i][j]) <= 1e-5, `vector ${i}[${j}]: ${x} vs ${v.residual[i][j]}`);
        if (Math.abs(x) > 1e-4) nonzero++;
      });
    }
    assert.ok(nonzero > 0, "the fixture's residual is not all zeros");
  } finally {
    await policy.close();
  }
});

test("step normalises with the base stats, adds the residual, clips, unnormalises; noise only in training", async () => {
  const v = await vectors();
  const { action } = base.json;
  const obsRaw = rawObs(v.obs[0]);
  const baseRaw = rawAction(v.base_action[0]);
  const evalPolicy = await ResidualPolicy.create(fx.residualDir, { base, training: false, logger: quiet });
  const trainPolicy = await ResidualPolicy.create(fx.residualDir, { base, training: true, seed: 1, logger: quiet });
  try {
    const s = await evalPolicy.step(obsRaw, baseRaw);
    const again = await evalPolicy.step(obsRaw, baseRaw);
    assert.deepEqual(again, s, "deterministic without training");
    s.actionNorm.forEach((a, j) => {
      const want = Math.min(1, Math.max(-1, v.base_action[0][j] + v.residual[0][j]));
      assert.ok(Math.abs(a - want) < 1e-4, `actionNorm[${j}] ${a} vs ${want}`);
      assert.ok(Math.abs(s.baseNorm[j] + s.residualNorm[j] - a) < 1e-9);
      const raw = action.min[j] + ((want + 1) / 2) * (action.max[j] - action.min[j]);
      assert.ok(Math.abs(s.action[j] - raw) < 1e-4 * Math.max(1, action.max[j] - action.min[j]));
    });
    const t = await trainPolicy.step(obsRaw, baseRaw);
    assert.notDeepEqual(t.actionNorm, s.actionNorm, "exploration noise in training mode");
    t.actionNorm.forEach((a) => assert.ok(a >= -1 && a <= 1));
  } finally {
    await evalPolicy.close();
    await trainPolicy.close();
  }
});

test("a residual trained on another base is refused, naming both versions", async () => {
  const dir = await patchedCopy<{ version: string }>(fx.baseDir, "other-base", (pj) => (pj.version = "bc-other-20260101T000000Z-abcdef"));
  const other = await PolicyPackage.load(dir);
  const residualJson = JSON.parse(await readFile(join(fx.residualDir, "policy.json"), "utf8")) as { base: { version: string } };
  await assert.rejects(ResidualPolicy.create(fx.residualDir, { base: other, training: false, logger: quiet }), (e: unknown) => {
    assert.ok(e instanceof PolicyPackageError);
    assert.equal(e.code, "base_mismatch");
    assert.match(e.message, new RegExp(residualJson.base.version));
    assert.match(e.message, /bc-other-20260101T000000Z-abcdef/);
    return true;
  });
});

test("PolicyPackage.load refuses a residual package with a pointer to ResidualPolicy", async () => {
  await assert.rejects(PolicyPackage.load(fx.residualDir), (e: unknown) => e instanceof PolicyPackageError && e.code === "kind" && /ResidualPolicy/.test(e.message));
});

test("hot swap: a corrupt package is rejected and the old policy keeps running; a good one swaps at the swap point", async () => {
  const load = (dir: string) => ResidualPolicy.create(dir, { base, training: false, logger: quiet });
  const slot = new PolicySlot({ load, initial: await load(fx.residualDir), logger: quiet });
  try {
    const oldVersion = slot.current!.version;
    const corrupt = join(fx.residualDir, "..", "corrupt");
    await cp(fx.residualDir, corrupt, { recursive: true });
    const onnx = await readFile(join(corrupt, "residual.onnx"));
    onnx[onnx.length - 10] ^= 0xff;
    await writeFile(join(corrupt, "residual.onnx"), onnx);
    const r = await slot.offer(corrupt);
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.reason : "", /sha256 mismatch/);
    assert.equal(slot.swapPoint(), false);
    assert.equal(slot.current!.version, oldVersion);
    const s = await slot.current!.step(base.json.observation.mean, base.json.action.min);
    assert.equal(s.action.length, base.actionDim);

    const good = await slot.offer(fx.residualDir);
    assert.equal(good.ok, true);
    const before = slot.current!;
    assert.equal(slot.current, before, "nothing changes before the swap point");
    assert.equal(slot.swapPoint(), true);
    assert.notEqual(slot.current, before);
    assert.equal((await slot.current!.step(base.json.observation.mean, base.json.action.min)).action.length, base.actionDim);
    await assert.rejects(before.step(base.json.observation.mean, base.json.action.min), /closed/, "the replaced session is closed");
  } finally {
    await slot.close();
  }
});

test("hot swap: a learner-exported package with NaN weights (hashes right) is refused at warm-up; the old policy keeps running", async () => {
  // Issue 24 item 2: a poisoned learner published all-NaN residuals and a robot swapped one in.
  const load = (dir: string) => ResidualPolicy.create(dir, { base, training: false, logger: quiet });
  const slot = new PolicySlot({ load, probe: (r) => r.probe(), initial: await load(fx.residualDir), logger: quiet });
  try {
    const old = slot.current!;
    const files = (JSON.parse(await readFile(join(fx.residualDir, "policy.json"), "utf8")) as { files: Record<string, string> }).files;
    for (const which of [[files.actor], [files.critic!]]) {
      const dir = join(fx.residualDir, "..", `nan-${which.length}-${which[0].replace(".onnx", "")}`);
      assert.ok((await poisonPackage(fx.residualDir, dir, which)) > 0, "weights were set to NaN");
      const r = await slot.offer(dir);
      assert.equal(r.ok, false, `${which.join(", ")} with NaN weights was accepted`);
      assert.match(!r.ok ? r.reason : "", /output "\w+" has \d+ of \d+ values NaN or infinite on a valid input/);
      assert.equal(slot.stagedVersion, undefined);
      assert.equal(slot.swapPoint(), false);
      assert.equal(slot.current, old, "the old policy keeps running");
    }
    const s = await slot.current!.step(base.json.observation.mean, base.json.action.min);
    assert.ok(s.action.every(Number.isFinite));
    // The clean package still swaps in: the refusal is about the numbers, not the slot.
    assert.equal((await slot.offer(fx.residualDir)).ok, true);
  } finally {
    await slot.close();
  }
});

test("the slot's probe refuses a policy that loads but answers NaN, and closes it", async () => {
  let closed = 0;
  const fake = (version: string, out: number[]) => ({ version, close: async () => void closed++, out });
  const slot = new PolicySlot({ load: async (d: string) => fake(d, d === "bad" ? [0, NaN, Infinity] : [0.1]), probe: async (p) => p.out, initial: fake("old", [0]), logger: quiet });
  const r = await slot.offer("bad");
  assert.equal(r.ok, false);
  assert.match(!r.ok ? r.reason : "", /2 of 3 outputs on probe inputs are NaN or infinite/);
  assert.equal(closed, 1, "the refused policy was closed");
  assert.equal(slot.current!.version, "old");
  assert.equal((await slot.offer("good")).ok, true);
});

test("critic.onnx ranks base actions like the learner's ensemble: mean over heads, minus k·std with pessimism", async () => {
  const v = await vectors();
  const { action } = base.json;
  const policy = await ResidualPolicy.create(fx.residualDir, { base, training: false, logger: quiet });
  try {
    assert.equal(policy.hasCritic, true);
    for (let i = 0; i < v.obs.length; i++) {
      const obsRaw = rawObs(v.obs[i]);
      const baseRaw = rawAction(v.base_action[i]);
      const q = v.critic.q[i];
      const mean = q.reduce((a, b) => a + b, 0) / q.length;
      const std = Math.sqrt(q.reduce((a, b) => a + (b - mean) ** 2, 0) / (q.length - 1));
      // The same candidate twice plus another: a batch of 3, scored independently.
      const other = baseRaw.map((x, j) => (j === 0 ? action.min[0] : x));
      const [s0, s1, s2] = await policy.scoreBaseActions(obsRaw, [baseRaw, baseRaw, other]);
      assert.ok(Math.abs(s0 - mean) <= 1e-4, `vector ${i}: ${s0} vs ${mean}`);
      assert.ok(Math.abs(s1 - s0) <= 1e-6 && Number.isFinite(s2));
      const [p0] = await policy.scoreBaseActions(obsRaw, [baseRaw], 2);
      assert.ok(Math.abs(p0 - (mean - 2 * std)) <= 1e-4, `vector ${i} pessimistic: ${p0} vs ${mean - 2 * std}`);
    }
  } finally {
    await policy.close();
  }
});

test("chunk_critic.onnx scores whole chunks like the learner's chunk ensemble; a chunk shorter than K is refused", async () => {
  const v = await vectors();
  const { action } = base.json;
  const policy = await ResidualPolicy.create(fx.residualDir, { base, training: false, logger: quiet });
  try {
    assert.equal(policy.hasChunkCritic, true);
    const k = policy.json.chunk_critic!.steps;
    assert.equal(k, action.execute_steps);
    const m = action.names.length;
    for (let i = 0; i < v.obs.length; i++) {
      const obsRaw = rawObs(v.obs[i]);
      // The vector's flat chunk as K raw actions, plus the rest of a horizon-long chunk that must not matter.
      const chunk = Array.from({ length: k }, (_, t) => rawAction(v.chunk_critic.chunk[i].slice(t * m, (t + 1) * m)));
      const long = [...chunk, ...Array.from({ length: action.horizon - k }, () => action.min.slice())];
      const q = v.chunk_critic.q[i];
      const mean = q.reduce((a, b) => a + b, 0) / q.length;
      const [s0, s1] = await policy.scoreChunks(obsRaw, [chunk, long]);
      assert.ok(Math.abs(s0 - mean) <= 1e-4, `vector ${i}: ${s0} vs ${mean}`);
      assert.ok(Math.abs(s1 - s0) <= 1e-6, "steps after the K executed ones are not scored");
    }
    const obsRaw = rawObs(v.obs[0]);
    await assert.rejects(policy.scoreChunks(obsRaw, [[action.min.slice()]]), /chunk 0: 1 actions, the chunk critic scores/);
  } finally {
    await policy.close();
  }
  // A chunk critic for another execution length is refused at load, not at run time.
  const dir = await patchedCopy<{ chunk_critic: { steps: number } }>(fx.residualDir, "other-k", (pj) => (pj.chunk_critic.steps += 1));
  await assert.rejects(ResidualPolicy.create(dir, { base, training: false, logger: quiet }), /chunk_critic.steps \d+ differs from the base's action.execute_steps/);
});

test("a warm-up package (residual.exploration_uniform u) explores with U(−u, u) in training mode, none in evaluation", async () => {
  const dir = await patchedCopy<{ residual: Record<string, number> }>(fx.residualDir, "warmup", (pj) => {
    pj.residual.exploration_uniform = 0.2;
    pj.residual.exploration_std = 5; // must not be used while exploration_uniform is set
  });
  const v = await vectors();
  const { action } = base.json;
  const obsRaw = rawObs(v.obs[0]);
  // A base action in the middle of the range, so clipping at ±1 cannot hide the noise's size.
  const baseRaw = action.min.map((lo, j) => (lo + action.max[j]) / 2);
  const train = await ResidualPolicy.create(dir, { base, training: true, seed: 3, logger: quiet });
  const evalP = await ResidualPolicy.create(dir, { base, training: false, logger: quiet });
  try {
    const clean = await evalP.step(obsRaw, baseRaw);
    let maxDev = 0;
    let sum = 0;
    let n = 0;
    for (let i = 0; i < 200; i++) {
      const s = await train.step(obsRaw, baseRaw);
      s.actionNorm.forEach((a, j) => {
        const d = a - clean.actionNorm[j];
        maxDev = Math.max(maxDev, Math.abs(d));
        sum += d;
        n++;
      });
    }
    assert.ok(maxDev <= 0.2 + 1e-6 && maxDev > 0.15, `noise bounded by u = 0.2 and filling it: max |dev| ${maxDev}`);
    assert.ok(Math.abs(sum / n) < 0.03, `zero-mean: ${sum / n}`);
    assert.deepEqual(await evalP.step(obsRaw, baseRaw), clean, "no noise in evaluation");
  } finally {
    await train.close();
    await evalP.close();
  }
});

test("residual.exploration_rho makes the training noise AR(1)-correlated per joint with the same std; reseed restarts it", async () => {
  const v = await vectors();
  const { action } = base.json;
  const obsRaw = rawObs(v.obs[0]);
  const baseRaw = action.min.map((lo, j) => (lo + action.max[j]) / 2);
  /** Noise series per joint over `n` training steps: executed − clean action, normalised. */
  async function noise(rho: number | undefined, n: number): Promise<{ std: number; lag1: number }> {
    const dir = await patchedCopy<{ residual: Record<string, number> }>(fx.residualDir, `rho-${rho}`, (pj) => {
      pj.residual.exploration_std = 0.05;
      if (rho !== undefined) pj.residual.exploration_rho = rho;
    });
    const train = await ResidualPolicy.create(dir, { base, training: true, seed: 5, logger: quiet });
    const evalP = await ResidualPolicy.create(dir, { base, training: false, logger: quiet });
    try {
      const clean = (await evalP.step(obsRaw, baseRaw)).actionNorm;
      const series: number[][] = clean.map(() => []);
      for (let i = 0; i < n; i++) (await train.step(obsRaw, baseRaw)).actionNorm.forEach((a, j) => series[j].push(a - clean[j]));
      train.reseed(5);
      const again = (await train.step(obsRaw, baseRaw)).actionNorm.map((a, j) => a - clean[j]);
      assert.deepEqual(again.map((x) => x.toFixed(9)), series.map((s) => s[0].toFixed(9)), "reseed restarts the noise, AR state included");
      let ss = 0, cross = 0, count = 0;
      for (const s of series) for (let i = 0; i < s.length; i++) {
        ss += s[i] ** 2;
        if (i > 0) cross += s[i] * s[i - 1];
        count++;
      }
      return { std: Math.sqrt(ss / count), lag1: cross / ss };
    } finally {
      await train.close();
      await evalP.close();
    }
  }
  const white = await noise(undefined, 400);
  const ar = await noise(0.9, 400);
  assert.ok(Math.abs(white.lag1) < 0.1, `white noise is uncorrelated: lag-1 ${white.lag1}`);
  assert.ok(ar.lag1 > 0.8 && ar.lag1 < 0.97, `rho 0.9: lag-1 autocorrelation ${ar.lag1}`);
  for (const r of [white, ar]) assert.ok(r.std > 0.04 && r.std < 0.06, `stationary std stays exploration_std 0.05: ${r.std}`);
  // The schema refuses a correlation of 1 or more (noise that never forgets).
  const bad = await patchedCopy<{ residual: Record<string, number> }>(fx.residualDir, "rho-1", (pj) => (pj.residual.exploration_rho = 1));
  await assert.rejects(ResidualPolicy.create(bad, { base, training: true, logger: quiet }), /exploration_rho in \[0, 1\)/);
});
