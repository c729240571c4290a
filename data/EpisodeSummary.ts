/** `rlft inspect <episode>`: what happened in one episode, for people (text) and at a glance (PNG). */
import { interventionSpans, succeeded, type EpisodeTrace } from "./EpisodeTrace.ts";
import type { LinePlotSpec, Panel } from "./linePlot.ts";
import { LOG_FORMAT_HISTORY } from "../recording/logFormat.ts";

/** The numbers `rlft inspect` prints. */
export interface EpisodeSummary {
  file: string;
  task: string;
  robot: string;
  seed: string;
  outcome: string;
  success: boolean;
  durationSec: number;
  ticks: number;
  /** Messages per second per topic. */
  rates: { topic: string; type: string; count: number; hz: number }[];
  interventions: { spans: number; ticks: number; fraction: number; sources: string[] };
  policyVersions: string[];
  /** Metadata records or `rlft.episode` keys about calibration. */
  calibration: string[];
  formatVersion: number;
  damage: string;
}

/** Summarises a trace. */
export function summarizeEpisode(tr: EpisodeTrace): EpisodeSummary {
  const durationSec = Number(tr.endNs - tr.startNs) / 1e9;
  const ticks = tr.ticks.filter((k) => k.obs.length || k.q.length);
  const iv = ticks.filter((k) => k.intervention);
  const versions = new Set<string>();
  for (const k of ticks) if (k.policy?.version) versions.add(k.policy.version);
  if (!versions.size && tr.info.policy_version) versions.add(tr.info.policy_version);
  // Calibration files are recorded whole (their JSON, path and sha256); the summary names each file by path and hash.
  const calibration: string[] = [];
  const named = (rec: Record<string, string>) =>
    Object.entries(rec)
      .filter(([k]) => /calib/i.test(k) && !/_(path|sha256)$/.test(k))
      .map(([k]) => `${k.replace(/^calibration_/, "")}: ${rec[`${k}_path`] ?? "(inline)"}${rec[`${k}_sha256`] ? ` (sha256 ${rec[`${k}_sha256`].slice(0, 12)})` : ""}`);
  for (const [name, rec] of tr.metadata) if (/calib/i.test(name)) calibration.push(...named(rec));
  calibration.push(...named(tr.info));
  return {
    file: tr.file,
    task: tr.info.task ?? "unknown",
    robot: tr.info.robot ?? "unknown",
    seed: tr.info.seed ?? "",
    outcome: tr.outcome,
    success: succeeded(tr),
    durationSec,
    ticks: ticks.length,
    rates: [...tr.counts].map(([topic, count]) => ({ topic, type: tr.types.get(topic) ?? "", count, hz: durationSec > 0 ? count / durationSec : NaN })).sort((a, b) => a.topic.localeCompare(b.topic)),
    interventions: { spans: interventionSpans(ticks).length, ticks: iv.length, fraction: ticks.length ? iv.length / ticks.length : 0, sources: [...new Set(iv.map((k) => k.interventionSource))] },
    policyVersions: [...versions],
    calibration,
    formatVersion: tr.formatVersion,
    damage: tr.damageNote,
  };
}

/** A long metadata value (a whole calibration file) cut for the terminal; `rlft inspect --json` prints it whole. */
function shorten(v: string): string {
  return v.length <= 120 ? v : `${v.slice(0, 60)}… (${v.length} chars; --json prints it whole)`;
}

/** The summary as lines of text. */
export function formatSummary(s: EpisodeSummary, tr: EpisodeTrace): string {
  const lines = [
    `file:          ${s.file}`,
    `robot / task:  ${s.robot} / ${s.task} (seed ${s.seed || "-"})`,
    `outcome:       ${s.outcome}${s.success ? " (success)" : ""}${tr.result?.reason ? ` — ${tr.result.reason}` : ""}`,
    `duration:      ${s.durationSec.toFixed(2)} s, ${s.ticks} control ticks (${(s.ticks / Math.max(s.durationSec, 1e-9)).toFixed(1)} Hz)`,
    `interventions: ${s.interventions.spans} spans, ${s.interventions.ticks} ticks (${(100 * s.interventions.fraction).toFixed(1)}%)${s.interventions.sources.length ? ` by ${s.interventions.sources.join(", ")}` : ""}`,
    `policy:        ${s.policyVersions.join(", ") || "-"}`,
    `calibration:   ${s.calibration.join("; ") || "none recorded"}`,
    `log format:    v${s.formatVersion} (${LOG_FORMAT_HISTORY[s.formatVersion] ?? "unknown"})`,
  ];
  if (s.damage) lines.push(`DAMAGED:       ${s.damage}`);
  lines.push("metadata:");
  for (const [name, rec] of tr.metadata) lines.push(`  ${name}: ${Object.entries(rec).map(([k, v]) => `${k}=${shorten(v)}`).join(" ")}`);
  lines.push("topics:");
  for (const r of s.rates) lines.push(`  ${r.topic.padEnd(26)} ${r.type.padEnd(36)} ${String(r.count).padStart(6)} msgs ${Number.isFinite(r.hz) ? r.hz.toFixed(1).padStart(7) : "      -"} Hz`);
  return lines.join("\n");
}

/** Plot of measured joint positions and executed commands per joint, intervention spans shaded (write it with writeLinePlot). */
export function plotEpisode(tr: EpisodeTrace): LinePlotSpec {
  const ticks = tr.ticks.filter((k) => k.q.length);
  const t = ticks.map((k) => k.t);
  const dt = t.length > 1 ? t[1] - t[0] : 0.1;
  const spans = interventionSpans(ticks).map(([a, b]) => ({ from: t[a] - dt / 2, to: t[b] + dt / 2 }));
  const names = tr.jointNames.length ? tr.jointNames : (ticks[0]?.q ?? []).map((_, i) => `joint ${i}`);
  const panels: Panel[] = names.map((name, j) => ({
    title: name,
    spans,
    series: [
      { name: "measured", x: t, y: ticks.map((k) => k.q[j]) },
      { name: "command", x: t, y: ticks.map((k) => k.executed[j] ?? NaN), dashed: true },
    ],
  }));
  const label = `${tr.file.split("/").at(-1)}: ${tr.info.task ?? ""} seed ${tr.info.seed ?? "-"}, ${tr.outcome}`;
  return { panels, title: label, xLabel: "episode time (s)", spanLabel: "intervention", panelHeight: 120 };
}
