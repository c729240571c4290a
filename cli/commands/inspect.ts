/** `rlft inspect <episode>`: summary of one episode, and a PNG of its joint traces with interventions shaded. */
import type { Command } from "commander";
import { readEpisodeTrace } from "../../data/EpisodeTrace.ts";
import { formatSummary, plotEpisode, summarizeEpisode } from "../../data/EpisodeSummary.ts";
import { writeLinePlot } from "../../data/linePlot.ts";
import { singleEpisodeFile } from "../../recording/rosbag2Bag.ts";

/** Registers `inspect` on `program`. */
export function registerInspectCommand(program: Command): void {
  program
    .command("inspect")
    .description("Summarise one MCAP episode (or rosbag2 MCAP bag): duration, rates, outcome, interventions, policy versions, calibration, topics")
    .argument("<file>", "an .mcap episode, or a rosbag2 bag folder (metadata.yaml + one .mcap)")
    .option("--plot [png]", "also draw the joint traces with intervention spans shaded (default: <file>.png)")
    .option("--json", "print the summary as JSON")
    .addHelpText("after", "\nExamples:\n  rlft inspect runs/demos/episode_000000.mcap\n  rlft inspect runs/sessions/episode_000012.mcap --plot\n")
    .action(async (path: string, o: { plot?: string | boolean; json?: boolean }) => {
      const file = singleEpisodeFile(path);
      const tr = await readEpisodeTrace(file);
      const s = summarizeEpisode(tr);
      console.log(o.json ? JSON.stringify(s) : formatSummary(s, tr));
      if (o.plot) {
        const out = typeof o.plot === "string" ? o.plot : file.replace(/\.mcap$/, "") + ".png";
        await writeLinePlot(plotEpisode(tr), out);
        if (!o.json) console.log(`plot: ${out}`);
      }
    });
}
