/**
 * Recorded MCAP episodes → an `rlft-vla-dataset` directory (learner/rlft_learner/algorithms/vla/data.py, docs/policy-package.md):
 * meta.json + obs.npy + action.npy + image_<camera>.npy (one per camera) + intervention.npy. Each control tick's /observation is
 * paired with the /joint_command of the same stamp and each camera's frame of the same stamp (or the latest before it); the episode's
 * instruction comes from /task/instruction. Ticks without a frame of every camera yet are dropped, as the VLA would hold there.
 * intervention.npy marks the ticks the operator commanded (/arbiter/intervention active), for RECAP's labels.
 */
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { EpisodeReader } from "../recording/EpisodeReader.ts";
import { TOPICS } from "../contracts/topics.ts";
import { episodeFiles, readEpisodeArrays } from "./dataset.ts";
import { taskVocabulary } from "../sim/multiPush.ts";
import { npyHeader } from "../data/npy.ts";

/** Streams rows into a .npy file whose row count is only known at the end (the header is rewritten then). */
class NpyWriter {
  #fd: number;
  #rows = 0;
  constructor(
    readonly path: string,
    readonly descr: string,
    readonly rowShape: readonly number[],
  ) {
    this.#fd = openSync(path, "w");
    writeSync(this.#fd, npyHeader(descr, [0, ...rowShape]));
  }
  /** Appends `rows` rows held in `bytes`. */
  write(bytes: Uint8Array, rows = 1): void {
    writeSync(this.#fd, bytes);
    this.#rows += rows;
  }
  close(): void {
    // Same header length for any row count below 10^12, so it fits in place.
    const h = npyHeader(this.descr, [this.#rows, ...this.rowShape]);
    const first = npyHeader(this.descr, [0, ...this.rowShape]);
    if (h.length !== first.length) throw new Error(`${this.path}: npy header grew; rewrite the file`);
    writeSync(this.#fd, h, 0, h.length, 0);
    closeSync(this.#fd);
  }
}

/** Summary of a conversion. */
export interface VlaDatasetSummary {
  dir: string;
  episodes: number;
  ticks: number;
  skippedEpisodes: number;
  instructions: Record<string, number>;
  /** The cameras in it, in image_<camera>.npy order. */
  cameras: string[];
}

const CAMERA_TOPIC = /^\/camera\/([A-Za-z0-9_]+)\/image$/;

/** What an episode file holds before its ticks are read: its result, its instruction and the cameras it recorded (sorted). */
async function episodeHead(file: string): Promise<{ success: boolean; instruction: string; cameras: string[] }> {
  const r = await EpisodeReader.open(file);
  try {
    let instruction = "";
    for await (const m of r.messages({ topics: [TOPICS.instruction.topic] })) instruction = (m.message as unknown as { data: string }).data;
    const cameras = r.topics().flatMap((t) => CAMERA_TOPIC.exec(t.topic)?.[1] ?? []).sort();
    return { success: r.result?.success === "true", instruction, cameras };
  } finally {
    await r.close();
  }
}

/**
 * Converts the episodes in `data` (successful ones unless includeFailures) into a dataset directory `out`. `cameras`:
 * which recorded cameras go in (default: every camera the first episode recorded); an episode that lacks one is refused.
 * The ticks and their frames are readEpisodeArrays' (app/dataset.ts), as for BC.
 */
export async function writeVlaDataset(data: string, out: string, opts: { includeFailures?: boolean; cameras?: readonly string[]; onEpisode?: () => void } = {}): Promise<VlaDatasetSummary> {
  const files = episodeFiles(data);
  const cameras = opts.cameras?.length ? [...opts.cameras] : files.length ? (await episodeHead(files[0])).cameras : [];
  if (cameras.length === 0) throw new Error(`${files[0] ?? data}: no camera frames recorded (/camera/<name>/image) — record the episodes with a camera: rlft collect --task multi_push --out ${data}`);
  mkdirSync(out, { recursive: true });
  let obsW: NpyWriter | null = null;
  let actW: NpyWriter | null = null;
  let imgW: NpyWriter[] = [];
  let intW: NpyWriter | null = null;
  let meta: { task: string; obs_names: string[]; action_names: string[]; sizes: { height: number; width: number }[] } | null = null;
  const episodes: { episode: number; seed: number; length: number; success: boolean; instruction: string; source: string; interventions: number; file: string }[] = [];
  const instructions: Record<string, number> = {};
  let skipped = 0;
  for (const file of files) {
    opts.onEpisode?.();
    const head = await episodeHead(file);
    const lacking = cameras.filter((c) => !head.cameras.includes(c));
    if ((!head.success && !opts.includeFailures) || !head.instruction || lacking.length === cameras.length) {
      skipped++;
      continue;
    }
    if (lacking.length) throw new Error(`${file}: no frames of camera ${lacking.join(", ")} (the dataset has ${cameras.join(", ")}): record every episode with the same cameras, or pick them with --cameras`);
    // Each tick with its command and every camera's latest frame at or before it; ticks before every camera has one are left out.
    const ep = await readEpisodeArrays(file, { cameras });
    const frames = cameras.map((c) => ep.images![c]);
    if (ep.obs.length === 0) {
      skipped++;
      continue;
    }
    if (!meta) {
      meta = { task: ep.task, obs_names: ep.obsNames, action_names: ep.actionNames, sizes: frames.map((f) => ({ height: f.height, width: f.width })) };
      obsW = new NpyWriter(join(out, "obs.npy"), "<f4", [ep.obsNames.length]);
      actW = new NpyWriter(join(out, "action.npy"), "<f4", [ep.actionNames.length]);
      imgW = cameras.map((cam, k) => new NpyWriter(join(out, `image_${cam}.npy`), "|u1", [frames[k].height, frames[k].width, 3]));
      intW = new NpyWriter(join(out, "intervention.npy"), "|u1", []);
    }
    for (const [k, f] of frames.entries()) {
      const want = meta.sizes[k];
      if (f.height !== want.height || f.width !== want.width) throw new Error(`${file}: camera ${cameras[k]} frame ${f.width}×${f.height}, the first episode's were ${want.width}×${want.height}`);
    }
    if (ep.obsNames.join() !== meta.obs_names.join()) throw new Error(`${file}: observation names differ from the first episode's`);
    const n = ep.obs.length;
    obsW!.write(new Uint8Array(Float32Array.from(ep.obs.flat()).buffer), n);
    actW!.write(new Uint8Array(Float32Array.from(ep.action.flat()).buffer), n);
    for (const [k, f] of frames.entries()) imgW[k].write(f.data, n);
    intW!.write(Uint8Array.from(ep.intervention), n);
    const interventions = ep.intervention.reduce((a, b) => a + b, 0);
    episodes.push({ episode: ep.episode, seed: ep.seed, length: n, success: ep.success, instruction: head.instruction, source: ep.source, interventions, file });
    instructions[head.instruction] = (instructions[head.instruction] ?? 0) + 1;
  }
  for (const w of [obsW, actW, ...imgW, intW]) w?.close();
  if (!meta) throw new Error(`none of the episodes in ${data} has an instruction, camera frames and commands — record them with: rlft collect --task multi_push --out ${data}`);
  const doc = {
    format: "rlft-vla-dataset",
    format_version: 1,
    task: meta.task,
    obs_names: meta.obs_names,
    action_names: meta.action_names,
    cameras: cameras.map((name, k) => ({ name, ...meta!.sizes[k] })),
    // Every word the task's instructions can use, so the tokenizer knows words no demo happened to say.
    vocabulary: meta.task === "multi_push" ? taskVocabulary() : [],
    episodes,
  };
  writeFileSync(join(out, "meta.json"), JSON.stringify(doc, null, 2));
  return { dir: out, episodes: episodes.length, ticks: episodes.reduce((a, e) => a + e.length, 0), skippedEpisodes: skipped, instructions, cameras };
}
