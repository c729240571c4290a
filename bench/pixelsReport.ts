/** The result of `npm run bench:pixels` (bench/pixels.ts) and its markdown table. */
import type { EpisodeSummary } from "../app/runEpisodes.ts";
import type { TrainedBc } from "../app/pixelBc.ts";

/** One policy: how it was trained and how it scored on the held-out seeds. */
export interface PixelsPolicy {
  train: TrainedBc;
  eval: EpisodeSummary;
}

/** One task's row. */
export interface PixelsTask {
  task: string;
  /** Pixel BC success the issue asks for on this task. */
  target: number;
  demos: EpisodeSummary;
  /** Absent when the run left the pixel policy out (--obs state: a reference run). */
  pixels?: PixelsPolicy;
  /** Absent when the run left the reference out (--obs pixels). */
  state?: PixelsPolicy;
}

/** The whole run. */
export interface PixelsBench {
  date: string;
  git: string;
  command: string;
  settings: Record<string, unknown>;
  minutes: number;
  tasks: PixelsTask[];
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const rate = (s: EpisodeSummary) => `${pct(s.rate)} [${(100 * s.ci95[0]).toFixed(1)}, ${(100 * s.ci95[1]).toFixed(1)}] (${s.successes}/${s.episodes})`;
const trainCell = (t: TrainedBc) => `${t.steps} steps, ${(t.seconds / 60).toFixed(1)} min${t.cpuSeconds !== undefined ? ` (CPU ${(t.cpuSeconds / 60).toFixed(1)} min)` : ""}, loss ${t.finalLoss.toFixed(3)}`;
const speed = (s: EpisodeSummary) => `${(s.simSeconds / Math.max(1e-9, s.wallSeconds)).toFixed(1)}×`;

/** The markdown summary: one row per task, pixel BC beside state BC, target met or not. */
export function pixelsMarkdown(r: PixelsBench): string {
  const lines = [
    `# bench:pixels — ${r.date} (git ${r.git})`,
    "",
    `\`${r.command}\`; ${r.minutes.toFixed(1)} min in all. Demos: scripted expert, quality ${String(r.settings.quality)}, seeds 0..${Number(r.settings.demos) - 1}, ${typeof r.settings.cameras === "string" ? `cameras ${r.settings.cameras}` : "front + wrist cameras 84×84"} every tick; held-out seeds ${String(r.settings.evalSeed)}.. (success, Wilson 95% CI).`,
    "",
    "| task (pixel target) | demos successful | pixel BC (joints + front + wrist) | state BC (privileged, reference) | pixel target | pixel BC training | state BC training | eval speed pixels / state |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const t of r.tasks) {
    const px = t.pixels;
    const met = !px ? "-" : px.eval.rate >= t.target ? "met" : "**not met**";
    const st = t.state;
    lines.push(`| ${t.task} (${pct(t.target)}) | ${t.demos.successes}/${t.demos.episodes} | ${px ? rate(px.eval) : "-"} | ${st ? rate(st.eval) : "-"} | ${met} | ${px ? trainCell(px.train) : "-"} | ${st ? trainCell(st.train) : "-"} | ${px ? speed(px.eval) : "-"} / ${st ? speed(st.eval) : "-"} real time |`);
  }
  lines.push("", "Training time is the learner's wall time (upload, training, export) with the other trainings of the run (--parallel) and other jobs sharing the 2 cores; CPU is the learner's own CPU time, about its wall time on an idle core (1 torch thread).");
  const outcomes = (s: EpisodeSummary) => Object.entries(s.outcomes).map(([k, v]) => `${k} ${v}`).join(", ");
  for (const t of r.tasks) lines.push(`- ${t.task} outcomes: ${[t.pixels && `pixels ${outcomes(t.pixels.eval)}`, t.state && `state ${outcomes(t.state.eval)}`].filter(Boolean).join("; ")}`);
  return `${lines.join("\n")}\n`;
}
