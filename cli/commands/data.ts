/** `rlft replay`, `rlft train-bc`, `rlft inspect`: episode logs as data. */
import type { Command } from "commander";
import { resolve } from "node:path";
import { EpisodeReader } from "../../recording/EpisodeReader.ts";
import { episodeFiles, readEpisodeArrays } from "../dataset.ts";
import { streamEpisodes, trainBc } from "../trainBc.ts";

/** Registers replay, train-bc and inspect on `program`. */
export function registerDataCommands(program: Command): void {
  program
    .command("replay")
    .description("Read recorded MCAP episodes; with --to-learner, stream them to a learner over ZeroMQ (rlft-exp/1)")
    .argument("<dir>", "directory of .mcap episodes (or one file)")
    .option("--to-learner <endpoint>", "learner ROUTER endpoint, e.g. tcp://127.0.0.1:5555")
    .option("--include-failures", "also send failed episodes (default: successful demonstrations only)")
    .addHelpText("after", "\nExamples:\n  rlft replay data/demos                                   # summary of the episodes\n  python3 -m rlft_learner train-bc --bind tcp://127.0.0.1:5555 --out runs/bc &\n  rlft replay data/demos --to-learner tcp://127.0.0.1:5555\n")
    .action(async (dir: string, o) => {
      if (o.toLearner) {
        const { sent, skipped } = await streamEpisodes(dir, o.toLearner, { includeFailures: o.includeFailures });
        console.log(`sent ${sent} episodes to ${o.toLearner} (${skipped} skipped)`);
        return;
      }
      const rows: string[] = [];
      for (const f of episodeFiles(dir)) {
        const ep = await readEpisodeArrays(f);
        rows.push(`${f}  seed ${ep.seed}  ${ep.outcome.padEnd(8)} ${String(ep.obs.length).padStart(4)} steps${ep.recovered ? "  (recovered after a crash)" : ""}`);
      }
      console.log(rows.join("\n"));
      console.log(`${rows.length} episodes`);
    });

  program
    .command("train-bc")
    .description("Train a diffusion BC policy on recorded demonstrations (starts the Python learner, streams the episodes to it)")
    .requiredOption("--data <dir>", "directory of .mcap demonstrations")
    .requiredOption("--out <dir>", "run directory; the policy package goes to OUT/package")
    .option("--steps <n>", "gradient steps (learner default when omitted)", Number)
    .option("--include-failures", "also train on failed episodes")
    .addHelpText("after", "\nExample:\n  rlft train-bc --data data/demos --out runs/bc\n")
    .action(async (o) => {
      const r = await trainBc({ data: o.data, out: o.out, steps: o.steps, includeFailures: o.includeFailures });
      console.log(`trained on ${r.episodes} episodes, final loss ${r.finalLoss.toFixed(4)}`);
      console.log(`policy package: ${resolve(r.packageDir)}`);
    });

  program
    .command("inspect")
    .description("Summarise one MCAP episode: metadata, topics, message counts, result")
    .argument("<file>", "an .mcap episode")
    .addHelpText("after", "\nExample:\n  rlft inspect data/demos/episode_000000.mcap\n")
    .action(async (file: string) => {
      const r = await EpisodeReader.open(file);
      try {
        const counts = new Map<string, number>();
        for await (const m of r.messages()) counts.set(m.topic, (counts.get(m.topic) ?? 0) + 1);
        console.log(`file: ${file}${r.recovered ? " (truncated: recovered every complete chunk)" : ""}`);
        for (const [name, rec] of r.metadata) console.log(`${name}: ${Object.entries(rec).map(([k, v]) => `${k}=${v}`).join(" ")}`);
        for (const t of r.topics()) console.log(`  ${t.topic.padEnd(24)} ${t.type.padEnd(36)} ${counts.get(t.topic) ?? 0} msgs`);
      } finally {
        await r.close();
      }
    });
}
