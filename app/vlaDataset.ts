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
import type { JointStateMsg, ObservationMsg } from "../contracts/msgs.ts";
import { episodeFiles } from "./dataset.ts";
import { taskVocabulary } from "../sim/multiPush.ts";
import { npyHeader } from "../data/npy.ts";

interface ImageMsg {
  header: { stamp: { sec: number; nanosec: number } };
  width: number;
  height: number;
  encoding: string;
  step: number;
  data: Uint8Array;
}

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
  write(bytes: Uint8Array): void {
    writeSync(this.#fd, bytes);
    this.#rows++;
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

const key = (s: { sec: number; nanosec: number }): bigint => BigInt(s.sec) * 1_000_000_000n + BigInt(s.nanosec);

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

/** The cameras whose rgb frames an episode file recorded (/camera/<name>/image), sorted by name. */
export async function recordedCameras(file: string): Promise<string[]> {
  const r = await EpisodeReader.open(file);
  try {
    return r.topics().flatMap((t) => CAMERA_TOPIC.exec(t.topic)?.[1] ?? []).sort();
  } finally {
    await r.close();
  }
}

/**
 * Converts the episodes in `data` (successful ones unless includeFailures) into a dataset directory `out`. `cameras`:
 * which recorded cameras go in (default: every camera the first episode recorded); an episode that lacks one is refused.
 */
export async function writeVlaDataset(data: string, out: string, opts: { includeFailures?: boolean; cameras?: readonly string[]; onEpisode?: () => void } = {}): Promise<VlaDatasetSummary> {
  const files = episodeFiles(data);
  const cameras = opts.cameras?.length ? [...opts.cameras] : files.length ? await recordedCameras(files[0]) : [];
  if (cameras.length === 0) throw new Error(`${files[0] ?? data}: no camera frames recorded (/camera/<name>/image) — record the episodes with a camera: rlft collect --task multi_push --out ${data}`);
  const imageTopics = cameras.map((c) => `/camera/${c}/image`);
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
    const r = await EpisodeReader.open(file);
    try {
      const success = r.result?.success === "true";
      if (!success && !opts.includeFailures) {
        skipped++;
        continue;
      }
      const obs: ObservationMsg[] = [];
      const cmds = new Map<bigint, JointStateMsg>();
      const images: ImageMsg[][] = cameras.map(() => []);
      const operator = new Set<bigint>(); // stamps of ticks the operator acted on (/arbiter/intervention active)
      let instruction = "";
      for await (const m of r.messages({ topics: [TOPICS.observation.topic, TOPICS.jointCommand.topic, ...imageTopics, TOPICS.instruction.topic, TOPICS.arbiterIntervention.topic] })) {
        if (m.topic === TOPICS.observation.topic) obs.push(m.message as unknown as ObservationMsg);
        else if (m.topic === TOPICS.arbiterIntervention.topic) {
          const i = m.message as unknown as { header: { stamp: { sec: number; nanosec: number } }; active: boolean };
          if (i.active) operator.add(key(i.header.stamp));
        }
        else if (m.topic === TOPICS.jointCommand.topic) cmds.set(key((m.message as unknown as JointStateMsg).header.stamp), m.message as unknown as JointStateMsg);
        else if (m.topic === TOPICS.instruction.topic) instruction = (m.message as unknown as { data: string }).data;
        else images[imageTopics.indexOf(m.topic)].push(m.message as unknown as ImageMsg);
      }
      const lacking = cameras.filter((_, k) => images[k].length === 0);
      if (!instruction || lacking.length === cameras.length) {
        skipped++;
        continue;
      }
      if (lacking.length) throw new Error(`${file}: no frames of camera ${lacking.join(", ")} (the dataset has ${cameras.join(", ")}): record every episode with the same cameras, or pick them with --cameras`);
      let length = 0;
      let interventions = 0;
      const j = cameras.map(() => -1);
      for (const o of obs) {
        const t = key(o.header.stamp);
        const c = cmds.get(t);
        for (const [k, list] of images.entries()) while (j[k] + 1 < list.length && key(list[j[k] + 1].header.stamp) <= t) j[k]++;
        if (!c || j.some((i) => i < 0)) continue;
        const imgs = images.map((list, k) => list[j[k]]);
        for (const [k, img] of imgs.entries()) if (img.encoding !== "rgb8" || img.step !== img.width * 3) throw new Error(`${file}: ${imageTopics[k]} is ${img.encoding} with step ${img.step}; expected packed rgb8`);
        if (!meta) {
          meta = { task: r.episode?.task ?? "unknown", obs_names: [...o.names], action_names: [...c.name], sizes: imgs.map((img) => ({ height: img.height, width: img.width })) };
          obsW = new NpyWriter(join(out, "obs.npy"), "<f4", [o.names.length]);
          actW = new NpyWriter(join(out, "action.npy"), "<f4", [c.name.length]);
          imgW = cameras.map((cam, k) => new NpyWriter(join(out, `image_${cam}.npy`), "|u1", [imgs[k].height, imgs[k].width, 3]));
          intW = new NpyWriter(join(out, "intervention.npy"), "|u1", []);
        }
        for (const [k, img] of imgs.entries()) {
          const want = meta.sizes[k];
          if (img.height !== want.height || img.width !== want.width) throw new Error(`${file}: camera ${cameras[k]} frame ${img.width}×${img.height}, the first episode's were ${want.width}×${want.height}`);
        }
        if (o.names.join() !== meta.obs_names.join()) throw new Error(`${file}: observation names differ from the first episode's`);
        obsW!.write(new Uint8Array(Float32Array.from(o.values).buffer));
        actW!.write(new Uint8Array(Float32Array.from(c.position).buffer));
        for (const [k, img] of imgs.entries()) imgW[k].write(img.data);
        const byOperator = operator.has(t) ? 1 : 0;
        intW!.write(Uint8Array.of(byOperator));
        interventions += byOperator;
        length++;
      }
      if (length === 0) {
        skipped++;
        continue;
      }
      episodes.push({ episode: Number(r.episode?.episode ?? -1), seed: Number(r.episode?.seed ?? -1), length, success, instruction, source: r.episode?.source ?? "", interventions, file });
      instructions[instruction] = (instructions[instruction] ?? 0) + 1;
    } finally {
      await r.close();
    }
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
