/**
 * `rlft replay <episode> --policy <package>`: open-loop evaluation. The recorded observations are fed, tick by
 * tick, to a policy (same chunking and history as on the robot, noise seeded from the episode seed), and its
 * actions are compared with what the robot executed (/joint_command) and with what the recorded policy proposed
 * (/policy/joint_command). With the recorded policy version and seed the proposals match bit for bit; with
 * another version the errors show where the two policies disagree. Intervention ticks are reported apart: there
 * the executed action is the operator's.
 */
import { PolicyActor } from "../policies/actors/PolicyActor.ts";
import { readEpisodeTrace, interventionSpans, type EpisodeTrace } from "./EpisodeTrace.ts";
import type { LinePlotSpec, Panel } from "./linePlot.ts";

/** Options of {@link openLoopEval}. */
export interface OpenLoopOptions {
  /** Policy package directory. */
  policy: string;
  /** Residual package on top of it. */
  residual?: string;
  /** Sampler mode; default: the one recorded in the episode metadata, else "graph". */
  sampler?: "graph" | "ts";
  threads?: number;
}

/** Summary statistics of a set of per-step errors. */
export interface ErrorStats {
  steps: number;
  mean: number;
  p50: number;
  p95: number;
  max: number;
}

/** One tick of the comparison. */
export interface OpenLoopStep {
  t: number;
  intervention: boolean;
  /** The replayed policy's action (robot units). */
  action: number[];
  executed: number[];
  proposed: number[];
  /** Largest |action − executed| over the joints. */
  error: number;
  /** True when the action equals the recorded proposal exactly. */
  exact: boolean;
}

/** Result of an open-loop evaluation. */
export interface OpenLoopResult {
  file: string;
  jointNames: string[];
  policyVersion: string;
  recordedVersions: string[];
  /** True when the replayed version is the one recorded. */
  sameVersion: boolean;
  seed: number;
  steps: OpenLoopStep[];
  /** Per-step max error vs the executed action: all, policy-controlled, intervention ticks. */
  all: ErrorStats;
  policySteps: ErrorStats;
  interventionSteps: ErrorStats;
  /** Mean |action − executed| per joint (policy-controlled ticks). */
  perJoint: { name: string; mean: number; max: number }[];
  /** Ticks whose action equals the recorded proposal bit for bit, of those with a recorded proposal. */
  exact: number;
  comparable: number;
  interventionSpans: [number, number][];
}

/** Mean, median, 95th percentile and max. */
export function errorStats(xs: readonly number[]): ErrorStats {
  if (!xs.length) return { steps: 0, mean: NaN, p50: NaN, p95: NaN, max: NaN };
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * (s.length - 1) + 0.5))];
  return { steps: xs.length, mean: xs.reduce((a, b) => a + b, 0) / xs.length, p50: q(0.5), p95: q(0.95), max: s.at(-1)! };
}

/** Runs the policy open-loop over the recorded observations of `file`. */
export async function openLoopEval(file: string, opts: OpenLoopOptions): Promise<OpenLoopResult> {
  const tr = await readEpisodeTrace(file);
  return openLoopEvalTrace(tr, opts);
}

/** {@link openLoopEval} on an already read trace. */
export async function openLoopEvalTrace(tr: EpisodeTrace, opts: OpenLoopOptions): Promise<OpenLoopResult> {
  const ticks = tr.ticks.filter((k) => k.obs.length);
  if (!ticks.length) throw new Error(`${tr.file} has no /observation messages: open-loop evaluation needs the observations the policy saw`);
  const jointNames = tr.jointNames.length ? tr.jointNames : tr.info.joint_names?.split(",") ?? [];
  const mode = opts.sampler ?? (tr.info.sampler === "ts" ? "ts" : "graph");
  const actor = await PolicyActor.create(opts.policy, { jointNames, observationNames: tr.obsNames, residual: opts.residual, mode, threads: opts.threads ?? 1, training: false });
  const seed = Number(tr.info.seed ?? 0);
  const steps: OpenLoopStep[] = [];
  try {
    actor.reset(seed);
    for (const k of ticks) {
      const action = await actor.act({ names: tr.obsNames, values: k.obs });
      const executed = k.executed;
      const error = executed.length ? Math.max(...action.map((a, j) => Math.abs(a - executed[j]))) : NaN;
      const exact = k.proposed.length === action.length && k.proposed.every((p, j) => p === action[j]);
      steps.push({ t: k.t, intervention: k.intervention, action, executed, proposed: k.proposed, error, exact });
    }
  } finally {
    await actor.close();
  }
  const recordedVersions = [...new Set(ticks.map((k) => k.policy?.version).filter((v): v is string => !!v))];
  if (!recordedVersions.length && tr.info.policy_version) recordedVersions.push(tr.info.policy_version);
  const withExec = steps.filter((s) => Number.isFinite(s.error));
  const own = withExec.filter((s) => !s.intervention);
  return {
    file: tr.file,
    jointNames,
    policyVersion: actor.version,
    recordedVersions,
    sameVersion: recordedVersions.length === 1 && recordedVersions[0] === actor.version,
    seed,
    steps,
    all: errorStats(withExec.map((s) => s.error)),
    policySteps: errorStats(own.map((s) => s.error)),
    interventionSteps: errorStats(withExec.filter((s) => s.intervention).map((s) => s.error)),
    perJoint: jointNames.map((name, j) => {
      const e = own.map((s) => Math.abs(s.action[j] - s.executed[j]));
      return { name, mean: e.reduce((a, b) => a + b, 0) / Math.max(1, e.length), max: Math.max(0, ...e) };
    }),
    exact: steps.filter((s) => s.exact).length,
    comparable: steps.filter((s) => s.proposed.length).length,
    interventionSpans: interventionSpans(ticks),
  };
}

/** Lines for people: versions, exactness, error statistics. */
export function formatOpenLoop(r: OpenLoopResult): string {
  const f = (x: number) => (Number.isFinite(x) ? x.toExponential(2) : "-");
  const row = (label: string, s: ErrorStats) => `${label.padEnd(22)} ${String(s.steps).padStart(5)} ${f(s.mean).padStart(10)} ${f(s.p50).padStart(10)} ${f(s.p95).padStart(10)} ${f(s.max).padStart(10)}`;
  return [
    `policy ${r.policyVersion} vs recorded ${r.recordedVersions.join(", ") || "(unknown)"}${r.sameVersion ? " (same version)" : ""}; seed ${r.seed}`,
    `identical to the recorded proposal: ${r.exact}/${r.comparable} ticks`,
    `${"|action - executed|".padEnd(22)} ${"steps".padStart(5)} ${"mean".padStart(10)} ${"p50".padStart(10)} ${"p95".padStart(10)} ${"max".padStart(10)}`,
    row("all ticks", r.all),
    row("policy in control", r.policySteps),
    row("intervention ticks", r.interventionSteps),
    `per joint (policy in control), mean/max: ${r.perJoint.map((p) => `${p.name} ${f(p.mean)}/${f(p.max)}`).join(", ")}`,
    `interventions: ${r.interventionSpans.length} spans, ${r.steps.filter((s) => s.intervention).length} ticks`,
  ].join("\n");
}

/** Plot of executed vs replayed action per joint with intervention spans shaded, then the per-step error. */
export function plotOpenLoop(r: OpenLoopResult): LinePlotSpec {
  const t = r.steps.map((s) => s.t);
  const dt = t.length > 1 ? t[1] - t[0] : 0.1;
  const spans = r.interventionSpans.map(([a, b]) => ({ from: t[a] - dt / 2, to: t[b] + dt / 2 }));
  const panels: Panel[] = r.jointNames.map((name, j) => ({
    title: name,
    spans,
    series: [
      { name: "executed", x: t, y: r.steps.map((s) => s.executed[j] ?? NaN) },
      { name: "policy (replay)", x: t, y: r.steps.map((s) => s.action[j]), dashed: true },
    ],
  }));
  panels.push({ title: "max |action - executed|", spans, series: [{ name: "error", x: t, y: r.steps.map((s) => s.error), color: "tab:red" }] });
  return { panels, title: `open-loop: ${r.policyVersion}`, xLabel: "episode time (s)", spanLabel: "intervention", panelHeight: 110 };
}
