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
import { externalDataOf } from "../onnxExternalData.ts";
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
        /** "stretch" (default) or "letterbox": aspect-preserving resize padded with pad_value (LeRobot's resize_with_pad). */
        resize: z.enum(["stretch", "letterbox"]).optional(),
        /** Where a letterboxed image sits: LeRobot pads left and top ("bottom_right", default), openpi both sides ("center"). */
        pad_align: z.enum(["bottom_right", "center", "top_left"]).optional(),
        /** Letterbox fill in [0, 1] pixel units before normalisation (default 0, black). */
        pad_value: z.number().min(0).max(1).optional(),
        /** Input name of a bool [B] mask: 1 for a real frame, 0 for a camera fed as blank (LeRobot's image masks). */
        mask_input: z.string().min(1).optional(),
        /** The robot may lack this camera: it is then fed as a blank frame with its mask 0 (needs mask_input). */
        optional: z.boolean().optional(),
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
    /**
     * The text the tokenizer sees, with {instruction} and optionally {state} (the normalised state, each value in
     * [-1, 1] discretised into `state_bins` bins, space separated: pi0.5's state-in-prompt). Default "{instruction}".
     */
    template: z.string().optional(),
    state_bins: z.number().int().min(2).optional(),
  }),
  state: z.strictObject({
    /** Observation names the state input is made of, in order (a subset of the robot's observation). */
    names: Names,
    input: z.string().min(1),
    normalization: z.enum(["mean_std", "min_max", "quantile", "none"]),
    /** The graph's state width: the normalised values are followed by zeros up to it (LeRobot max_state_dim, openpi 32). */
    pad_to: z.number().int().min(1).optional(),
  }),
  action: z.strictObject({
    names: Names,
    horizon: z.number().int().min(1),
    execute_steps: z.number().int().min(1),
    normalization: z.enum(["mean_std", "min_max", "quantile", "none"]),
    /** The graph's action width (x and velocity): the first names.length dims are the robot's, the rest is dropped. */
    pad_to: z.number().int().min(1).optional(),
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
  get transforms(): (ImageTransform & { name: string; input: string; maskInput?: string; optional: boolean })[] {
    return this.json.cameras.map((c) => ({ name: c.name, input: c.input, crop: c.crop, height: c.height, width: c.width, mean: c.mean, std: c.std, layout: c.layout, resize: c.resize, padAlign: c.pad_align, padValue: c.pad_value, maskInput: c.mask_input, optional: c.optional ?? false }));
  }

  /** Values per chunk of the graph's state input (state.pad_to, or the number of state names). */
  get stateWidth(): number {
    return this.json.state.pad_to ?? this.json.state.names.length;
  }

  /** Values per step of the graph's action chunk (action.pad_to, or the number of action names). */
  get actionWidth(): number {
    return this.json.action.pad_to ?? this.json.action.names.length;
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
    for (const graph of Object.values(json.files)) await checkExternalData(abs, graph, json);
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
    checkLayout(json, jsonPath);
    if (json.action.execute_steps > json.action.horizon) throw new PolicyPackageError("dims", `${jsonPath}: action.execute_steps ${json.action.execute_steps} > horizon ${json.action.horizon}`, { path: jsonPath });
    return new VlaPackage(abs, json, tokenizer, state, actions);
  }
}

/** `policy.json`'s kind without validating the rest (to pick the loader). */
export async function policyKind(dir: string): Promise<string> {
  const raw = (await readJson(join(resolve(dir), "policy.json"))) as { kind?: unknown };
  return typeof raw?.kind === "string" ? raw.kind : "unknown";
}

/**
 * Every external-data file a graph makes onnxruntime open must be a plain file name in the package, hashed in
 * policy.json (so the signature over policy.json covers the weights too).
 */
async function checkExternalData(dir: string, graph: string, json: VlaPolicyJson): Promise<void> {
  const path = join(dir, graph);
  let locations: string[];
  try {
    locations = await externalDataOf(path);
  } catch (cause) {
    throw new PolicyPackageError("dims", `${path} is not a readable ONNX model: ${(cause as Error).message} — re-export the package`, { cause, path });
  }
  for (const loc of locations) {
    if (!/^[A-Za-z0-9_.-]+$/.test(loc) || loc === "." || loc === "..") {
      throw new PolicyPackageError("dims", `${path} reads external data from "${loc}", which is not a plain file name inside the package — save the graph with its data beside it (onnx.save_model(..., location="${graph}.data"))`, { path });
    }
    if (!(loc in json.sha256)) {
      throw new PolicyPackageError("dims", `${path} reads external data ${loc}, which policy.json sha256 does not list — every file the robot opens must be hashed; re-export the package`, { path });
    }
  }
}

/** Cameras, padding and the prompt template must describe inputs the runtime can build: one sentence per problem. */
function checkLayout(json: VlaPolicyJson, jsonPath: string): void {
  const problems: string[] = [];
  const seen = new Set<string>();
  const inputs = new Set<string>([json.state.input, json.language.input_ids, ...(json.language.attention_mask ? [json.language.attention_mask] : [])]);
  for (const c of json.cameras) {
    if (seen.has(c.name)) problems.push(`camera ${c.name} is listed twice`);
    seen.add(c.name);
    for (const name of [c.input, ...(c.mask_input ? [c.mask_input] : [])]) {
      if (inputs.has(name)) problems.push(`graph input ${name} (camera ${c.name}) is used twice`);
      inputs.add(name);
    }
    if (c.optional && !c.mask_input) problems.push(`camera ${c.name} is optional but has no mask_input: the model could not tell a missing camera from a black frame`);
    if (c.resize !== "letterbox" && (c.pad_align !== undefined || c.pad_value !== undefined)) problems.push(`camera ${c.name} sets pad_align/pad_value without resize "letterbox"`);
  }
  const { state, action, language } = json;
  if (state.pad_to !== undefined && state.pad_to < state.names.length) problems.push(`state.pad_to ${state.pad_to} is below the ${state.names.length} state names`);
  if (action.pad_to !== undefined && action.pad_to < action.names.length) problems.push(`action.pad_to ${action.pad_to} is below the ${action.names.length} action names`);
  if (language.template !== undefined) {
    const fields = [...language.template.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
    const unknown = fields.filter((f) => f !== "instruction" && f !== "state");
    if (unknown.length > 0) problems.push(`language.template has field(s) {${unknown.join("}, {")}}; it may use {instruction} and {state}`);
    if (fields.includes("state") && language.state_bins === undefined) problems.push(`language.template writes {state} but language.state_bins is not set`);
  }
  if (problems.length > 0) throw new PolicyPackageError("dims", `${jsonPath}: ${problems.join("; ")}`, { path: jsonPath });
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
  const missingCams = pkg.json.cameras.filter((c) => !c.optional && !robot.cameras.includes(c.name)).map((c) => c.name);
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
