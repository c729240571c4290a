/**
 * Camera frames of recorded episodes as .npy files, one per episode and camera (`ep<k>_<camera>.npy`, uint8
 * [T, H, W, 3]), for `python -m rlft_learner.buffers.frames` (bytes per frame and decode cost of each replay codec):
 *   rlft collect --launch launch/sim_so101.yaml --task push_cube --episodes 3 --out /tmp/so101
 *   node --import tsx bench/frameNpy.ts /tmp/so101 /tmp/so101-frames front,wrist
 *   .venv/bin/python -m rlft_learner.buffers.frames /tmp/so101-frames/*.npy
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { episodeFiles, readEpisodeArrays } from "../app/dataset.ts";
import { npy } from "../data/npy.ts";

const [src, out, cams = "front,wrist"] = process.argv.slice(2);
if (!src || !out) throw new Error("usage: node --import tsx bench/frameNpy.ts <episodes dir> <out dir> [front,wrist]");
mkdirSync(out, { recursive: true });
const cameras = cams.split(",");
for (const [k, file] of episodeFiles(src).entries()) {
  const ep = await readEpisodeArrays(file, { cameras });
  for (const [cam, f] of Object.entries(ep.images ?? {})) {
    const shape = [f.data.length / (f.height * f.width * 3), f.height, f.width, 3];
    writeFileSync(join(out, `ep${k}_${cam}.npy`), npy("|u1", shape, f.data));
  }
}
console.log(`wrote ${out}/ep*_{${cameras.join(",")}}.npy`);
