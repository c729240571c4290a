import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PolicyPackage, PolicyPackageError, assertCompatible } from "./PolicyPackage.ts";

let root: string;
let counter = 0;

before(async () => {
  root = await mkdtemp(join(tmpdir(), "rlft-pkg-test-"));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");
const OBS = ["q.a", "q.b", "ee.x"];
const ACT = ["a", "b"];

function validJson(files: Record<string, string>): Record<string, unknown> {
  const T = 10;
  return {
    format: "rlft-policy",
    format_version: 1,
    kind: "diffusion",
    version: "bc-test-1",
    created: "2026-11-30T00:15:00Z",
    provenance: { learner: "rlft_learner 0.1.0", torch: "1.13.1", task: "push_cube", episodes: 5, git: "abc" },
    observation: { names: OBS, history: 2, mean: [0, 0, 0], std: [1, 1, 1] },
    action: { names: ACT, horizon: 4, execute_steps: 2, min: [-1, 0], max: [1, 0.04] },
    sampler: { type: "ddim", train_timesteps: T, steps: 3, eta: 0, alphas_cumprod: Array.from({ length: T }, (_, i) => 1 - (i + 1) / (T + 1)), timesteps: [9, 5, 0] },
    files: { sampler: "sampler.onnx", denoiser: "denoiser.onnx" },
    sha256: Object.fromEntries(Object.entries(files).map(([n, c]) => [n, sha(c)])),
  };
}

/** Writes a package; `edit` may change policy.json before it is written. */
async function writePackage(edit: (j: Record<string, unknown>) => void = () => {}, files = { "sampler.onnx": "S", "denoiser.onnx": "D" }): Promise<string> {
  const dir = join(root, `pkg${counter++}`);
  await mkdir(dir);
  for (const [n, c] of Object.entries(files)) await writeFile(join(dir, n), c);
  const json = validJson(files);
  edit(json);
  await writeFile(join(dir, "policy.json"), JSON.stringify(json));
  return dir;
}

async function loadError(dir: string): Promise<PolicyPackageError> {
  try {
    await PolicyPackage.load(dir);
  } catch (e) {
    assert.ok(e instanceof PolicyPackageError, `expected PolicyPackageError, got ${String(e)}`);
    return e;
  }
  assert.fail("load() resolved; expected an error");
}

test("a valid package loads", async () => {
  const dir = await writePackage();
  const pkg = await PolicyPackage.load(dir);
  assert.equal(pkg.obsDim, 3);
  assert.equal(pkg.actionDim, 2);
  assert.equal(pkg.samplerPath, join(dir, "sampler.onnx"));
  assert.doesNotThrow(() => assertCompatible(pkg, { observationNames: OBS, actionNames: ACT }));
});

test("a missing directory names policy.json", async () => {
  const e = await loadError(join(root, "nope"));
  assert.equal(e.code, "missing_file");
  assert.match(e.message, /nope\/policy\.json/);
});

test("invalid JSON is reported with the file", async () => {
  const dir = await writePackage();
  await writeFile(join(dir, "policy.json"), "{ not json");
  const e = await loadError(dir);
  assert.equal(e.code, "invalid_json");
  assert.match(e.message, /policy\.json is not valid JSON/);
  assert.ok(e.cause instanceof SyntaxError);
});

test("schema errors name the file and every bad field", async () => {
  const dir = await writePackage((j) => {
    (j.observation as Record<string, unknown>).history = 0;
    (j.action as Record<string, unknown>).horizon = "16";
    j.kind = "flow";
  });
  const e = await loadError(dir);
  assert.equal(e.code, "schema");
  assert.ok(e.message.includes(join(dir, "policy.json")));
  assert.match(e.message, /observation\.history/);
  assert.match(e.message, /action\.horizon/);
  assert.match(e.message, /kind/);
});

test("unknown keys are rejected", async () => {
  const dir = await writePackage((j) => {
    j.extra = 1;
    (j.sampler as Record<string, unknown>).cfg_weight = 2;
  });
  const e = await loadError(dir);
  assert.equal(e.code, "schema");
  assert.match(e.message, /extra/);
  assert.match(e.message, /sampler.*cfg_weight|cfg_weight/);
});

test("a file name that escapes the package is rejected", async () => {
  const dir = await writePackage((j) => {
    j.files = { sampler: "../sampler.onnx", denoiser: "denoiser.onnx" };
  });
  const e = await loadError(dir);
  assert.equal(e.code, "schema");
  assert.match(e.message, /files\.sampler/);
});

test("inconsistent dims are listed", async () => {
  const dir = await writePackage((j) => {
    (j.observation as Record<string, unknown>).mean = [0, 0];
    (j.action as Record<string, unknown>).max = [1];
    (j.sampler as Record<string, unknown>).timesteps = [12, 5, 0];
  });
  const e = await loadError(dir);
  assert.equal(e.code, "dims");
  assert.match(e.message, /observation\.mean: expected 3 values .* found 2/);
  assert.match(e.message, /action\.max: expected 2 values .* found 1/);
  assert.match(e.message, /sampler\.timesteps\[0\]: expected < train_timesteps 10, found 12/);
});

test("non-descending timesteps and execute_steps > horizon are refused", async () => {
  const dir = await writePackage((j) => {
    (j.sampler as Record<string, unknown>).timesteps = [5, 9, 0];
    (j.action as Record<string, unknown>).execute_steps = 5;
  });
  const e = await loadError(dir);
  assert.match(e.message, /strictly descending/);
  assert.match(e.message, /execute_steps: expected ≤ horizon 4, found 5/);
});

test("sha256 mismatch names the file and both hashes", async () => {
  const dir = await writePackage();
  await writeFile(join(dir, "denoiser.onnx"), "tampered");
  const e = await loadError(dir);
  assert.equal(e.code, "sha256_mismatch");
  assert.ok(e.message.includes(join(dir, "denoiser.onnx")));
  assert.ok(e.message.includes(sha("D")), "expected hash");
  assert.ok(e.message.includes(sha("tampered")), "found hash");
});

test("a listed file without a hash is refused", async () => {
  const dir = await writePackage((j) => {
    j.sha256 = { "sampler.onnx": sha("S") };
  });
  const e = await loadError(dir);
  assert.equal(e.code, "dims");
  assert.match(e.message, /no hash for denoiser\.onnx/);
});

test("a policy may read a subset of what the robot publishes, in its own order", async () => {
  const pkg = await PolicyPackage.load(await writePackage());
  assertCompatible(pkg, { observationNames: ["cube.x", "ee.x", "q.b", "q.a"], actionNames: ["a", "b"] });
});

test("assertCompatible lists what the policy expects and what the robot has", async () => {
  const pkg = await PolicyPackage.load(await writePackage());
  assert.throws(
    () => assertCompatible(pkg, { observationNames: ["q.a", "q.b", "ee.y"], actionNames: ["b", "a"] }),
    (e: unknown) => {
      assert.ok(e instanceof PolicyPackageError);
      assert.equal(e.code, "incompatible");
      assert.ok(e.message.includes("policy expects observation [q.a, q.b, ee.x] but the robot publishes [q.a, q.b, ee.y]"), e.message);
      assert.match(e.message, /\(missing ee\.x\)/);
      assert.match(e.message, /action \[a, b\] but the robot takes \[b, a\] \(same names in a different order\)/);
      return true;
    },
  );
});

test("a 40 MB policy.json is refused by its size before it is read (diffusion, residual and VLA loaders)", async () => {
  const { truncate } = await import("node:fs/promises");
  const { policyKind } = await import("./vla/VlaPackage.ts");
  const dir = await mkdtemp(join(tmpdir(), "rlft-bigjson-"));
  try {
    await writeFile(join(dir, "policy.json"), "");
    await truncate(join(dir, "policy.json"), 40e6); // sparse: costs no disk, reads as 40 MB of zeros
    for (const load of [() => PolicyPackage.load(dir), () => policyKind(dir)]) {
      await assert.rejects(load(), (e: unknown) => e instanceof PolicyPackageError && e.code === "too_large" && /policy\.json is 40\.0 MB; .* at most 1 MiB/.test(e.message));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
