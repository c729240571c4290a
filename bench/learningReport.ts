/** Types and the markdown table of `npm run bench:learning` (bench/learning.ts). */
import { wilson } from "../data/stats.ts";
import type { ThroughputResult } from "./learningThroughput.ts";
import { throughputMarkdown } from "./linkBench.ts";

/** Successes out of n held-out episodes, with a Wilson 95% interval. */
export interface Rate {
  successes: number;
  n: number;
  rate: number;
  lo: number;
  hi: number;
}

export function rate(successes: number, n: number): Rate {
  const w = wilson(successes, n);
  return { successes, n, rate: w.p, lo: w.lo, hi: w.hi };
}

/** One point of a learning curve: the package live after `episodes` online episodes, on held-out seeds. */
export interface CurvePoint extends Rate {
  episodes: number;
  version: string;
}

/** One online episode of a session, as session.jsonl records it. */
export interface SessionEpisodeRow {
  episode: number;
  outcome: string;
  steps: number;
  interventionSteps: number;
  policyVersion: string;
}

/** A policy on the held-out seeds with the scripted operator watching (no exploration noise). */
export interface Supervised {
  n: number;
  steps: number;
  /** Steps the operator commanded (takeover and hand-back blend). */
  interventionSteps: number;
  interventionRate: number;
  episodesWithIntervention: number;
  /** Successes with the operator's help. */
  successes: number;
}

export interface MethodResult {
  label: string;
  learnerConfig: Record<string, unknown>;
  curve: CurvePoint[];
  final: Rate & { version: string; meanSteps: number };
  /** The final package on the final-evaluation seeds with the scripted operator watching (absent in older reports). */
  supervised?: Supervised;
  /** The final package with best-of-N base chunks (same held-out seeds): critic-ranked and consensus (medoid). */
  /** critics: ranked by the step and the chunk critic voting (only for a package with a chunk critic). */
  bestOf?: { n: number; critic: Rate; consensus: Rate; rerankedFraction: number; critics?: Rate };
  session: {
    dir: string;
    episodes: SessionEpisodeRow[];
    wallSeconds: number;
    learnerUpdates: number;
    /** Median of the learner's own updates/s over its progress windows with updates running. */
    updatesPerSecMedian: number;
    /** learner updates / session wall time (includes sim time while the learner waited for data). */
    updatesPerSecOverall: number;
    transitions: { pushed: number; acked: number };
    packages: number;
    /** Steps under operator control / all steps, over the whole session. */
    interventionRate: number;
    /** Online success rate of the session's own (exploring, operator-supervised) episodes. */
    onlineSuccess: Rate;
  };
  /** First curve point whose success rate reaches the task target (docs/algorithms.md §5), or null. */
  episodesToTarget: number | null;
}

export interface TaskResult {
  task: string;
  target: number;
  demos: { episodes: number; successes: number; used: number; quality: number; dataset: string };
  bc: {
    package: string; steps: number; finalLoss: number; final: Rate & { meanSteps: number }; supervised?: Supervised; bestOfConsensus?: Rate & { samples: number };
    /** Pixel BC: training-only targets of its camera encoders' position head (train-bc --aux), when any. */
    aux?: string[];
    /** Wall time of BC training (absent in older reports). */
    trainSeconds?: number;
  };
  methods: Record<string, MethodResult>;
  seconds: number;
}

export interface LearningBench {
  date: string;
  /** `git describe`-style revision of the code that ran (gitRevision()). */
  git?: string;
  /** The simulated robot and what its policies read (absent in reports before the pixel bench: rlft_arm5, state). */
  robot?: string;
  obs?: "state" | "pixels";
  launch?: string;
  /** The command line that ran. */
  command?: string;
  /** Learner overrides for this run (--res-set / --sac-set). */
  overrides?: { residual: Record<string, unknown>; sac: Record<string, unknown> };
  /** Sampling temperature of the BC base (actor.noise_scale) in every session and evaluation (--temperature); 1 if absent. */
  temperature?: number;
  quick: boolean;
  episodes: number;
  evalEvery: number;
  evalSeeds: number;
  finalEval: number;
  evalSeed: number;
  sessionSeed: number;
  tasks: TaskResult[];
  throughput: ThroughputResult | null;
  /** The same with two 84×84 camera frames per transition (issue 27); absent in reports before it. */
  throughputFrames?: ThroughputResult | null;
  notes: string[];
  seconds: number;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const ci = (r: Rate) => `${pct(r.rate)} (${r.successes}/${r.n}) [${pct(r.lo)}, ${pct(r.hi)}]`;

function interventionSlice(eps: SessionEpisodeRow[]): string {
  const steps = eps.reduce((a, e) => a + e.steps, 0);
  return steps ? pct(eps.reduce((a, e) => a + e.interventionSteps, 0) / steps) : "-";
}

/** The whole report as markdown. */
export function markdown(b: LearningBench): string {
  const out: string[] = [];
  const pixels = b.obs === "pixels";
  out.push(`# Learning benchmark${pixels ? ` from pixels (${b.robot ?? "so101"}: joints + cameras)` : ""} ${b.date}${b.quick ? " (quick smoke run)" : ""}${b.git ? ` (git ${b.git})` : ""}`, "");
  if (b.command) out.push(`\`${b.command}\`${b.launch ? ` on ${b.launch}` : ""}.`, "");
  if (b.overrides && (Object.keys(b.overrides.residual).length || Object.keys(b.overrides.sac).length))
    out.push(`Learner overrides: residual ${JSON.stringify(b.overrides.residual)}, sac ${JSON.stringify(b.overrides.sac)}.`, "");
  if (b.temperature !== undefined && b.temperature !== 1) out.push(`Base sampling temperature ${b.temperature} (actor.noise_scale: the BC policy's initial DDIM noise × ${b.temperature}) in every session and evaluation, BC alone included.`, "");
  out.push(`Online budget ${b.episodes} episodes per method (session seeds ${b.sessionSeed}..), same demos, same scripted operator. ` +
    `Curve: the package live after k episodes on ${b.evalSeeds} held-out seeds (${b.evalSeed}..) every ${b.evalEvery} episodes; ` +
    `final: the package that ran the last online episode on ${b.finalEval} held-out seeds. Rates with Wilson 95% intervals.`, "");
  for (const t of b.tasks) {
    out.push(`## ${t.task}  (target ${pct(t.target)}; ${(t.seconds / 60).toFixed(1)} min)`, "");
    out.push(`Demos: ${t.demos.used} successful of ${t.demos.episodes} scripted episodes (expert quality ${t.demos.quality}); ${pixels ? "pixel " : ""}BC ${t.bc.steps} steps, final loss ${t.bc.finalLoss.toFixed(4)}` +
      `${t.bc.aux?.length ? `, camera encoders also trained to estimate ${t.bc.aux.join(", ")} (training only; the policy reads joints and cameras)` : ""}${t.bc.trainSeconds ? `, ${(t.bc.trainSeconds / 60).toFixed(1)} min` : ""}.`, "");
    out.push("| method | final success (held-out) | episodes to target | interventions first→last 20% | online success | learner updates/s (median / overall) | transitions acked | packages |");
    out.push("|---|---|---|---|---|---|---|---|");
    out.push(`| BC base alone | ${ci(t.bc.final)} | - | - | - | - | - | - |`);
    for (const m of Object.values(t.methods)) {
      const e = m.session.episodes;
      const q = Math.max(1, Math.floor(e.length / 5));
      out.push(`| ${m.label} | ${ci(m.final)} | ${m.episodesToTarget ?? `not reached in ${b.episodes}`} | ${interventionSlice(e.slice(0, q))} → ${interventionSlice(e.slice(-q))} | ` +
        `${ci(m.session.onlineSuccess)} | ${m.session.updatesPerSecMedian.toFixed(0)} / ${m.session.updatesPerSecOverall.toFixed(0)} | ` +
        `${m.session.transitions.acked}/${m.session.transitions.pushed} | ${m.session.packages} |`);
    }
    out.push("");
    const sup = Object.values(t.methods).filter((m) => m.supervised);
    if (t.bc.supervised && sup.length) {
      const row = (label: string, s: Supervised) => `| ${label} | ${pct(s.interventionRate)} (${s.interventionSteps}/${s.steps}) | ${s.episodesWithIntervention}/${s.n} | ${s.successes}/${s.n} |`;
      out.push(`Interventions on the same ${t.bc.supervised.n} held-out seeds, before and after the session: the scripted operator watches as in the sessions; ` +
        "no exploration noise. The session column above mixes the policy's progress with how hard each stretch of session seeds is; this one does not.", "");
      out.push("| policy | steps under operator control | episodes with a takeover | success with the operator |", "|---|---|---|---|");
      out.push(row("BC base alone", t.bc.supervised));
      for (const m of sup) out.push(row(`${m.label}, final`, m.supervised!));
      out.push("");
    }
    out.push("| online episodes | " + Object.values(t.methods).map((m) => m.label).join(" | ") + " |");
    out.push("|---|" + Object.values(t.methods).map(() => "---").join("|") + "|");
    const ks = [...new Set(Object.values(t.methods).flatMap((m) => m.curve.map((c) => c.episodes)))].sort((a, b) => a - b);
    for (const k of ks) {
      out.push(`| ${k} | ` + Object.values(t.methods).map((m) => {
        const c = m.curve.find((p) => p.episodes === k);
        return c ? ci(c) : "-";
      }).join(" | ") + " |");
    }
    out.push("");
    const bo = Object.values(t.methods).filter((m) => m.bestOf);
    if (bo.length && t.bc.bestOfConsensus) {
      const n = t.bc.bestOfConsensus.samples;
      out.push(`Best-of-${n} base chunks at every re-plan (docs/algorithms.md §1 "beyond the recipe"), final packages, same held-out seeds: ` +
        "critic = the residual package's critic ranks the N samples' first executed action; consensus = the medoid chunk (no critic), the control.", "");
      const both = bo.some((m) => m.bestOf!.critics);
      if (both) out.push("critics = the step critic and the package's chunk critic (scores of the K executed base actions) vote: each one's N scores standardised and summed.", "");
      out.push(`| policy | one sample | best-of-N consensus | best-of-N critic |${both ? " best-of-N critics |" : ""}`, `|---|---|---|---|${both ? "---|" : ""}`);
      out.push(`| BC base alone | ${ci(t.bc.final)} | ${ci(t.bc.bestOfConsensus)} | - |${both ? " - |" : ""}`);
      for (const m of bo) out.push(`| ${m.label} | ${ci(m.final)} | ${ci(m.bestOf!.consensus)} | ${ci(m.bestOf!.critic)} (another sample than the first in ${pct(m.bestOf!.rerankedFraction)} of chunks) |${both ? ` ${m.bestOf!.critics ? ci(m.bestOf!.critics) : "-"} |` : ""}`);
      out.push("");
    }
  }
  if (b.throughput) out.push("## Experience link throughput", "", ...throughputMarkdown(b.throughput));
  if (b.throughputFrames) out.push("## Experience link throughput with camera frames", "", ...throughputMarkdown(b.throughputFrames));
  if (b.notes.length) out.push("## Notes", "", ...b.notes.map((n) => `- ${n}`), "");
  out.push(`Total ${(b.seconds / 60).toFixed(1)} min.`);
  return out.join("\n");
}
