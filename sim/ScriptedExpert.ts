/**
 * A scripted demonstrator for the sim tasks. It reads only the observation vector (by name) and
 * uses the arm's kinematics, never simulator internals, so the same script can drive a real arm.
 * A quality knob makes the demos imperfect on purpose: behaviour cloning learns better from varied,
 * mostly-successful demonstrations than from one identical trajectory per layout.
 */
import { ARM_SPEC } from "./armSpec.ts";
import { inverseKinematics } from "./kinematics.ts";
import { createRng, type Rng } from "./rng.ts";
import type { TaskName } from "./tasks.ts";

/** Options of {@link ScriptedExpert}. */
export interface ScriptedExpertOptions {
  task: TaskName;
  /** 1 = clean, decisive demos; lower adds noise, pauses, sloppy alignment and occasional failures. Default 0.7. */
  quality?: number;
  /** Seed of the expert's own randomness (noise, pauses, failure modes); reset(seed) replaces it. */
  seed?: number;
}

/** Tuning of the script, in metres / radians per control tick (10 Hz). */
const CFG = {
  /** Fingertip height while travelling: 3.5 cm above the 4.5 cm cube. */
  zTravel: 0.08,
  /** Fingertip height while pushing: the finger face meets the cube's lower half, which tips it less. */
  zPush: 0.018,
  /** Distance behind the cube centre where the descent happens: clear of a 45°-rotated cube. */
  preDistance: ARM_SPEC.cubeHalf * 1.5 + ARM_SPEC.fingerHalf + 0.02,
  /** Cube centre → pusher centre at contact. */
  contactDistance: ARM_SPEC.cubeHalf + ARM_SPEC.fingerHalf,
  /** Fastest Cartesian travel per tick (0.3 m/s). */
  travelStep: 0.03,
  /** Pushing speed per tick (0.12 m/s): quasi-static pushing, so the cube stops when the finger does. */
  pushStep: 0.012,
  /** Largest joint change per tick (2.5 rad/s): smooth motion even when IK jumps. */
  maxJointStep: 0.25,
  /** Lateral misalignment (m) that makes a clean expert lift off and re-approach. */
  lateralTolerance: 0.012,
  /** Cube-to-target distance at which the push stops. */
  stopDistance: 0.006,
} as const;

/** Tuning of the peg_insert script (metres per control tick at 10 Hz). */
const PEG = {
  /** Peg bottom this far above the fixture top while travelling and aligning. */
  hover: 0.012,
  /** Alignment steps over the hole (1 cm/tick): fine enough for the servo to settle without overshoot. */
  alignStep: 0.01,
  /** Peg-axis-to-hole distance (m) at which a clean expert starts inserting; the hole leaves 2 mm per side. */
  alignTolerance: 0.0008,
  /** Insertion speed (6 cm/s): slow enough that a jam stops the peg before it slips in the fingers. */
  insertStep: 0.006,
  /** Insert until the bottom is this much deeper than the success depth, then hold. */
  overshoot: 0.004,
  /** Peg moved less than this (m) over the jam window while pushed down: it sits on the fixture's rim. */
  jamProgress: 0.0015,
  /** Ticks of no descent that count as a jam for a clean expert. */
  jamTicks: 3,
} as const;

type Phase = "approach" | "descend" | "push" | "retreat" | "done" | "align" | "insert";
type FailureMode = "none" | "giveUp" | "misaim" | "slow";

const TASK_NAMES: readonly TaskName[] = ["reach", "push_cube", "peg_insert", "multi_push"];

/** Scripted push_cube / peg_insert / reach demonstrator with a quality knob. */
export class ScriptedExpert {
  readonly task: TaskName;
  readonly quality: number;
  #rng: Rng;
  #phase: Phase = "approach";
  #prev: number[] | null = null;
  #pause = 0;
  #tick = 0;
  // Per-episode personality, drawn in reset(): how this demo is imperfect.
  #lateralBias = 0;
  #speed = 1;
  #failure: FailureMode = "none";
  #failureTick = 0;
  #aimOffset = [0, 0];
  // peg_insert: where this demo aims relative to the hole, and the recent peg heights for jam detection.
  #pegAim = [0, 0];
  #pegHeights: number[] = [];
  #jams = 0;

  /** Creates an expert; call reset(seed) at the start of every episode. */
  constructor(opts: ScriptedExpertOptions) {
    const quality = opts.quality ?? 0.7;
    if (!(quality >= 0 && quality <= 1)) throw new Error(`ScriptedExpert: quality must be in [0, 1], got ${quality}`);
    if (!TASK_NAMES.includes(opts.task)) {
      throw new Error(`ScriptedExpert: unknown task "${String(opts.task)}"; expected one of ${TASK_NAMES.join(", ")}`);
    }
    // multi_push is push_cube on the instructed cube and target (the observation's cube.* and target.*).
    this.task = opts.task === "multi_push" ? "push_cube" : opts.task;
    this.quality = quality;
    this.#rng = createRng(0);
    this.reset(opts.seed ?? 0);
  }

  /** peg_insert: how often this episode the expert lifted off a jammed peg and aligned again. */
  get jams(): number {
    return this.#jams;
  }

  /** Starts a new episode: clears the phase and draws this episode's imperfections from `seed`. */
  reset(seed: number): void {
    const rng = createRng(seed ^ 0x2545f491);
    const k = 1 - this.quality;
    this.#rng = rng;
    this.#phase = "approach";
    this.#prev = null;
    this.#pause = 0;
    this.#tick = 0;
    this.#lateralBias = k * 0.012 * rng.normal();
    this.#speed = rng.uniform(1 - 0.5 * k, 1);
    // Failure modes: a demonstrator that gives up, one that misjudges where the target is, one
    // that is too slow to finish. Linear in k, so quality 1 never fails on purpose.
    const roll = rng.next();
    // peg_insert: some sloppy insertions slide in anyway, so its demonstrators fail on purpose a little more often.
    const p = (this.task === "peg_insert" ? 1 : 0.8) * k;
    this.#failure = roll < 0.4 * p ? "giveUp" : roll < 0.8 * p ? "misaim" : roll < p ? "slow" : "none";
    this.#failureTick = Math.floor(rng.uniform(8, 30));
    const a = rng.uniform(-Math.PI, Math.PI);
    const r = rng.uniform(0.05, 0.08);
    this.#aimOffset = [r * Math.cos(a), r * Math.sin(a)];
    // peg_insert gives plenty of time, so there a "slow" demonstrator fails the way a misaiming one does.
    if (this.task === "peg_insert" && this.#failure === "slow") this.#failure = "misaim";
    // ... and a clean insertion takes ~1.5 s, so one that gives up does so within the first second.
    if (this.task === "peg_insert") this.#failureTick = Math.floor(this.#failureTick * 0.4);
    if (this.#failure === "slow") this.#speed = 0.3;
    // peg_insert (drawn after the push draws, so push demos are unchanged): "misaim" aims 4.5–7 mm off the
    // hole centre, onto the rim, and never notices the jam; otherwise a sub-millimetre bias that grows as k does.
    const pa = rng.uniform(-Math.PI, Math.PI);
    const pr = this.#failure === "misaim" ? rng.uniform(0.0045, 0.007) : k * 0.0015 * Math.abs(rng.normal());
    this.#pegAim = [pr * Math.cos(pa), pr * Math.sin(pa)];
    this.#pegHeights = [];
    this.#jams = 0;
  }

  /** Absolute joint targets (jointNames order) for this tick's observation. */
  act(obs: { names: readonly string[]; values: readonly number[] }): number[] {
    const o = readObservation(obs, this.task);
    this.#tick++;
    this.#prev ??= o.q.slice();
    const prev = this.#prev;
    const k = 1 - this.quality;
    // Hesitation: a human demonstrator sometimes stops to think; the arm holds its last command.
    if (this.#pause > 0) {
      this.#pause--;
      return prev.slice();
    }
    if (this.#rng.next() < 0.12 * k) this.#pause = Math.floor(this.#rng.uniform(1, 2 + 8 * k));
    const stalled = this.#failure === "giveUp" && this.#tick > this.#failureTick;
    const travel = CFG.travelStep * Math.max(this.#speed, 0.6);
    let goal: number[];
    let maxStep = travel;
    if (stalled) goal = [o.ee[0], o.ee[1], Math.max(o.ee[2], CFG.zTravel)];
    else if (this.task === "push_cube") {
      goal = this.#pushGoal(o);
      if (this.#phase === "push") maxStep = CFG.pushStep * this.#speed;
    } else if (this.task === "peg_insert") {
      const g = this.#pegGoal(o);
      goal = g.goal;
      maxStep = Math.min(travel, g.step * this.#speed);
    } else goal = o.target;
    const next = stepTowards(o.ee, goal, maxStep);
    const ik = inverseKinematics(next).q;
    const gripper = this.task === "push_cube" ? k * 0.01 * this.#rng.next() : this.task === "peg_insert" ? ARM_SPEC.peg.grip : 0.02;
    const cmd = [...ik, gripper];
    // Millimetre work wants a steadier hand: the peg demonstrator's tremor is a quarter of the pusher's.
    const tremor = (this.task === "peg_insert" ? 0.01 : 0.04) * k;
    for (let i = 0; i < 4; i++) {
      const d = Math.max(-CFG.maxJointStep, Math.min(CFG.maxJointStep, cmd[i] - prev[i]));
      cmd[i] = prev[i] + d + tremor * this.#rng.normal();
    }
    for (let i = 0; i < cmd.length; i++) cmd[i] = Math.min(ARM_SPEC.jointUpper[i], Math.max(ARM_SPEC.jointLower[i], cmd[i]));
    this.#prev = cmd;
    return cmd.slice();
  }

  /** The phase machine of the push: travel high behind the cube, descend, push along cube→target, re-approach if it drifts. */
  #pushGoal(o: Obs): number[] {
    const k = 1 - this.quality;
    const c = o.cube;
    // "misaim": the demonstrator believes the target is a few centimetres off and pushes there confidently.
    const off = this.#failure === "misaim" ? this.#aimOffset : [0, 0];
    const toTarget = [o.target[0] + off[0] - c[0], o.target[1] + off[1] - c[1]];
    const dist = Math.hypot(toTarget[0], toTarget[1]);
    const ang = Math.atan2(toTarget[1], toTarget[0]);
    const u = [Math.cos(ang), Math.sin(ang)];
    const side = [-u[1], u[0]];
    const behind = (d: number): number[] => [c[0] - u[0] * d + side[0] * this.#lateralBias, c[1] - u[1] * d + side[1] * this.#lateralBias];
    const pre = behind(CFG.preDistance);
    const e = o.ee;
    const w = [e[0] - c[0], e[1] - c[1]];
    const along = w[0] * u[0] + w[1] * u[1];
    const lateral = Math.abs(w[0] * side[0] + w[1] * side[1] - this.#lateralBias);
    const stopDistance = CFG.stopDistance + 0.015 * k;
    switch (this.#phase) {
      case "approach": {
        const far = Math.hypot(e[0] - pre[0], e[1] - pre[1]);
        if (far < 0.012 + 0.01 * k) this.#phase = "descend";
        // Lift before travelling sideways so the fingers never sweep through the cube.
        if (e[2] < CFG.zTravel - 0.02 && far > 0.03) return [e[0], e[1], CFG.zTravel];
        return [pre[0], pre[1], CFG.zTravel];
      }
      case "descend":
        if (e[2] < CFG.zPush + 0.008) this.#phase = "push";
        return [pre[0], pre[1], CFG.zPush];
      case "push": {
        if (dist < stopDistance) {
          this.#phase = "done";
          return [e[0], e[1], e[2]];
        }
        const tolerance = CFG.lateralTolerance + 0.01 * k;
        if (lateral > tolerance || along > -ARM_SPEC.cubeHalf * 0.7 || along < -0.1) {
          this.#phase = "retreat";
          return [e[0], e[1], CFG.zTravel];
        }
        // Aim the finger at the contact point advanced by what is left to go: the cube ends on the target.
        const p = behind(CFG.contactDistance - Math.min(dist, 0.05));
        return [p[0], p[1], CFG.zPush];
      }
      case "retreat":
        if (e[2] > CFG.zTravel - 0.015) this.#phase = "approach";
        return [e[0] - u[0] * 0.01, e[1] - u[1] * 0.01, CFG.zTravel];
      case "done":
        if (dist > stopDistance + 0.015) this.#phase = "retreat";
        return [e[0], e[1], Math.min(e[2] + 0.01, CFG.zTravel)];
      default:
        // The peg phases (align, insert) never occur in a push.
        return [e[0], e[1], e[2]];
    }
  }

  /**
   * The phase machine of the insertion, in peg coordinates (the ee goal is the peg goal minus the observed
   * peg-in-hand offset): hover over the hole, align to under a millimetre, insert slowly; on a jam (the peg
   * stops going down, or slides up in the fingers) lift back to the hover height and align again.
   */
  #pegGoal(o: Obs): { goal: number[]; step: number } {
    const k = 1 - this.quality;
    const P = ARM_SPEC.peg;
    const p = o.peg;
    const offset = [p[0] - o.ee[0], p[1] - o.ee[1], p[2] - o.ee[2]];
    const aim = [o.target[0] + this.#pegAim[0], o.target[1] + this.#pegAim[1]];
    const err = Math.hypot(p[0] - aim[0], p[1] - aim[1]);
    const bottom = p[2] - P.halfLength;
    const hoverZ = P.height + PEG.hover + P.halfLength;
    const eeGoal = (x: number, y: number, z: number): number[] => [x - offset[0], y - offset[1], z - offset[2]];
    const hover = (): number[] => eeGoal(aim[0], aim[1], hoverZ);
    switch (this.#phase) {
      case "insert": {
        // A sloppy demonstrator notices a jam later (k ticks more) and a misaiming one never does.
        const window = PEG.jamTicks + Math.round(6 * k);
        const h = this.#pegHeights;
        h.push(p[2]);
        if (h.length > window + 1) h.shift();
        const finalBottom = P.height - P.insertDepth - PEG.overshoot;
        if (bottom < finalBottom + 0.001) {
          this.#phase = "done";
          return { goal: o.ee.slice(), step: PEG.insertStep };
        }
        // Pushed down for `window` ticks without going down: the peg sits on the rim (or slips up in the fingers).
        if (h.length > window && h[0] - p[2] < PEG.jamProgress && this.#failure !== "misaim") {
          this.#jams++;
          this.#phase = "retreat";
          // Re-aim after a jam: a person wiggles, so the bias of a sloppy demo is drawn again.
          const r = k * 0.0015 * Math.abs(this.#rng.normal());
          const a = this.#rng.uniform(-Math.PI, Math.PI);
          this.#pegAim = [r * Math.cos(a), r * Math.sin(a)];
          return { goal: eeGoal(p[0], p[1], hoverZ), step: PEG.alignStep };
        }
        return { goal: eeGoal(aim[0], aim[1], P.halfLength + finalBottom), step: PEG.insertStep };
      }
      case "retreat":
        if (bottom > P.height + PEG.hover - 0.003) this.#phase = "align";
        return { goal: eeGoal(p[0], p[1], hoverZ), step: PEG.alignStep };
      case "align":
        if (err < PEG.alignTolerance + 0.002 * k && Math.abs(p[2] - hoverZ) < 0.004) {
          this.#phase = "insert";
          this.#pegHeights = [];
        }
        return { goal: hover(), step: PEG.alignStep };
      case "done":
        return { goal: o.ee.slice(), step: PEG.insertStep };
      default: {
        // approach: lift first if the peg is low and off the hole, so it never sweeps through the fixture.
        if (err < 0.004 && Math.abs(p[2] - hoverZ) < 0.006) this.#phase = "align";
        if (bottom < P.height + 0.006 && err > 0.006) return { goal: eeGoal(p[0], p[1], hoverZ), step: CFG.travelStep };
        return { goal: hover(), step: CFG.travelStep };
      }
    }
  }
}

/** The named fields the expert needs, pulled out of an observation vector. */
interface Obs {
  q: number[];
  ee: number[];
  cube: number[];
  target: number[];
  /** peg_insert: peg centre (the hole centre is `target`, z = 0). */
  peg: number[];
}

function readObservation(obs: { names: readonly string[]; values: readonly number[] }, task: TaskName): Obs {
  const get = (name: string): number => {
    const i = obs.names.indexOf(name);
    if (i < 0 || i >= obs.values.length) {
      throw new Error(`ScriptedExpert: observation has no "${name}" (got ${obs.names.join(", ")}); expected the ${task} layout of docs/contracts.md`);
    }
    return obs.values[i];
  };
  const q = ARM_SPEC.jointNames.map((j) => get(`q.${j}`));
  const ee = [get("ee.x"), get("ee.y"), get("ee.z")];
  if (task === "push_cube") {
    return { q, ee, cube: [get("cube.x"), get("cube.y")], target: [get("target.x"), get("target.y"), 0], peg: [] };
  }
  if (task === "peg_insert") {
    return { q, ee, cube: [], target: [get("hole.x"), get("hole.y"), 0], peg: [get("peg.x"), get("peg.y"), get("peg.z")] };
  }
  return { q, ee, cube: [], target: [get("target.x"), get("target.y"), get("target.z")], peg: [] };
}

/** `from` moved towards `to` by at most `maxStep` (Euclidean, 3-D). */
export function stepTowards(from: readonly number[], to: readonly number[], maxStep: number): number[] {
  const d = [to[0] - from[0], to[1] - from[1], to[2] - from[2]];
  const n = Math.hypot(d[0], d[1], d[2]);
  const s = n > maxStep ? maxStep / n : 1;
  return [from[0] + s * d[0], from[1] + s * d[1], from[2] + s * d[2]];
}

