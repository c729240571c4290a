/**
 * A policy package on disk (`policy.json` + ONNX files), validated before anything loads.
 * Format: docs/contracts.md § "Policy package". The learner writes it; the robot refuses what does not verify.
 */
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { createReadStream } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import { PolicyPackageError } from "./PolicyPackageError.ts";
import { AdvantageConditioningSchema } from "./AdvantageConditioning.ts";

export { PolicyPackageError } from "./PolicyPackageError.ts";

/** A plain file name inside the package directory (no path separators, so a package cannot point outside itself). */
const FileName = z.string().regex(/^[A-Za-z0-9_.-]+$/, "a plain file name inside the package directory").refine((s) => s !== "." && s !== "..", "a file name, not . or ..");
const Hex64 = z.string().regex(/^[0-9a-f]{64}$/, "64 lowercase hex digits (sha256)");
const Finite = z.number().refine(Number.isFinite, "a finite number");
const CameraName = z.string().regex(/^[a-z][a-z0-9_]*$/, "a camera name: lowercase letters, digits, _ (it names the /camera/<name>/image topic)");

/**
 * One camera a policy sees (policy.json observation.images): the ONNX input it feeds, LeRobot's feature key, and the
 * frames the robot must deliver — rgb8, exactly height × width (the graph does not resize), uint8 HWC.
 */
export const ImageInputSchema = z.strictObject({
  camera: CameraName,
  /** LeRobot's feature name, `observation.images.<camera>`. */
  key: z.string().min(1),
  /** The ONNX input name, `image.<camera>`. */
  input: z.string().regex(/^image\.[a-z][a-z0-9_]*$/, "image.<camera>"),
  height: z.number().int().min(8).max(4096),
  width: z.number().int().min(8).max(4096),
  encoding: z.literal("rgb8"),
  dtype: z.literal("uint8"),
  layout: z.literal("HWC"),
  /** Frames per input; 1 = the latest frame at or before the tick. */
  history: z.literal(1),
  /** What the graph does to the bytes (informational; the robot feeds them as they are). */
  preprocessing: z.string(),
});
/** A parsed observation.images entry. */
export type ImageInput = z.infer<typeof ImageInputSchema>;

/** zod schema of a diffusion `policy.json` (docs/contracts.md); unknown keys are rejected at every level. */
export const DiffusionPolicyJsonSchema = z.strictObject({
  format: z.literal("rlft-policy"),
  format_version: z.literal(1),
  kind: z.literal("diffusion"),
  /** Unique per package; the robot logs it with every action it publishes. */
  version: z.string().min(1),
  created: z.string().min(1),
  /** Where the weights came from (informational, never used for control). */
  provenance: z.strictObject({
    learner: z.string(),
    torch: z.string(),
    task: z.string(),
    episodes: z.number().int().nonnegative(),
    git: z.string(),
  }),
  observation: z.strictObject({
    names: z.array(z.string().min(1)).min(1),
    /** Observations per policy input, oldest first. */
    history: z.number().int().min(1),
    mean: z.array(Finite),
    /** obs_norm = (x - mean) / std, so every std must be positive. */
    std: z.array(Finite.refine((v) => v > 0, "std > 0")),
    /** Cameras the policy sees, in the sampler's input order; absent = a state-only policy. */
    images: z.array(ImageInputSchema).min(1).optional(),
  }),
  action: z.strictObject({
    names: z.array(z.string().min(1)).min(1),
    /** H: actions predicted per chunk. */
    horizon: z.number().int().min(1),
    /** K: actions executed before re-planning (K ≤ H). */
    execute_steps: z.number().int().min(1),
    min: z.array(Finite),
    max: z.array(Finite),
  }),
  sampler: z.strictObject({
    type: z.literal("ddim"),
    train_timesteps: z.number().int().min(1),
    steps: z.number().int().min(1),
    /** Only deterministic DDIM (eta 0) is implemented, in the graph and in policies/ddim.ts. */
    eta: z.literal(0),
    alphas_cumprod: z.array(Finite.refine((v) => v > 0 && v <= 1, "in (0, 1]")),
    timesteps: z.array(z.number().int().nonnegative()),
  }),
  /** value: the RECAP value head (value.onnx), present when `advantage` is. */
  /** encoder: the camera encoders alone (images → features), present when observation.images is. */
  files: z.strictObject({ sampler: FileName, denoiser: FileName, value: FileName.optional(), encoder: FileName.optional() }),
  sha256: z.record(FileName, Hex64),
  /** Advantage conditioning (RECAP, docs/recap.md): indicator input, what inference conditions on, CFG β. Absent = plain policy. */
  advantage: AdvantageConditioningSchema.optional(),
});

/** zod schema of a residual `policy.json` (docs/protocol.md § Residual policy package). */
export const ResidualPolicyJsonSchema = z.strictObject({
  format: z.literal("rlft-policy"),
  format_version: z.literal(1),
  kind: z.literal("residual"),
  version: z.string().min(1),
  created: z.string().min(1),
  /** Informational (learner, torch, task, updates, git, ...); never used for control. */
  provenance: z.record(z.string(), z.unknown()),
  /** The base package this residual was trained on; the robot refuses it on any other base. */
  base: z.strictObject({ version: z.string().min(1), policy_json_sha256: Hex64 }),
  /** Same stats as the base package. */
  observation: z.strictObject({
    names: z.array(z.string().min(1)).min(1),
    mean: z.array(Finite),
    std: z.array(Finite.refine((v) => v > 0, "std > 0")),
    /** The base's cameras, which residual.onnx reads too (inputs between obs and base_action); absent = state only. */
    images: z.array(ImageInputSchema).min(1).optional(),
  }),
  action: z.strictObject({ names: z.array(z.string().min(1)).min(1), min: z.array(Finite), max: z.array(Finite) }),
  residual: z.strictObject({
    /** residual = tanh(MLP) · scale, so |residual| ≤ scale in normalised units. */
    scale: Finite.refine((v) => v > 0, "scale > 0"),
    /** Std of the Gaussian exploration noise added in training mode only. */
    exploration_std: Finite.refine((v) => v >= 0, "exploration_std >= 0"),
    /** When present and > 0 (the learner's env warm-up package), training mode adds U(−u, u) instead of the Gaussian. */
    exploration_uniform: Finite.refine((v) => v >= 0, "exploration_uniform >= 0").optional(),
    /** Temporal correlation of the Gaussian exploration noise per step (AR(1)); absent or 0 = white noise. */
    exploration_rho: Finite.refine((v) => v >= 0 && v < 1, "exploration_rho in [0, 1)").optional(),
  }),
  /**
   * critic: the learner's Q ensemble (obs, action → q [B, E]), for critic-ranked best-of-N base chunks (optional).
   * chunk_critic: its chunk-level Q ensemble (obs, chunk [B, K·A] → q [B, E]) over the K executed base actions of a
   * chunk, for best_of_select chunk_critic (optional; with `chunk_critic.steps`).
   */
  files: z.strictObject({ actor: FileName, critic: FileName.optional(), chunk_critic: FileName.optional() }),
  /** K of chunk_critic.onnx: how many base actions of a chunk it scores (the base package's action.execute_steps). */
  chunk_critic: z.strictObject({ steps: z.number().int().min(1) }).optional(),
  sha256: z.record(FileName, Hex64),
});

/** zod schema of any `policy.json`, discriminated by `kind`. */
export const PolicyJsonSchema = z.discriminatedUnion("kind", [DiffusionPolicyJsonSchema, ResidualPolicyJsonSchema]);

/** A parsed diffusion `policy.json`. */
export type DiffusionPolicyJson = z.infer<typeof DiffusionPolicyJsonSchema>;
/** A parsed residual `policy.json`. */
export type ResidualPolicyJson = z.infer<typeof ResidualPolicyJsonSchema>;
/** Any parsed `policy.json`. */
export type PolicyJson = z.infer<typeof PolicyJsonSchema>;

/** What the robot publishes; compared with the package by {@link assertCompatible}. */
export interface RobotInterface {
  observationNames: readonly string[];
  actionNames: readonly string[];
  /** Cameras the robot publishes (/camera/<name>/image); absent = not checked (a caller that does not know). */
  cameras?: readonly string[];
  /** Frame sizes of those cameras where the launch file states them; a camera absent here is not size-checked. */
  cameraSizes?: Readonly<Record<string, { width: number; height: number }>>;
}

/** A validated, hash-verified policy package. */
export class PolicyPackage {
  /** Absolute package directory. */
  readonly dir: string;
  /** The validated `policy.json`. */
  readonly json: DiffusionPolicyJson;

  private constructor(dir: string, json: DiffusionPolicyJson) {
    this.dir = dir;
    this.json = json;
  }

  /** Absolute path of the whole-sampler graph. */
  get samplerPath(): string {
    return join(this.dir, this.json.files.sampler);
  }

  /** Absolute path of the one-step denoiser graph. */
  get denoiserPath(): string {
    return join(this.dir, this.json.files.denoiser);
  }

  /** Absolute path of the camera encoders' graph (image packages only). */
  get encoderPath(): string | null {
    return this.json.files.encoder ? join(this.dir, this.json.files.encoder) : null;
  }

  /** The cameras the policy sees, in input order ([] for a state-only policy). */
  get images(): readonly ImageInput[] {
    return this.json.observation.images ?? [];
  }

  get obsDim(): number {
    return this.json.observation.names.length;
  }

  get actionDim(): number {
    return this.json.action.names.length;
  }

  /** Reads, validates and hash-checks the diffusion package in `dir`; throws {@link PolicyPackageError}. */
  static async load(dir: string): Promise<PolicyPackage> {
    const { dir: abs, jsonPath, json } = await readPolicyJson(dir);
    if (json.kind !== "diffusion") {
      throw new PolicyPackageError("kind", `${jsonPath} is a ${json.kind} package (base ${json.base.version}), not a diffusion policy — load it with ResidualPolicy.create(dir, { base })`, { path: jsonPath });
    }
    checkDims(json, jsonPath);
    await verifyHashes(abs, json);
    return new PolicyPackage(abs, json);
  }
}

/**
 * Largest policy.json read: the learner writes a few KB (names, normalisation statistics, the sampler schedule); a
 * file of many MB is not one, and parsing it would stall the robot's event loop and hold its memory (a 40 MB
 * policy.json was accepted, issue 24). It is refused before it is read.
 */
export const MAX_POLICY_JSON_BYTES = 1 << 20;

/**
 * Reads a package's JSON file (policy.json, a VLA's norm stats) after checking its size against `maxBytes`; throws
 * {@link PolicyPackageError} `too_large` or `missing_file`.
 */
export async function readBoundedFile(path: string, maxBytes = MAX_POLICY_JSON_BYTES): Promise<Buffer> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (cause) {
    throw new PolicyPackageError("missing_file", `Cannot read ${path}: ${(cause as Error).message} — is ${dirname(path)} a policy package written by the learner?`, { cause, path });
  }
  if (size > maxBytes) {
    throw new PolicyPackageError("too_large", `${path} is ${(size / 1e6).toFixed(1)} MB; a package's JSON holds names and statistics, at most ${(maxBytes / 2 ** 20).toFixed(0)} MiB — this is not a file the learner wrote`, { path });
  }
  try {
    return await readFile(path);
  } catch (cause) {
    throw new PolicyPackageError("missing_file", `Cannot read ${path}: ${(cause as Error).message}`, { cause, path });
  }
}

/** Reads and schema-checks `<dir>/policy.json` (any kind); `bytes` are the file as read, for hashing. */
export async function readPolicyJson(dir: string): Promise<{ dir: string; jsonPath: string; json: PolicyJson; bytes: Buffer }> {
  const abs = resolve(dir);
  const jsonPath = join(abs, "policy.json");
  const bytes = await readBoundedFile(jsonPath);
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString("utf8"));
  } catch (cause) {
    throw new PolicyPackageError("invalid_json", `${jsonPath} is not valid JSON: ${(cause as Error).message}`, { cause, path: jsonPath });
  }
  // Anything not marked residual is checked as a diffusion package, so its errors list every bad field (kind included).
  const isResidual = raw !== null && typeof raw === "object" && (raw as { kind?: unknown }).kind === "residual";
  const parsed = (isResidual ? ResidualPolicyJsonSchema : DiffusionPolicyJsonSchema).safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  - ${formatPath(i.path)}: ${i.message}`);
    throw new PolicyPackageError("schema", `${jsonPath} does not match the rlft-policy v1 schema:\n${lines.join("\n")}`, { cause: parsed.error, path: jsonPath });
  }
  return { dir: abs, jsonPath, json: parsed.data, bytes };
}

/** Throws a {@link PolicyPackageError} (`incompatible`) listing every name mismatch between package and robot. */
/** The cameras a package's policy.json says it sees (observation.images), without loading or verifying it; [] if none. */
export async function packageCameras(dir: string): Promise<string[]> {
  const raw = JSON.parse(await readFile(join(resolve(dir), "policy.json"), "utf8")) as { observation?: { images?: { camera?: unknown }[] } };
  return (raw.observation?.images ?? []).map((i) => String(i.camera));
}

/** The observation (state) names a package's policy.json says its policy reads, without loading or verifying it; [] if none. */
export async function packageObservationNames(dir: string): Promise<string[]> {
  const raw = JSON.parse(await readFile(join(resolve(dir), "policy.json"), "utf8")) as { observation?: { names?: unknown[] } };
  return (raw.observation?.names ?? []).map(String);
}

export function assertCompatible(pkg: PolicyPackage, robot: RobotInterface): void {
  const problems: string[] = [];
  const { observation, action } = pkg.json;
  // A policy may read fewer signals than the robot publishes (a pixel policy reads the joints of an /observation that
  // in simulation also holds the scripted expert's privileged state); every one it reads must be there.
  const missing = observation.names.filter((n) => !robot.observationNames.includes(n));
  if (missing.length > 0) {
    problems.push(`policy expects observation [${observation.names.join(", ")}] but the robot publishes [${robot.observationNames.join(", ")}] (missing ${missing.join(", ")})`);
  }
  if (!sameNames(action.names, robot.actionNames)) {
    problems.push(`policy outputs action [${action.names.join(", ")}] but the robot takes [${robot.actionNames.join(", ")}]${diffNote(action.names, robot.actionNames)}`);
  }
  if (robot.cameras !== undefined) {
    for (const img of pkg.images) {
      if (!robot.cameras.includes(img.camera)) {
        problems.push(`policy sees camera "${img.camera}" (${img.width}×${img.height} rgb8) but the robot has ${robot.cameras.length ? `only ${robot.cameras.join(", ")}` : "no cameras"} — add a "${img.camera}" camera to the launch file's cameras, or use a policy trained on the cameras this robot has`);
        continue;
      }
      const size = robot.cameraSizes?.[img.camera];
      if (size && (size.width !== img.width || size.height !== img.height)) {
        problems.push(`camera "${img.camera}" sends ${size.width}×${size.height} frames but the policy was trained on ${img.width}×${img.height} — set the camera's size to ${img.width}×${img.height} in the launch file (a sim camera: width/height on its entry, or its intrinsics file), or retrain on this camera's frames (the policy does not resize)`);
      }
    }
  }
  if (problems.length > 0) {
    throw new PolicyPackageError("incompatible", `Policy ${pkg.json.version} (${pkg.dir}) does not fit this robot:\n  - ${problems.join("\n  - ")}`, { path: pkg.dir });
  }
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((n, i) => n === b[i]);
}

function diffNote(expected: readonly string[], found: readonly string[]): string {
  const missing = expected.filter((n) => !found.includes(n));
  const extra = found.filter((n) => !expected.includes(n));
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`missing ${missing.join(", ")}`);
  if (extra.length > 0) parts.push(`unexpected ${extra.join(", ")}`);
  if (parts.length === 0) parts.push("same names in a different order");
  return ` (${parts.join("; ")})`;
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(root)";
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i === 0 ? "" : "."}${String(p)}`)).join("");
}

function checkDims(json: DiffusionPolicyJson, jsonPath: string): void {
  const problems: string[] = [];
  const { observation: o, action: a, sampler: s } = json;
  const n = o.names.length;
  const m = a.names.length;
  if (o.mean.length !== n) problems.push(`observation.mean: expected ${n} values (one per observation name), found ${o.mean.length}`);
  if (o.std.length !== n) problems.push(`observation.std: expected ${n} values (one per observation name), found ${o.std.length}`);
  if (a.min.length !== m) problems.push(`action.min: expected ${m} values (one per action name), found ${a.min.length}`);
  if (a.max.length !== m) problems.push(`action.max: expected ${m} values (one per action name), found ${a.max.length}`);
  a.min.forEach((lo, i) => {
    if (i < a.max.length && !(a.max[i] >= lo)) problems.push(`action.max[${i}]: expected ≥ action.min[${i}] = ${lo}, found ${a.max[i]}`);
  });
  if (new Set(o.names).size !== n) problems.push("observation.names: names must be unique");
  if (new Set(a.names).size !== m) problems.push("action.names: names must be unique");
  if (a.execute_steps > a.horizon) problems.push(`action.execute_steps: expected ≤ horizon ${a.horizon}, found ${a.execute_steps}`);
  if (s.alphas_cumprod.length !== s.train_timesteps) problems.push(`sampler.alphas_cumprod: expected ${s.train_timesteps} values (train_timesteps), found ${s.alphas_cumprod.length}`);
  if (s.timesteps.length !== s.steps) problems.push(`sampler.timesteps: expected ${s.steps} values (steps), found ${s.timesteps.length}`);
  s.timesteps.forEach((t, i) => {
    if (t >= s.train_timesteps) problems.push(`sampler.timesteps[${i}]: expected < train_timesteps ${s.train_timesteps}, found ${t}`);
    if (i > 0 && t >= s.timesteps[i - 1]) problems.push(`sampler.timesteps[${i}]: expected strictly descending, found ${s.timesteps[i - 1]} then ${t}`);
  });
  for (const f of Object.values(json.files)) {
    if (f !== undefined && !(f in json.sha256)) problems.push(`sha256: no hash for ${f} (every file must be hashed)`);
  }
  const adv = json.advantage;
  if (adv?.encoding === "text") problems.push(`advantage.encoding: "text" conditions a VLA's instruction; a diffusion policy takes the indicator as an "index" input`);
  if (adv?.encoding === "index" && ["obs", "noise", "x", "t"].includes(adv.input)) problems.push(`advantage.input: "${adv.input}" is already a sampler input; name the indicator input something else`);
  if (adv?.value && json.files.value === undefined) problems.push("files.value: advantage.value describes a value head but files has no value entry");
  const imgs = o.images ?? [];
  if (imgs.length > 0 && json.files.encoder === undefined) problems.push("files.encoder: observation.images needs the camera encoders' graph (encoder.onnx)");
  if (new Set(imgs.map((i) => i.camera)).size !== imgs.length) problems.push("observation.images: camera names must be unique");
  imgs.forEach((img, i) => {
    if (img.input !== `image.${img.camera}`) problems.push(`observation.images[${i}].input: expected "image.${img.camera}", found "${img.input}"`);
    if (img.key !== `observation.images.${img.camera}`) problems.push(`observation.images[${i}].key: expected "observation.images.${img.camera}", found "${img.key}"`);
  });
  if (problems.length > 0) {
    throw new PolicyPackageError("dims", `${jsonPath} is inconsistent:\n  - ${problems.join("\n  - ")}`, { path: jsonPath });
  }
}

/** Checks every file listed in `json.sha256` against its hash; throws {@link PolicyPackageError} `sha256_mismatch`. */
export async function verifyHashes(dir: string, json: PolicyJson): Promise<void> {
  for (const [name, expected] of Object.entries(json.sha256)) {
    const path = join(dir, name);
    // Streamed: ONNX external-data files can be larger than readFile's 2 GiB limit.
    const hash = createHash("sha256");
    try {
      for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
    } catch (cause) {
      throw new PolicyPackageError("missing_file", `Cannot read ${path} (listed in policy.json sha256): ${(cause as Error).message}`, { cause, path });
    }
    const found = hash.digest("hex");
    if (found !== expected) {
      throw new PolicyPackageError("sha256_mismatch", `sha256 mismatch for ${path}: policy.json expects ${expected}, the file hashes to ${found} — the package is corrupt or was modified; re-export it`, { path });
    }
  }
}
