/**
 * Labels camera frames of recorded episodes for the success classifier (HIL-SERL's learned reward): in an
 * episode that ended in success, the frames of its last `positiveSec` are positive; a margin before them is
 * left out (the cube is almost there: ambiguous); every frame of a failed or timed-out episode and the earlier
 * frames of successful ones are negative. Aborted episodes are skipped unless asked for (an abort says
 * nothing about success). `--positive FILE:FROM-TO` marks frame ranges by hand, overriding the rule.
 * Writes frames.npy (uint8 N×H×W×3), labels.npy (uint8 N) and index.json (file, frame, time, label).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { EpisodeReader } from "../recording/EpisodeReader.ts";
import { TOPICS } from "../contracts/topics.ts";
import { npy } from "../data/npy.ts";

/** Options of {@link labelEpisodes}. */
export interface LabelOptions {
  /** Seconds before a success that count as success frames. */
  positiveSec: number;
  /** Seconds before that window that are left out. */
  marginSec: number;
  includeAborted?: boolean;
  /** Hand labels: file base name → inclusive frame ranges that are positive. */
  positives?: Map<string, [number, number][]>;
}

/** One labelled frame. */
export interface LabelledFrame {
  file: string;
  frame: number;
  timeSec: number;
  label: 0 | 1;
}

/** The labelled set. */
export interface LabelSet {
  width: number;
  height: number;
  frames: Uint8Array[];
  index: LabelledFrame[];
  skippedEpisodes: string[];
}

/** Reads the frames of `files` and labels them; see the file comment. */
export async function labelEpisodes(files: string[], o: LabelOptions): Promise<LabelSet> {
  const set: LabelSet = { width: 0, height: 0, frames: [], index: [], skippedEpisodes: [] };
  for (const file of files) {
    const r = await EpisodeReader.open(file);
    const imgs: { t: number; data: Uint8Array; w: number; h: number }[] = [];
    let outcome = "";
    let endT = Number.NaN;
    for await (const m of r.messages({ topics: [TOPICS.image.topic, TOPICS.episodeEvent.topic] })) {
      const t = Number(m.logTimeNs) / 1e9;
      if (m.topic === TOPICS.image.topic) {
        const im = m.message as { width: number; height: number; encoding: string; data: Uint8Array };
        if (im.encoding !== "rgb8") continue;
        imgs.push({ t, data: im.data, w: im.width, h: im.height });
      } else {
        const e = (m.message as { event: string }).event;
        if (["success", "failure", "timeout", "abort"].includes(e)) {
          outcome = e;
          endT = t;
        }
      }
    }
    await r.close();
    const name = basename(file);
    const hand = o.positives?.get(name);
    if (imgs.length === 0 || (!hand && (outcome === "" || (outcome === "abort" && !o.includeAborted)))) {
      set.skippedEpisodes.push(`${name} (${imgs.length === 0 ? "no rgb8 camera frames" : outcome || "never ended"})`);
      continue;
    }
    imgs.forEach((im, i) => {
      if (set.width === 0) [set.width, set.height] = [im.w, im.h];
      if (im.w !== set.width || im.h !== set.height) throw new Error(`${name} frame ${i} is ${im.w}×${im.h}, earlier frames are ${set.width}×${set.height}: label episodes of one camera setting together`);
      let label: 0 | 1 | null;
      if (hand) label = hand.some(([a, b]) => i >= a && i <= b) ? 1 : 0;
      else if (outcome !== "success") label = 0;
      else if (im.t >= endT - o.positiveSec) label = 1;
      else if (im.t >= endT - o.positiveSec - o.marginSec) label = null;
      else label = 0;
      if (label === null) return;
      set.frames.push(im.data);
      set.index.push({ file: name, frame: i, timeSec: im.t, label });
    });
  }
  return set;
}

/** Writes frames.npy, labels.npy and index.json into `dir`. */
export function writeLabelSet(dir: string, set: LabelSet): void {
  if (set.frames.length === 0) throw new Error("no frames were labelled: record episodes with the camera on (camera.enabled: true) and at least one ended episode");
  mkdirSync(dir, { recursive: true });
  const px = set.width * set.height * 3;
  const all = new Uint8Array(set.frames.length * px);
  set.frames.forEach((f, i) => all.set(f.subarray(0, px), i * px));
  writeFileSync(join(dir, "frames.npy"), npy("|u1", [set.frames.length, set.height, set.width, 3], all));
  writeFileSync(join(dir, "labels.npy"), npy("|u1", [set.index.length], Uint8Array.from(set.index.map((e) => e.label))));
  writeFileSync(join(dir, "index.json"), JSON.stringify({ format: "rlft-labels", version: 1, width: set.width, height: set.height, frames: set.index, skipped_episodes: set.skippedEpisodes }, null, 1));
}

/** Parses `episode_000003.mcap:12-20` into [file, [from, to]]. */
export function parsePositiveRange(spec: string): [string, [number, number]] {
  const m = /^(.+):(\d+)-(\d+)$/.exec(spec);
  if (!m || Number(m[2]) > Number(m[3])) throw new Error(`--positive ${spec}: expected FILE:FROM-TO with frame indices, e.g. episode_000003.mcap:12-20`);
  return [basename(m[1]), [Number(m[2]), Number(m[3])]];
}
