/**
 * A scripted person supervising an autonomous episode, the stand-in for the human of HIL-SERL
 * (Luo et al. 2024, arXiv 2410.21845): they watch, take over when the episode goes wrong, correct for
 * a couple of seconds with the scripted expert's strategy, and hand back, so the interventions stay
 * short corrections rather than whole demonstrations. Like the expert, it reads only the observation.
 */
import { ARM_SPEC } from "./armSpec.ts";
import { createRng } from "./rng.ts";
import { createScriptedExpert, type TaskExpert } from "./createExpert.ts";
import { SO101_SPEC } from "./so101/so101Spec.ts";
import { taskSpec, type SimRobotName, type TaskName, type TaskSpec } from "./tasks.ts";

/** Options of {@link ScriptedOperator}. */
export interface ScriptedOperatorOptions {
  task: TaskName;
  /** The simulated robot (default rlft_arm5): its task layout and its scripted expert. */
  robot?: SimRobotName;
  /** Seed of the operator's own randomness (reaction time); reset(seed) replaces it. Default 0. */
  seed?: number;
  /** Seconds without progress before the operator steps in. Default 3. */
  patienceSec?: number;
  /** Seconds the operator keeps control once it has taken over. Default 2. */
  correctionSec?: number;
  /** Control ticks per second; observe() is called once per tick. Default 10. */
  controlHz?: number;
  /** Never steps in during the first seconds of an episode: the policy gets to start. Default 1. */
  graceSec?: number;
  /** Seconds from noticing trouble to acting; default drawn per episode, 0.2–0.5 s, like a person's. */
  reactionSec?: number;
}

/** What the operator does on one tick. */
export interface OperatorDecision {
  /** True while the operator commands the robot. */
  takeOver: boolean;
  /** Absolute joint targets (jointNames order) while takeOver is true. */
  action?: number[];
}

/** Task-specific gauges read off the observation: how far from done, and whether things go wrong. */
interface Gauge {
  /** Distance to done (m): cube→target, peg bottom→inserted pose, ee→target. */
  remaining: number;
  /** Second progress measure (push: ee→cube, so the approach counts as progress), or NaN. */
  approach: number;
  /** True when the episode is visibly going wrong right now (push: cube moved away; peg: pressed on the rim). */
  pressing: boolean;
}

/** Progress smaller than this (m) does not count: sensor noise and wobble. */
const PROGRESS_STEP = { remaining: 0.004, approach: 0.01 } as const;
/** push_cube: the cube this much further from the target than at its best is "moving away". */
const PUSH_AWAY = 0.02;

/** The scripted supervisor; one instance per robot, reset at every episode. */
export class ScriptedOperator {
  readonly task: TaskName;
  readonly robot: SimRobotName;
  readonly #spec: TaskSpec;
  readonly #hz: number;
  readonly #patience: number;
  readonly #correction: number;
  readonly #grace: number;
  readonly #reactionSec: number | undefined;
  #reaction = 1;
  #seed = 0;
  #tick = 0;
  #best = Infinity;
  #bestApproach = Infinity;
  #lastProgress = 0;
  #pressingSince = -1;
  #noticedAt = -1;
  #controlUntil = -1;
  #expert: TaskExpert | null = null;
  #takeovers = 0;
  #stepsInControl = 0;
  /** Why the last takeover happened, for logs. */
  lastReason = "";

  /** Creates an operator; call reset(seed) at the start of every episode. */
  constructor(opts: ScriptedOperatorOptions) {
    try {
      this.#spec = taskSpec(opts.robot, opts.task);
    } catch (e) {
      throw new Error(`ScriptedOperator: ${(e as Error).message}`);
    }
    this.task = opts.task;
    this.robot = this.#spec.robot;
    this.#hz = positive("controlHz", opts.controlHz ?? 10);
    this.#patience = Math.max(1, Math.round(positive("patienceSec", opts.patienceSec ?? 3) * this.#hz));
    this.#correction = Math.max(1, Math.round(positive("correctionSec", opts.correctionSec ?? 2) * this.#hz));
    this.#grace = Math.round((opts.graceSec ?? 1) * this.#hz);
    this.#reactionSec = opts.reactionSec;
    this.reset(opts.seed ?? 0);
  }

  /** Starts a new episode: forgets the last one (counts included) and draws this episode's reaction time. */
  reset(seed: number): void {
    const rng = createRng(seed ^ 0x6a09e667);
    this.#seed = seed;
    this.#reaction = Math.max(1, Math.round((this.#reactionSec ?? rng.uniform(0.2, 0.5)) * this.#hz));
    this.#tick = 0;
    this.#best = Infinity;
    this.#bestApproach = Infinity;
    this.#lastProgress = 0;
    this.#pressingSince = -1;
    this.#noticedAt = -1;
    this.#controlUntil = -1;
    this.#expert = null;
    this.#takeovers = 0;
    this.#stepsInControl = 0;
    this.lastReason = "";
  }

  /** Takeovers since reset. */
  get takeovers(): number {
    return this.#takeovers;
  }

  /** Ticks the operator has commanded since reset. */
  get stepsInControl(): number {
    return this.#stepsInControl;
  }

  /** True while the operator is in control. */
  get active(): boolean {
    return this.#expert !== null;
  }

  /** Watches one tick's observation; returns whether the operator commands this tick, and what. */
  observe(obs: { names: readonly string[]; values: readonly number[] }): OperatorDecision {
    const t = this.#tick++;
    const g = gauge(this.#spec, obs);
    this.#track(g, t);
    if (this.#expert) {
      if (t < this.#controlUntil) return this.#act(obs);
      // Hand back: the policy gets a fresh patience window, judged from where the correction left it.
      this.#expert = null;
      this.#lastProgress = t;
      this.#best = g.remaining;
      this.#pressingSince = -1;
    }
    const trouble = t >= this.#grace ? this.#trouble(g, t) : "";
    if (!trouble) {
      this.#noticedAt = -1;
      return { takeOver: false };
    }
    if (this.#noticedAt < 0) this.#noticedAt = t;
    // A person needs a moment between seeing the problem and grabbing the controls.
    if (t - this.#noticedAt < this.#reaction) return { takeOver: false };
    this.#noticedAt = -1;
    this.#takeovers++;
    this.lastReason = trouble;
    this.#controlUntil = t + this.#correction;
    this.#expert = createScriptedExpert({ robot: this.robot, task: this.task, quality: 1, seed: this.#seed * 97 + this.#takeovers, controlHz: this.#hz });
    return this.#act(obs);
  }

  #act(obs: { names: readonly string[]; values: readonly number[] }): OperatorDecision {
    this.#stepsInControl++;
    return { takeOver: true, action: this.#expert!.act(obs) };
  }

  /** Updates the progress bookkeeping from this tick's gauges. */
  #track(g: Gauge, t: number): void {
    if (g.remaining < this.#best - PROGRESS_STEP.remaining || !Number.isFinite(this.#best)) {
      this.#best = Math.min(g.remaining, this.#best);
      this.#lastProgress = t;
    }
    if (g.approach < this.#bestApproach - PROGRESS_STEP.approach || (!Number.isFinite(this.#bestApproach) && Number.isFinite(g.approach))) {
      this.#bestApproach = Math.min(g.approach, this.#bestApproach);
      this.#lastProgress = t;
    }
    if (!g.pressing) this.#pressingSince = -1;
    else if (this.#pressingSince < 0) this.#pressingSince = t;
  }

  /** The reason to step in now, or "" when the episode looks fine. */
  #trouble(g: Gauge, t: number): string {
    if (g.remaining < this.#spec.successRadius) return "";
    if (this.task === "push_cube" && g.remaining > this.#best + PUSH_AWAY) {
      return `cube moved ${((g.remaining - this.#best) * 100).toFixed(1)} cm away from the target`;
    }
    if (this.#pressingSince >= 0 && t - this.#pressingSince >= this.#patience / 3) {
      return `peg pressed on the fixture rim for ${((t - this.#pressingSince) / this.#hz).toFixed(1)} s`;
    }
    if (t - this.#lastProgress >= this.#patience) return `no progress for ${((t - this.#lastProgress) / this.#hz).toFixed(1)} s`;
    return "";
  }
}

function positive(name: string, v: number): number {
  if (!(v > 0) || !Number.isFinite(v)) throw new Error(`ScriptedOperator: ${name} must be a positive number, got ${v}`);
  return v;
}

/** Reads the task's progress gauges off an observation (by name, so the layout order does not matter). */
function gauge(spec: TaskSpec, obs: { names: readonly string[]; values: readonly number[] }): Gauge {
  const task = spec.name;
  const get = (name: string): number => {
    const i = obs.names.indexOf(name);
    if (i < 0 || i >= obs.values.length) {
      throw new Error(`ScriptedOperator: observation has no "${name}" (got ${obs.names.join(", ")}); expected the ${spec.robot} ${task} layout of sim/tasks.ts`);
    }
    return obs.values[i];
  };
  const ee = [get("ee.x"), get("ee.y"), get("ee.z")];
  switch (task) {
    case "push_cube":
    case "multi_push":
    case "pick_place": {
      // multi_push: cube.* / target.* are the instructed pair. pick_place: the cube must also come down to rest.
      const half = spec.robot === "so101" ? SO101_SPEC.cubeHalf : ARM_SPEC.cubeHalf;
      const c = [get("cube.x"), get("cube.y"), obs.names.includes("cube.z") ? get("cube.z") : half];
      const xy = Math.hypot(c[0] - get("target.x"), c[1] - get("target.y"));
      const remaining = task === "pick_place" ? Math.hypot(xy, Math.max(0, c[2] - half)) : xy;
      return { remaining, approach: Math.hypot(ee[0] - c[0], ee[1] - c[1], ee[2] - c[2]), pressing: false };
    }
    case "peg_insert": {
      const P = ARM_SPEC.peg;
      const peg = [get("peg.x"), get("peg.y"), get("peg.z")];
      const off = Math.hypot(peg[0] - get("hole.x"), peg[1] - get("hole.y"));
      const bottom = peg[2] - P.halfLength;
      const goalZ = P.height - P.insertDepth;
      // Pressing on the rim: the peg's bottom at the fixture top, over the fixture but not over the hole.
      const overFixture = off < P.half + P.clearance + P.wall + P.half;
      const pressing = overFixture && off > P.clearance + 0.0015 && bottom < P.height + 0.003;
      return { remaining: Math.hypot(off, Math.max(0, bottom - goalZ)), approach: NaN, pressing };
    }
    case "reach":
      return { remaining: Math.hypot(ee[0] - get("target.x"), ee[1] - get("target.y"), ee[2] - get("target.z")), approach: NaN, pressing: false };
  }
}
