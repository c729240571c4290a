/**
 * Recorded episodes (e.g. `rlft eval --record-to DIR` of a VLA) → an rlft-vla-dataset directory, failures included,
 * for bench/vladiag/estimates.py.
 *
 *   node --import tsx bench/vladiag/dataset.ts runs/vla-eval runs/vla-eval-dataset
 */
import { writeVlaDataset } from "../../app/vlaDataset.ts";

const [src, out] = process.argv.slice(2);
if (!src || !out) {
  console.error("usage: node --import tsx bench/vladiag/dataset.ts <recorded episodes dir> <dataset out dir>");
  process.exit(2);
}
const s = await writeVlaDataset(src, out, { includeFailures: true });
console.log(`${s.episodes} episodes, ${s.ticks} ticks → ${out}`);
