/**
 * The pick_place phase machine of the SO-101 expert: open and hover over the cube with the jaws square to its
 * faces, descend, close (a grasp that closes on nothing is retried), lift, carry the cube (not the gripper) over
 * the target, lower it onto the table, open, lift away. The SO-101's fixed jaw does not move, so the closing jaw
 * pushes the cube against it: the grasp point is the fixed jaw's inner face plus half a cube.
 */
import type { EePose } from "./so101Kinematics.ts";
import type { So101Obs } from "./so101Obs.ts";
import { SO101_SPEC } from "./so101Spec.ts";
import { chooseYaw, jawYaw, SO101_MOTION, type MotionPlan } from "./so101Motion.ts";

/** Phases of a pick and place. */
export type PickPhase = "approach" | "descend" | "close" | "lift" | "carry" | "lower" | "release" | "retreat" | "done";

/** The phase machine's memory. */
export interface PickState {
  phase: PickPhase;
  /** Tick the phase began. */
  since: number;
  /** Gripper reading of the previous tick (to see the jaw stop on the cube). */
  lastGripper: number;
}

/** What the machine needs from the expert each tick. */
export interface PickContext {
  tick: number;
  hz: number;
  quality: number;
  /** This demo's grasp-point error (m) and jaw-yaw error (rad). */
  bias: readonly number[];
  yawBias: number;
  /** Where this demo believes the target is, relative to it ("misaim" demos). */
  aimOffset: readonly number[];
  /** The yaw the expert commands now. */
  currentYaw: number;
}

const P = {
  /** Cube centre along the site's z (jaw axis) when held against the fixed jaw's inner face. */
  graspOffset: -0.002,
  /** Site height of the grasp: the jaw tips 1 cm over the table. */
  zGrasp: 0.013,
  /** Site height while carrying: the held cube's bottom ~4 cm over the table, as high as a vertical gripper goes near the base. */
  zCarry: SO101_MOTION.zTravel,
  /** Jaw opening for the approach (rad): the tips ~5 cm apart around a 3 cm cube. */
  open: 0.75,
  /**
   * Squeeze: the jaw is commanded this far past where the cube stops it, so the servo holds the cube with its full
   * torque (kp · 0.12 rad saturates the STS3215's 2.94 N·m), without a command far from the measured angle, which a
   * safety step limit would clip every tick.
   */
  squeezeBy: 0.12,
  /** The squeeze never goes past the closed limit. */
  closed: -0.17,
  /** A reading below this after closing means the jaw closed on nothing. */
  emptyBelow: 0.06,
  /** Opening for the release. */
  release: 0.6,
} as const;

const CUBE = SO101_SPEC.cubeHalf;

/** The pick_place phase machine. */
export const pickPlacePlan = {
  /** The phase to start in, from what is seen: a cube already in the jaws (an operator taking over) is carried on. */
  initial(o: So101Obs, measured: EePose): PickState {
    const held = o.cube[2] > CUBE + 0.01 && Math.hypot(o.cube[0] - measured.pos[0], o.cube[1] - measured.pos[1], o.cube[2] - measured.pos[2]) < 0.03;
    return { phase: held ? "carry" : "approach", since: 0, lastGripper: o.q[5] };
  },

  /** This tick's motion; advances `s`. */
  step(s: PickState, o: So101Obs, measured: EePose, ctx: PickContext): MotionPlan {
    const M = SO101_MOTION;
    const k = 1 - ctx.quality;
    const c = o.cube;
    const g = o.q[5];
    const moving = Math.abs(g - s.lastGripper);
    s.lastGripper = g;
    const go = (phase: PickPhase): void => {
      s.phase = phase;
      s.since = ctx.tick;
    };
    const elapsed = (ctx.tick - s.since) / ctx.hz;
    // Before the grasp the jaws turn square to the cube's faces (its yaw is known modulo 90°); once closed they keep
    // their yaw (the held cube turns with them).
    const free = s.phase === "approach" || s.phase === "descend";
    const yaw = free ? chooseYaw(o.cubeYaw + ctx.yawBias, Math.PI / 2, ctx.currentYaw, [c, o.target]) : ctx.currentYaw;
    const jaw = [Math.cos(yaw), Math.sin(yaw)];
    // Grasp point (where the cube centre will sit) ↔ site.
    const site = (x: number, y: number, z: number): number[] => [x - P.graspOffset * jaw[0], y - P.graspOffset * jaw[1], z];
    const e = measured.pos;
    const squeeze = Math.max(P.closed, g - P.squeezeBy);
    const grasp = [e[0] + P.graspOffset * measured.R[0][2], e[1] + P.graspOffset * measured.R[1][2]];
    const plan = (p: number[], speed: number, gripper: number): MotionPlan => ({ site: p, yaw, speed, gripper, loose: p[2] > P.zGrasp + 0.02 });
    const over = [c[0] + ctx.bias[0], c[1] + ctx.bias[1]];
    const held = Math.hypot(c[0] - grasp[0], c[1] - grasp[1]) < 0.03 && c[2] > CUBE + 0.003;
    if ((s.phase === "lift" || s.phase === "carry" || s.phase === "lower") && !held && elapsed > 0.5) go("approach");
    switch (s.phase) {
      case "approach": {
        const far = Math.hypot(grasp[0] - over[0], grasp[1] - over[1]);
        const ready = far < 0.005 + 0.006 * k && Math.abs(yaw - jawYaw(measured)) < 0.12 && g > P.open - 0.15;
        if (ready) go("descend");
        // Lift before travelling sideways, so the jaws never sweep through the cube.
        if (e[2] < M.zTravel - 0.02 && far > 0.02) return plan([e[0], e[1], M.zTravel], M.travelSpeed, P.open);
        return plan(site(over[0], over[1], M.zTravel), M.travelSpeed, P.open);
      }
      case "descend":
        if (e[2] < P.zGrasp + 0.004) go("close");
        return plan(site(over[0], over[1], P.zGrasp), M.descendSpeed, P.open);
      case "close":
        // Wait for the jaw to stop on the cube (or close on nothing).
        if (elapsed > 0.4 && moving < 0.01) {
          if (g < P.emptyBelow) go("retreat");
          else go("lift");
        }
        return plan([e[0], e[1], P.zGrasp], M.descendSpeed, squeeze);
      case "lift":
        if (e[2] > P.zCarry - 0.01) go("carry");
        return plan([e[0], e[1], P.zCarry], M.descendSpeed, squeeze);
      case "carry": {
        const aim = [o.target[0] + ctx.aimOffset[0], o.target[1] + ctx.aimOffset[1]];
        // Steer the cube, not the gripper: it may sit a little off the grasp point.
        const off = [c[0] - e[0], c[1] - e[1]];
        // Over the aim point, or as close as the arm gets (the servos stall a few mm short near the reach limits).
        const miss = Math.hypot(c[0] - aim[0], c[1] - aim[1]);
        if (miss < 0.006 + 0.006 * k || (miss < 0.015 && elapsed > 3)) go("lower");
        return plan([aim[0] - off[0], aim[1] - off[1], P.zCarry], M.travelSpeed, squeeze);
      }
      case "lower":
        // Cube bottom onto the table.
        if (c[2] < CUBE + 0.003 || elapsed > 3) go("release");
        return plan([e[0], e[1], e[2] - (c[2] - CUBE) + 0.001], M.descendSpeed / 2, squeeze);
      case "release":
        if (g > P.release - 0.15) go("retreat");
        return plan([e[0], e[1], e[2]], M.descendSpeed, P.release);
      case "retreat": {
        const placed = Math.hypot(c[0] - o.target[0], c[1] - o.target[1]) < SO101_SPEC.targetRadius && c[2] < CUBE + 0.005;
        if (e[2] > M.zTravel - 0.012) go(placed ? "done" : "approach");
        return plan([e[0], e[1], M.zTravel], M.descendSpeed, P.release);
      }
      case "done":
        return plan([e[0], e[1], M.zTravel], M.travelSpeed, P.release);
    }
  },
};
