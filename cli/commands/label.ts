/** `rlft label`: label camera frames of recorded episodes for the success classifier. */
import type { Command } from "commander";
import { decimal } from "../numberOption.ts";
import { episodeFiles } from "../../app/dataset.ts";
import { labelEpisodes, parsePositiveRange, writeLabelSet } from "../../app/label.ts";

/** Registers label on `program`. */
export function registerLabelCommand(program: Command): void {
  program
    .command("label")
    .description("Label camera frames of recorded episodes (success / not yet) for the learned success classifier")
    .argument("<episodes...>", "directories of .mcap episodes or single files")
    .requiredOption("--out <dir>", "where frames.npy, labels.npy and index.json go")
    .option("--positive-sec <s>", "seconds before a success whose frames are positive", decimal({ min: 0 }), 1.5)
    .option("--margin-sec <s>", "seconds before those that are left out (ambiguous)", decimal({ min: 0 }), 1)
    .option("--include-aborted", "label aborted episodes as negatives too")
    .option("--positive <file:from-to...>", "hand-label frame ranges of one episode as positive (the rest of it negative)")
    .addHelpText(
      "after",
      "\nExamples:\n  rlft label runs/session/episodes --out runs/labels\n  rlft label runs/sessions --out runs/labels --positive episode_000004.mcap:20-31\n  python3 -m rlft_learner train-classifier --data runs/labels --out runs/classifier\n\nHIL-SERL used a few hundred positive and about a thousand negative frames; the counts are printed.\n",
    )
    .action(async (dirs: string[], o) => {
      const positives = new Map<string, [number, number][]>();
      for (const spec of (o.positive as string[] | undefined) ?? []) {
        const [f, r] = parsePositiveRange(spec);
        positives.set(f, [...(positives.get(f) ?? []), r]);
      }
      const files = dirs.flatMap((d) => episodeFiles(d));
      const set = await labelEpisodes(files, { positiveSec: o.positiveSec, marginSec: o.marginSec, includeAborted: o.includeAborted, positives });
      writeLabelSet(o.out, set);
      const pos = set.index.filter((e) => e.label === 1).length;
      const neg = set.index.length - pos;
      console.log(`${files.length} episodes → ${set.index.length} frames (${set.width}×${set.height}): ${pos} positive, ${neg} negative → ${o.out}`);
      for (const s of set.skippedEpisodes) console.log(`  skipped ${s}`);
      if (pos < 200 || neg < 1000) console.log(`note: HIL-SERL trained on a few hundred positives and ~1000 negatives; more episodes (or a higher camera.rate_hz) give a more reliable classifier`);
    });
}
