/** `rlft dataset stats|export|import`: a folder of episode logs as a dataset. */
import { resolve } from "node:path";
import type { Command } from "commander";
import { episodeFiles } from "../../app/dataset.ts";
import { progress } from "../../app/progress.ts";
import { datasetStats, formatDatasetStats } from "../../data/DatasetStats.ts";
import { exportLeRobot } from "../../data/lerobot/LeRobotExport.ts";
import { importLeRobot } from "../../data/lerobot/LeRobotImport.ts";
import { LEROBOT_VERSIONS, type LeRobotVersion } from "../../data/lerobot/layout.ts";

const warn = (m: string) => m && console.warn(`warning: ${m}`);

/** Registers `dataset` and its subcommands on `program`. */
export function registerDatasetCommand(program: Command): void {
  const ds = program
    .command("dataset")
    .description("Statistics of a folder of episodes, and LeRobot export/import")
    .addHelpText("after", "\nExamples:\n  rlft dataset stats runs/demos\n  rlft dataset export runs/demos --format lerobot --out exports/demos\n  rlft dataset import exports/demos --out runs/imported\n");

  ds.command("stats")
    .description("Counts, success rate, intervention fraction, observation and action statistics, per task")
    .argument("<folder>", "directory of .mcap episodes (or one file)")
    .option("--json", "print JSON")
    .addHelpText("after", "\nExample:\n  rlft dataset stats runs/demos\n")
    .action(async (folder: string, o) => {
      const files = episodeFiles(folder);
      const bar = o.json ? null : progress("read", files.length, { unit: "episodes" });
      const stats = await datasetStats(files, { onEpisode: (i) => bar?.update(i), warn });
      bar?.stop();
      if (o.json) console.log(JSON.stringify(stats.map((s) => ({ ...s, obs: { mean: s.obs.mean, std: s.obs.std, min: s.obs.min, max: s.obs.max }, action: { mean: s.action.mean, std: s.action.std, min: s.action.min, max: s.action.max } }))));
      else console.log(formatDatasetStats(stats));
    });

  ds.command("export")
    .description("Write the episodes as a LeRobotDataset (v3.0, what LeRobot 0.4+ reads; --lerobot-version 2.1 for LeRobot 0.1–0.3)")
    .argument("<folder>", "directory of .mcap episodes")
    .requiredOption("--out <dir>", "new directory for the dataset")
    .option("--format <format>", "lerobot (the only one so far)", "lerobot")
    .option("--lerobot-version <version>", `LeRobotDataset layout: ${LEROBOT_VERSIONS.join(" | ")}`, "3.0")
    .option("--video-codec <codec>", "h264 (fast) | av1 (LeRobot's default, slower)", "h264")
    .option("--no-video", "skip the camera videos")
    .addHelpText("after", "\nExamples:\n  rlft dataset export runs/demos --format lerobot --out exports/push_cube_lerobot\n  rlft dataset export runs/demos --format lerobot --lerobot-version 2.1 --out exports/push_cube_v21\n")
    .action(async (folder: string, o) => {
      if (o.format !== "lerobot") throw new Error(`--format ${o.format}: only 'lerobot' is supported`);
      const version = String(o.lerobotVersion).replace(/^v/, "");
      if (!(LEROBOT_VERSIONS as readonly string[]).includes(version)) throw new Error(`--lerobot-version ${o.lerobotVersion}: expected ${LEROBOT_VERSIONS.join(" or ")}`);
      if (!["h264", "av1"].includes(o.videoCodec)) throw new Error(`--video-codec ${o.videoCodec}: expected h264 or av1`);
      const files = episodeFiles(folder);
      const bar = progress("export", files.length, { unit: "episodes" });
      const r = await exportLeRobot(files, o.out, { version: version as LeRobotVersion, videoCodec: o.videoCodec, noVideo: !o.video, onEpisode: (i) => bar.update(i), warn });
      bar.stop();
      for (const s of r.skipped) warn(`skipped ${s}`);
      console.log(`wrote LeRobotDataset v${r.version}: ${r.episodes} episodes, ${r.frames} frames, ${r.videos} video files (${r.cameras.join(", ") || "no cameras"}) to ${resolve(r.dir)}`);
      if (r.droppedTicks) console.log(`left out ${r.droppedTicks} ticks at episode starts that no camera frame precedes (a frame from after a tick is never paired with it)`);
    });

  ds.command("import")
    .description("Convert a LeRobotDataset (v3.0 or v2.x) into MCAP episodes")
    .argument("<lerobot-dir>", "dataset directory (meta/info.json, data/, videos/)")
    .requiredOption("--out <dir>", "where the .mcap episodes go")
    .option("--robot <model>", "robot model to record when info.json has no robot_type")
    .option("--no-video", "skip the videos")
    .addHelpText("after", "\nExample:\n  rlft dataset import exports/push_cube_lerobot --out runs/imported\n")
    .action(async (dir: string, o) => {
      let bar: ReturnType<typeof progress> | null = null;
      const r = await importLeRobot(dir, o.out, { robot: o.robot, noVideo: !o.video, onEpisode: (i, n) => (bar ??= progress("import", n, { unit: "episodes" })).update(i) });
      (bar as ReturnType<typeof progress> | null)?.stop();
      console.log(`wrote ${r.episodes} episodes (${r.frames} frames) to ${resolve(o.out)}`);
    });
}
