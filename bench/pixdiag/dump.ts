/**
 * Diagnosis helper for bench:pixels: recorded episodes (with the front and wrist frames each tick was paired with for
 * training, app/dataset.ts) → .npy files a Python script can read: obs (N, 6) joints, action (N, 6), lengths (E,),
 * seeds (E,), success (E,), obsfull (N, D) the whole recorded observation (names_full.json), image.<cam> (N, H, W, 3) uint8, plus stamps of obs and picked frames.
 *
 * Usage: node --import tsx bench/pixdiag/dump.ts <episodes dir> <out dir> [max episodes]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { episodeFiles, readEpisodeArrays } from "../../app/dataset.ts";
import { npy } from "../../data/npy.ts";

const [dir, out, maxArg] = process.argv.slice(2);
if (!dir || !out) throw new Error("usage: bench/pixdiag/dump.ts <episodes dir> <out dir> [max episodes]");
const cams = ["front", "wrist"];
const files = episodeFiles(dir).slice(0, maxArg ? Number(maxArg) : undefined);
const obs: number[] = [], full: number[] = [], act: number[] = [], lengths: number[] = [], seeds: number[] = [], success: number[] = [];
const frames: Record<string, Uint8Array[]> = { front: [], wrist: [] };
const hw: Record<string, number[]> = { front: [0, 0], wrist: [0, 0] };
let names: string[] = [];
let allNames: string[] = [];
for (const f of files) {
  const ep = await readEpisodeArrays(f, { cameras: cams });
  const qi = ep.obsNames.map((n, i) => (n.startsWith("q.") ? i : -1)).filter((i) => i >= 0);
  names = qi.map((i) => ep.obsNames[i]);
  allNames = ep.obsNames;
  for (const o of ep.obs) {
    obs.push(...qi.map((i) => o[i]));
    full.push(...o);
  }
  for (const a of ep.action) act.push(...a);
  lengths.push(ep.obs.length);
  seeds.push(ep.seed);
  success.push(ep.success ? 1 : 0);
  for (const c of cams) {
    frames[c].push(ep.images![c].data);
    hw[c] = [ep.images![c].height, ep.images![c].width];
  }
  if (ep.ticksWithoutFrames) console.log(`${f}: ${ep.ticksWithoutFrames} ticks without frames`);
}
mkdirSync(out, { recursive: true });
const f32 = (a: number[]) => new Uint8Array(new Float32Array(a).buffer);
const i64 = (a: number[]) => new Uint8Array(new BigInt64Array(a.map(BigInt)).buffer);
const n = lengths.reduce((s, x) => s + x, 0);
writeFileSync(join(out, "obs.npy"), npy("<f4", [n, names.length], f32(obs)));
writeFileSync(join(out, "obsfull.npy"), npy("<f4", [n, allNames.length], f32(full)));
writeFileSync(join(out, "action.npy"), npy("<f4", [n, 6], f32(act)));
writeFileSync(join(out, "lengths.npy"), npy("<i8", [lengths.length], i64(lengths)));
writeFileSync(join(out, "seeds.npy"), npy("<i8", [seeds.length], i64(seeds)));
writeFileSync(join(out, "success.npy"), npy("<i8", [success.length], i64(success)));
for (const c of cams) {
  const all = new Uint8Array(n * hw[c][0] * hw[c][1] * 3);
  let o = 0;
  for (const d of frames[c]) { all.set(d, o); o += d.length; }
  writeFileSync(join(out, `image.${c}.npy`), npy("|u1", [n, hw[c][0], hw[c][1], 3], all));
}
writeFileSync(join(out, "names.json"), JSON.stringify(names));
writeFileSync(join(out, "names_full.json"), JSON.stringify(allNames));
console.log(`${files.length} episodes, ${n} steps, joints ${names.join(",")} → ${out}`);
