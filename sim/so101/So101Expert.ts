/**
 * A scripted demonstrator for the SO-101 tasks (reach, push_cube, pick_place, multi_push). Like sim/ScriptedExpert.ts for
 * rlft_arm5 it reads only the observation (joint positions plus the sim-only object poses: it stands for the
 * person who sees the scene) and moves through the arm's own kinematics (damped-least-squares IK on the model's
 * chain, so101Kinematics.ts). Motion is planned in Cartesian space from the last command, in SI speeds, so demos
 * look the same at 10 Hz and 30 Hz. A quality knob makes demos imperfect on purpose, as BC wants: noise,
 * hesitation, sloppy alignment, and at lower quality demonstrators that give up, misjudge the target or dawdle.
 */
import { createRng, type Rng } from "../rng.ts";
import type { So101TaskName } from "../tasks.ts";
import { So101Kinematics, topDownRotation, type EePose } from "./so101Kinematics.ts";
import { readSo101Obs, type So101Obs } from "./so101Obs.ts";
import { SO101_SPEC } from "./so101Spec.ts";
import { pickPlacePlan, type PickState } from "./pickPlacePlan.ts";
import { chooseYaw, clampAbs, jawYaw, SO101_MOTION, stepTowards, wrapAngle, type MotionPlan } from "./so101Motion.ts";

/** Options of {@link So101Expert}. */
export interface So101ExpertOptions {
  task: So101TaskName;
  /** 1 = clean, decisive demos; lower adds noise, pauses, sloppy alignment and occasional failures. Default 0.7. */
  quality?: number;
  /** Seed of the expert's own randomness; reset(seed) replaces it. */
  seed?: number;
  /** Control ticks per second (default 10): speeds are per second, steps per tick follow from it. */
  controlHz?: number;
}

type PushPhase = "approach" | "descend" | "push" | "retreat" | "done";
type FailureMode = "none" | "giveUp" | "misaim" | "slow";

/** Scripted SO-101 demonstrator with a quality knob. */
export class So101Expert {
  readonly task: So101TaskName;
  readonly quality: number;
  readonly controlHz: number;
  readonly #k = So101Kinematics.shared();
  #rng: Rng = createRng(0);
  #cmd: number[] | null = null;
  #yaw = 0;
  #pause = 0;
  #tick = 0;
  #push: PushPhase = "approach";
  #pick: PickState = { phase: "approach", since: 0, lastGripper: NaN };
  // Per-episode personality, drawn in reset().
  #speed = 1;
  #bias = [0, 0];
  #yawBias = 0;
  #failure: FailureMode = "none";
  #failureTick = 0;
  #aimOffset = [0, 0];

  /** Creates an expert; call reset(seed) at the start of every episode. */
  constructor(opts: So101ExpertOptions) {
    const quality = opts.quality ?? 0.7;
    if (!(quality >= 0 && quality <= 1)) throw new Error(`So101Expert: quality must be in [0, 1], got ${quality}`);
    if (!["reach", "push_cube", "pick_place", "multi_push"].includes(opts.task)) throw new Error(`So101Expert: unknown task "${String(opts.task)}"; the SO-101 has reach, push_cube, pick_place, multi_push`);
    const hz = opts.controlHz ?? 10;
    if (!(hz > 0 && Number.isFinite(hz))) throw new Error(`So101Expert: controlHz must be a positive number, got ${hz}`);
    // multi_push is push_cube on the instructed cube and target (the observation's cube.* and target.*).
    this.task = opts.task === "multi_push" ? "push_cube" : opts.task;
    this.quality = quality;
    this.controlHz = hz;
    this.reset(opts.seed ?? 0);
  }

  /** Starts a new episode: clears the phase and draws this episode's imperfections from `seed`. */
  reset(seed: number): void {
    const rng = createRng(seed ^ 0x3c6ef372);
    const k = 1 - this.quality;
    this.#rng = rng;
    this.#cmd = null;
    this.#pause = 0;
    this.#tick = 0;
    this.#push = "approach";
    this.#pick = { phase: "approach", since: 0, lastGripper: NaN };
    this.#speed = rng.uniform(1 - 0.5 * k, 1);
    this.#bias = [k * 0.005 * rng.normal(), k * 0.005 * rng.normal()];
    this.#yawBias = k * 0.12 * rng.normal();
    // Failure modes, linear in k so quality 1 never fails on purpose.
    const roll = rng.next();
    const p = 0.8 * k;
    this.#failure = roll < 0.4 * p ? "giveUp" : roll < 0.8 * p ? "misaim" : roll < p ? "slow" : "none";
    this.#failureTick = Math.floor(rng.uniform(1, 4) * this.controlHz);
    const a = rng.uniform(-Math.PI, Math.PI);
    const r = rng.uniform(0.05, 0.08);
    this.#aimOffset = this.#failure === "misaim" ? [r * Math.cos(a), r * Math.sin(a)] : [0, 0];
    if (this.#failure === "slow") this.#speed = 0.3;
  }

  /** The phase of the push or the pick and place the demonstrator is in (tests and logs; reach: "approach"). */
  get phase(): string {
    return this.task === "pick_place" ? this.#pick.phase : this.#push;
  }

  /** Absolute joint targets (jointNames order) for this tick's observation. */
  act(obs: { names: readonly string[]; values: readonly number[] }): number[] {
    const o = readSo101Obs(obs, this.task, "So101Expert");
    const dt = 1 / this.controlHz;
    const k = 1 - this.quality;
    this.#tick++;
    const measured = this.#k.fk(o.q);
    if (!this.#cmd) {
      this.#cmd = o.q.slice();
      this.#yaw = jawYaw(measured);
      if (this.task === "pick_place") this.#pick = pickPlacePlan.initial(o, measured);
    }
    // Hesitation: a person sometimes stops to think; the arm holds its last command.
    if (this.#pause > 0) {
      this.#pause--;
      return this.#cmd.slice();
    }
    if (this.#rng.next() < 1.2 * k * dt) this.#pause = Math.floor(this.#rng.uniform(0.1, 0.2 + 0.8 * k) * this.controlHz);
    const plan = this.#failure === "giveUp" && this.#tick > this.#failureTick ? this.#hold(measured) : this.#plan(o, measured);
    const from = this.#k.fk(this.#cmd);
    const next = stepTowards(from.pos, plan.site, plan.speed * this.#speed * dt);
    let ik;
    if (plan.yaw === null) ik = this.#k.ik(next, this.#cmd, { free: [true, true, true, true, false] });
    else {
      this.#yaw += clampAbs(wrapAngle(plan.yaw - this.#yaw), SO101_MOTION.yawSpeed * dt);
      ik = this.#k.ik(next, this.#cmd, { R: topDownRotation(this.#yaw), orientationWeight: plan.loose ? 0.02 : 0.1 });
    }
    const prev = this.#cmd;
    const cmd = [...ik.q, prev[5] + clampAbs(plan.gripper - prev[5], SO101_MOTION.gripperSpeed * dt)];
    const maxStep = SO101_MOTION.maxJointSpeed * dt;
    // A person's hand is not steady: a little tremor on the arm joints, more at lower quality.
    const tremor = 0.02 * k * Math.sqrt(10 * dt);
    for (let i = 0; i < 5; i++) cmd[i] = prev[i] + clampAbs(cmd[i] - prev[i], maxStep) + tremor * this.#rng.normal();
    for (let i = 0; i < cmd.length; i++) cmd[i] = Math.min(SO101_SPEC.jointUpper[i], Math.max(SO101_SPEC.jointLower[i], cmd[i]));
    this.#cmd = cmd;
    return cmd.slice();
  }

  #plan(o: So101Obs, measured: EePose): MotionPlan {
    switch (this.task) {
      case "reach": {
        const t = o.target;
        return { site: [t[0] + this.#aimOffset[0] + this.#bias[0], t[1] + this.#aimOffset[1] + this.#bias[1], t[2]], yaw: null, speed: SO101_MOTION.travelSpeed, gripper: this.#cmd![5] };
      }
      case "push_cube":
      case "multi_push":
        return this.#pushPlan(o, measured);
      case "pick_place":
        return pickPlacePlan.step(this.#pick, o, measured, {
          tick: this.#tick,
          hz: this.controlHz,
          quality: this.quality,
          bias: this.#bias,
          yawBias: this.#yawBias,
          aimOffset: this.#aimOffset,
          currentYaw: this.#yaw,
        });
    }
  }

  /** Gave up: lift to the travel height where it is and stay. */
  #hold(measured: EePose): MotionPlan {
    const p = measured.pos;
    return { site: [p[0], p[1], Math.max(p[2], SO101_MOTION.zTravel)], yaw: this.task === "reach" ? null : this.#yaw, speed: SO101_MOTION.travelSpeed, gripper: this.#cmd![5] };
  }

  /** The push: travel high behind the cube, descend, push along cube→target with the jaws' flat side, re-approach if it drifts. */
  #pushPlan(o: So101Obs, measured: EePose): MotionPlan {
    const M = SO101_MOTION;
    const k = 1 - this.quality;
    const h = SO101_SPEC.cubeHalf;
    const c = o.cube;
    const aim = [o.target[0] + this.#aimOffset[0], o.target[1] + this.#aimOffset[1]];
    const dist = Math.hypot(aim[0] - c[0], aim[1] - c[1]);
    const u = dist > 1e-9 ? [(aim[0] - c[0]) / dist, (aim[1] - c[1]) / dist] : [1, 0];
    const side = [-u[1], u[0]];
    const lateralBias = this.#bias[0];
    // The jaws close across the push: the site's y axis (= z × x for a vertical gripper) lies along ±u.
    const yaw = chooseYaw(Math.atan2(u[1], u[0]) - Math.PI / 2, Math.PI, this.#yaw, [c]);
    const jaw = [Math.cos(yaw), Math.sin(yaw)];
    // Paddle (push point) ↔ site: the paddle sits paddleOffset along the jaw axis.
    const paddle = [measured.pos[0] + M.paddleOffset * measured.R[0][2], measured.pos[1] + M.paddleOffset * measured.R[1][2], measured.pos[2]];
    const site = (x: number, y: number, z: number): number[] => [x - M.paddleOffset * jaw[0], y - M.paddleOffset * jaw[1], z];
    const behind = (d: number): number[] => [c[0] - u[0] * d + side[0] * lateralBias, c[1] - u[1] * d + side[1] * lateralBias];
    const contact = h + M.paddleHalf;
    const pre = behind(contact + 0.025);
    const w = [paddle[0] - c[0], paddle[1] - c[1]];
    const along = w[0] * u[0] + w[1] * u[1];
    const lateral = Math.abs(w[0] * side[0] + w[1] * side[1] - lateralBias);
    const stop = 0.006 + 0.012 * k;
    const plan = (p: number[], z: number, speed: number): MotionPlan => ({ site: site(p[0], p[1], z), yaw, speed, gripper: M.pushGrip, loose: z > M.zLow + 0.02 });
    switch (this.#push) {
      case "approach": {
        const far = Math.hypot(paddle[0] - pre[0], paddle[1] - pre[1]);
        if (far < 0.008 + 0.01 * k && Math.abs(wrapAngle(yaw - jawYaw(measured))) < 0.15) this.#push = "descend";
        // Lift before travelling sideways, so the jaws never sweep through the cube.
        if (paddle[2] < M.zTravel - 0.02 && far > 0.03) return plan(paddle, M.zTravel, M.travelSpeed);
        return plan(pre, M.zTravel, M.travelSpeed);
      }
      case "descend":
        if (paddle[2] < M.zLow + 0.006) this.#push = "push";
        return plan(pre, M.zLow, M.descendSpeed);
      case "push": {
        if (dist < stop) {
          this.#push = "done";
          return plan(paddle, paddle[2], M.pushSpeed);
        }
        if (lateral > 0.014 + 0.008 * k || along > -h * 0.7 || along < -0.08) {
          this.#push = "retreat";
          return plan(paddle, M.zTravel, M.travelSpeed);
        }
        // Aim the paddle at the contact point advanced by what is left to go: the cube ends on the target.
        return plan(behind(contact - Math.min(dist, 0.04)), M.zLow, M.pushSpeed);
      }
      case "retreat":
        if (paddle[2] > M.zTravel - 0.012) this.#push = "approach";
        return plan([paddle[0] - u[0] * 0.01, paddle[1] - u[1] * 0.01], M.zTravel, M.travelSpeed);
      case "done":
        if (dist > stop + 0.015) this.#push = "retreat";
        return plan(paddle, Math.min(paddle[2] + 0.01, M.zTravel), M.travelSpeed);
    }
  }
}
