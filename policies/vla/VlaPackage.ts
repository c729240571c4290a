/**
 * A VLA policy package on disk: policy.json (kind "vla") + tokenizer.json + prefix ONNX + action-expert ONNX +
 * norm_stats.json. Format: docs/policy-package.md. Loaded, hash-checked and checked for internal consistency here;
 * {@link assertVlaCompatible} then refuses it on a robot whose cameras or observation names do not match.
 */
import { join, resolve } from "node:path";
import { z } from "zod";
import { PolicyPackageError } from "../PolicyPackageError.ts";
import { readBoundedFile, verifyHashes, type PolicyJson } from "../PolicyPackage.ts";
import { Tokenizer } from "./Tokenizer.ts";
import type { ImageTransform } from "./preprocess.ts";

const FileName = z.string().regex(/^[A-Za-z0-9_.-]+$/, "a plain file name inside the package directory");
const Hex64 = z.string().regex(/^[0-9a-f]{64}$/, "64 lowercase hex digits (sha256)");
const Finite = z.number().refine(Number.isFinite, "a finite number");
const Positive = Finite.refine((v) => v > 0, "> 0");
const Names = z.array(z.string().min(1)).min(1);

/** zod schema of a VLA `policy.json`; unknown keys are rejected at every level. */
export const VlaPolicyJsonSchema = z.strictObject({
  format: z.literal("rlft-policy"),
  format_version: z.literal(1),
  kind: z.literal("vla"),
  version: z.string().min(1),
  created: z.string().min(1),
  /** Informational only. */
  provenance: z.record(z.string(), z.unknown()),
  /** One entry per camera the model sees, in the prefix graph's input order. */
  cameras: z
    .array(
      z.strictObject({
        /** Robot camera name: frames come from /camera/<name>/image. */
        name: z.string().regex(/^[A-Za-z0-9_]+$/, "letters, digits, _"),
        /** Input name in the prefix graph. */
        input: z.string().min(1),
        layout: z.enum(["NCHW", "NHWC"]),
        encoding: z.literal("rgb8"),
        /** [top, left, height, width] in source pixels. */
        crop: z.array(z.number().int().nonnegative()).length(4),
        height: z.number().int().min(1),
        width: z.number().int().min(1),
        mean: z.array(Finite).length(3),
        std: z.array(Positive).length(3),
      }),
    )
    .min(1),
  language: z.strictObject({
    tokenizer: FileName,
    input_ids: z.string().min(1),
    /** Input name of the 1/0 mask, or null when the graph takes none. */
    attention_mask: z.string().min(1).nullable(),
    /** Tokens per instruction the graph takes (the tokenizer must pad to exactly this). */
    max_length: z.number().int().min(1),
    /** Rows of the graph's embedding table: every id the tokenizer produces must be below it. */
    vocab_size: z.number().int().min(1),
    pad_id: z.number().int().nonnegative(),
  }),
  state: z.strictObject({
    /** Observation names the state input is made of, in order (a subset of the robot's observation). */
    names: Names,
    input: z.string().min(1),
    normalization: z.enum(["mean_std", "min_max", "quantile", "none"]),
  }),
  action: z.strictObject({
    names: Names,
    horizon: z.number().int().min(1),
    execute_steps: z.number().int().min(1),
    normalization: z.enum(["mean_std", "min_max", "quantile", "none"]),
    /**
     * Delta actions (openpi DeltaActions): per action, the state name whose value at the chunk's first tick is added
     * to the unnormalised action, or null for an absolute action. Absent = every action absolute.
     */
    relative_to_state: z.array(z.string().min(1).nullable()).optional(),
  }),
  /** openpi-style {"norm_stats": {"state": {...}, "actions": {...}}}. */
  norm_stats: FileName,
  flow: z.strictObject({
    steps: z.number().int().min(1),
    method: z.literal("euler"),
    /** Integration runs from t_start (noise) to t_end (actions): pi0 uses 1 → 0. */
    t_start: Finite,
    t_end: Finite,
    time_input: z.string().min(1),
    x_input: z.string().min(1),
    velocity_output: z.string().min(1),
    /** Clip the integrated chunk to [-1, 1] before unnormalising (min_max / quantile actions). */
    clip: z.boolean(),
  }),
  /** prefix: run once per chunk; every output is fed to action_expert under the same name. */
  files: z.strictObject({ prefix: FileName, action_expert: FileName }),
  sha256: z.record(FileName, Hex64),
});

/** A parsed VLA policy.json. */
export type VlaPolicyJson = z.infer<typeof VlaPolicyJsonSchema>;

/** Normalisation stats of one quantity. */
export interface NormStats {
  kind: VlaPolicyJson["state"]["normalization"];
  /** x_norm = (x − offset) / scale; x = x_norm · scale + offset. */
  offset: number[];
  scale: number[];
}

/** What a robot offers a VLA; compared with the package by {@link assertVlaCompatible}. */
export interface VlaRobotInterface {
  observationNames: readonly string[];
  actionNames: readonly string[];
  /** Camera names the robot publishes (/camera/<name>/image). */
  cameras: readonly string[];
}

/** A validated, hash-verified VLA package with its tokenizer and stats loaded. */
export class VlaPackage {
  readonly dir: string;
  readonly json: VlaPolicyJson;
  readonly tokenizer: Tokenizer;
  readonly state: NormStats;
  readonly actions: NormStats;

  private constructor(dir: string, json: VlaPolicyJson, tokenizer: Tokenizer, state: NormStats, actions: NormStats) {
    this.dir = dir;
    this.json = json;
    this.tokenizer = tokenizer;
    this.state = state;
    this.actions = actions;
  }

  get prefixPath(): string {
    return join(this.dir, this.json.files.prefix);
  }

  get expertPath(): string {
    return join(this.dir, this.json.files.action_expert);
  }

  /** Image transforms, one per camera, in policy.json order. */
  get transforms(): (ImageTransform & { name: string; input: string })[] {
    return this.json.cameras.map((c) => ({ name: c.name, input: c.input, crop: c.crop, height: c.height, width: c.width, mean: c.mean, std: c.std, layout: c.layout }));
  }

  /** Reads, schema-checks, hash-checks and cross-checks the package in `dir`; throws {@link PolicyPackageError}. */
  static async load(dir: string): Promise<VlaPackage> {
    const abs = resolve(dir);
    const jsonPath = join(abs, "policy.json");
    const raw = await readJson(jsonPath);
    const parsed = VlaPolicyJsonSchema.safeParse(raw);
    if (!parsed.success) {
      const lines = parsed.error.issues.map((i) => `  - ${i.path.join(".") || "(root)"}: ${i.message}`);
      throw new PolicyPackageError("schema", `${jsonPath} does not match the rlft-policy v1 VLA schema:\n${lines.join("\n")}`, { path: jsonPath });
    }
    const json = parsed.data;
    for (const f of [...Object.values(json.files), json.language.tokenizer, json.norm_stats]) {
      if (!(f in json.sha256)) throw new PolicyPackageError("dims", `${jsonPath}: sha256 has no hash for ${f} (every file the robot opens must be hashed)`, { path: jsonPath });
    }
    await verifyHashes(abs, json as unknown as PolicyJson);
    const tokenizer = await Tokenizer.load(join(abs, json.language.tokenizer));
    checkTokenizer(json, tokenizer);
    const statsPath = join(abs, json.norm_stats);
    const stats = ((await readJson(statsPath)) as { norm_stats?: Record<string, Record<string, number[]>> }).norm_stats ?? {};
    const state = normStats(stats.state, json.state.normalization, json.state.names.length, `${statsPath} norm_stats.state`);
    const actions = normStats(stats.actions, json.action.normalization, json.action.names.length, `${statsPath} norm_stats.actions`);
    const rel = json.action.relative_to_state;
    if (rel) {
      if (rel.length !== json.action.names.length) throw new PolicyPackageError("dims", `${jsonPath}: action.relative_to_state has ${rel.length} entries, action.names ${json.action.names.length} — one state name (or null) per action`, { path: jsonPath });
      const unknown = rel.filter((n): n is string => n !== null && !json.state.names.includes(n));
      if (unknown.length > 0) throw new PolicyPackageError("dims", `${jsonPath}: action.relative_to_state names [${unknown.join(", ")}], which are not in state.names [${json.state.names.join(", ")}]`, { path: jsonPath });
    }
    if (json.action.execute_steps > json.action.horizon) throw new PolicyPackageError("dims", `${jsonPath}: action.execute_steps ${json.action.execute_steps} > horizon ${json.action.horizon}`, { path: jsonPath });
    return new VlaPackage(abs, json, tokenizer, state, actions);
  }
}

/** `policy.json`'s kind without validating the rest (to pick the loader). */
export async function policyKind(dir: string): Promise<string> {
  const raw = (await readJson(join(resolve(dir), "policy.json"))) as { kind?: unknown };
  return typeof raw?.kind === "string" ? raw.kind : "unknown";
}

/** The tokenizer must produce what the graph takes: fixed length, pad id, ids inside the embedding table. */
function checkTokenizer(json: VlaPolicyJson, tok: Tokenizer): void {
  const L = json.language;
  const problems: string[] = [];
  if (tok.fixedLength !== L.max_length) problems.push(`tokenizer pads to ${tok.fixedLength === null ? "no fixed length" : tok.fixedLength} tokens, the model takes language.max_length = ${L.max_length}`);
  if (tok.padId !== null && tok.padId !== L.pad_id) problems.push(`tokenizer pad id ${tok.padId}, policy.json language.pad_id ${L.pad_id}`);
  const maxId = Math.max(...tok.vocab.values());
  if (maxId >= L.vocab_size) problems.push(`tokenizer ids go up to ${maxId}, the model's embedding table has language.vocab_size = ${L.vocab_size} rows`);
  if (problems.length > 0) {
    throw new PolicyPackageError("tokenizer", `${tok.path} does not match the model in policy.json:\n  - ${problems.join("\n  - ")}\n  Re-export the package with the tokenizer it was trained with.`, { path: tok.path });
  }
}

function normStats(s: Record<string, number[]> | undefined, kind: NormStats["kind"], n: number, where: string): NormStats {
  const need = (key: string): number[] => {
    const v = s?.[key];
    if (!Array.isArray(v) || v.length !== n || !v.every(Number.isFinite)) throw new PolicyPackageError("dims", `${where}.${key}: expected ${n} finite numbers for ${kind} normalisation, found ${Array.isArray(v) ? `${v.length} values` : "none"}`);
    return v;
  };
  switch (kind) {
    case "none":
      return { kind, offset: new Array<number>(n).fill(0), scale: new Array<number>(n).fill(1) };
    case "mean_std":
      return { kind, offset: need("mean"), scale: need("std").map((v) => Math.max(v, 1e-8)) };
    case "min_max":
    case "quantile": {
      const [lo, hi] = kind === "min_max" ? [need("min"), need("max")] : [need("q01"), need("q99")];
      // x_norm = 2 (x − lo) / (hi − lo) − 1 = (x − mid) / half.
      return { kind, offset: lo.map((l, i) => (l + hi[i]) / 2), scale: lo.map((l, i) => Math.max((hi[i] - l) / 2, 1e-8)) };
    }
  }
}

/** Refuses a package whose cameras, state or action names the robot does not have; the message names each mismatch. */
export function assertVlaCompatible(pkg: VlaPackage, robot: VlaRobotInterface): void {
  const problems: string[] = [];
  const missingCams = pkg.json.cameras.map((c) => c.name).filter((c) => !robot.cameras.includes(c));
  if (missingCams.length > 0) {
    problems.push(`policy needs camera(s) [${missingCams.join(", ")}] but the robot has [${robot.cameras.join(", ") || "no camera"}] — enable/rename the camera in the launch file`);
  }
  const missingState = pkg.json.state.names.filter((n) => !robot.observationNames.includes(n));
  if (missingState.length > 0) problems.push(`policy state needs observation(s) [${missingState.join(", ")}] that the robot does not publish`);
  const a = pkg.json.action.names;
  if (a.length !== robot.actionNames.length || a.some((n, i) => n !== robot.actionNames[i])) {
    problems.push(`policy outputs action [${a.join(", ")}] but the robot takes [${robot.actionNames.join(", ")}]`);
  }
  if (problems.length > 0) {
    throw new PolicyPackageError("incompatible", `VLA policy ${pkg.json.version} (${pkg.dir}) does not fit this robot:\n  - ${problems.join("\n  - ")}`, { path: pkg.dir });
  }
}

async function readJson(path: string): Promise<unknown> {
  const text = (await readBoundedFile(path)).toString("utf8");
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new PolicyPackageError("invalid_json", `${path} is not valid JSON: ${(cause as Error).message}`, { cause, path });
  }
}
