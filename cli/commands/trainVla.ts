/** `rlft train-vla`: recorded multi-task episodes → rlft-vla-dataset → `python3 -m rlft_learner train-vla` → VLA package. */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { integer } from "../numberOption.ts";
import { writeVlaDataset } from "../../app/vlaDataset.ts";
import { episodeFiles } from "../../app/dataset.ts";
import { startLearner } from "../../app/learnerProcess.ts";
import { progress } from "../../app/progress.ts";

/** Registers train-vla on `program`. */
export function registerTrainVlaCommand(program: Command): void {
  program
    .command("train-vla")
    .description("Train the tiny language-conditioned VLA on recorded episodes (camera + instruction) and write a VLA package")
    .requiredOption("--data <dir>", "MCAP episodes recorded with a camera and an instruction (rlft collect --task multi_push)")
    .option("--out <dir>", "run directory: dataset/ and package/ go here", "runs/vla")
    .option("--steps <n>", "gradient steps", integer({ min: 1 }), 3000)
    .option("--include-failures", "also train on failed episodes")
    .option("--cameras <names>", "comma-separated recorded cameras the VLA sees (default: every camera the first episode recorded, e.g. front,wrist on the SO-101)")
    .option("--aux-data <dirs...>", "more recorded episodes (noisy demos, the policy's own rollouts, failures too) whose frames train only the position head, never imitated (docs/algorithms.md §6)")
    .option("--pretrained <dir>", "a VLA package to fine-tune from (needed by --recap-data: the package that ran those episodes)")
    .option("--recap-data <dirs...>", "the policy's own supervised episodes (rlft session --offline --operator scripted, failures and takeovers included): RECAP fine-tunes --pretrained on them and --data with the advantage indicator in the instruction (docs/algorithms.md §6)")
    .option("--plain", "with --recap-data: the same fine-tune without the indicator (plain BC on the same data, the baseline)")
    .option("--learner-arg <arg...>", "extra options for python3 -m rlft_learner train-vla (e.g. --learner-arg=--width=48)")
    .addHelpText("after", "\nExample:\n  rlft collect --task multi_push --episodes 160 --quality 1 --out runs/multi\n  rlft train-vla --data runs/multi --out runs/vla --steps 3000\n  rlft eval --policy runs/vla/package --task multi_push --instruction \"push the blue cube to the left target\"\n\nRECAP on the VLA (its own episodes with the scripted operator, then advantage-conditioned fine-tuning):\n  rlft session launch/sim_push.yaml --task multi_push --offline --operator scripted --policy runs/vla/package --episodes 200 --seed 30000 --out runs/vla-mixed\n  rlft train-vla --data runs/multi --recap-data runs/vla-mixed/episodes --pretrained runs/vla/package --out runs/vla-recap --steps 1500\n")
    .action(async (o) => {
      if ((o.auxData || o.recapData) && String(o.out).includes(",")) throw new Error(`--out ${o.out}: a run directory with --aux-data or --recap-data cannot contain a comma (the learner takes those datasets as a comma-separated list)`);
      if (o.recapData && !o.pretrained) throw new Error("--recap-data fine-tunes a VLA on its own episodes: pass the package that ran them as --pretrained");
      if (o.plain && !o.recapData) throw new Error("--plain is the baseline of a RECAP fine-tune: pass --recap-data and --pretrained too");
      if (o.pretrained && !existsSync(join(o.pretrained, "policy.json"))) throw new Error(`--pretrained ${o.pretrained}: no policy.json there — pass a package written by rlft train-vla`);
      const datasetDir = join(o.out, "dataset");
      /** Converts `dir` with a progress bar named `what`. */
      const convert = async (what: string, dir: string, out: string, opts: Parameters<typeof writeVlaDataset>[2]) => {
        const bar = progress(what, episodeFiles(dir).length, { unit: "episodes" });
        let n = 0;
        try {
          return await writeVlaDataset(dir, out, { ...opts, onEpisode: () => bar.update(++n) });
        } finally {
          bar.stop();
        }
      };
      const cameras = o.cameras === undefined ? undefined : String(o.cameras).split(",").map((c) => c.trim()).filter(Boolean);
      if (cameras && (cameras.length === 0 || cameras.some((c) => !/^[A-Za-z0-9_]+$/.test(c)))) throw new Error(`--cameras ${JSON.stringify(String(o.cameras).slice(0, 60))}: give camera names (letters, digits, _) separated by commas, e.g. --cameras front,wrist`);
      const s = await convert("dataset", o.data, datasetDir, { includeFailures: o.includeFailures, cameras });
      console.log(`dataset: ${s.episodes} episodes, ${s.ticks} ticks (${s.skippedEpisodes} skipped), cameras ${s.cameras.join(", ")}, in ${resolve(datasetDir)}`);
      for (const [text, count] of Object.entries(s.instructions).sort()) console.log(`  ${String(count).padStart(4)} × ${text}`);
      const auxDirs: string[] = [];
      for (const [i, dir] of ((o.auxData as string[] | undefined) ?? []).entries()) {
        const out = join(o.out, `aux-dataset-${i}`);
        const a = await convert("aux data", dir, out, { includeFailures: true, cameras: s.cameras });
        console.log(`aux data: ${a.episodes} episodes, ${a.ticks} ticks from ${dir} (position head only, never imitated)`);
        auxDirs.push(out);
      }
      const recapDirs: string[] = [];
      for (const [i, dir] of ((o.recapData as string[] | undefined) ?? []).entries()) {
        const out = join(o.out, `recap-dataset-${i}`);
        const a = await convert("RECAP data", dir, out, { includeFailures: true, cameras: s.cameras });
        console.log(`RECAP data: ${a.episodes} episodes, ${a.ticks} ticks from ${dir} (${o.plain ? "imitated without an indicator" : "imitated with the advantage indicator"})`);
        recapDirs.push(out);
      }
      let train: ReturnType<typeof progress> | null = null;
      const args = ["train-vla", "--dataset", datasetDir, "--out", o.out, "--steps", String(o.steps), "--json-progress",
        ...(auxDirs.length ? ["--aux-dataset", auxDirs.join(",")] : []),
        ...(recapDirs.length ? ["--recap-dataset", recapDirs.join(","), "--pretrained", resolve(o.pretrained), ...(o.plain ? ["--recap-plain"] : [])] : o.pretrained ? ["--pretrained", resolve(o.pretrained)] : []),
        ...(o.learnerArg ?? [])];
      const learner = startLearner(args, (e) => {
        if (e.event !== "progress") return;
        train ??= progress("train", Number(e.total), { unit: "steps" });
        train.update(Number(e.step), { loss: Number(e.loss).toFixed(4) });
      });
      const done = await learner.done;
      (train as ReturnType<typeof progress> | null)?.stop();
      console.log(`VLA package: ${String(done.package)} (final flow loss ${Number(done.final_loss).toFixed(4)}, ${done.seconds} s)`);
    });
}
