/** Random start states of the SO-101 tasks, drawn from a seed only (so any seed replays exactly). */
import { createRng, type Rng } from "../rng.ts";
import type { So101TaskName } from "../tasks.ts";
import { So101Kinematics, topDownRotation } from "./so101Kinematics.ts";
import { SO101_SPEC } from "./so101Spec.ts";
import { sampleMultiPush, type CubeColor, type MultiPushLayout, type MultiPushRanges, type TargetSide } from "../multiPush.ts";

/** Initial state of one SO-101 episode. */
export interface So101EpisodeInit {
  /** Joint positions in jointNames order (rad; the gripper's servo angle last). */
  q: number[];
  /** Cube centre x, y (resting on the table) and yaw (push_cube, pick_place). */
  cube?: { x: number; y: number; yaw: number };
  /** Target: the reach point, or the disc centre on the table (z = 0). */
  target: [number, number, number];
  /** multi_push: both cubes, both targets, the goal and the instruction (cube/target above: the seed's instructed pair). */
  multi?: MultiPushLayout;
}

/** The pose the IK starts from when sampling: gripper pointing down, 7 cm over the table, 18 cm in front of the base. */
export const SO101_READY: readonly number[] = [0, -0.6, 0.6, 1.55, 0, 0];

/** Height of the gripperframe site over the table when the jaw tips are 1.2 cm above it (pushing, grasping). */
export const SO101_LOW_Z = 0.015;

/** Site height of the scripted motions' travel: the jaw tips ~2 cm over the 3 cm cube. */
export const SO101_TRAVEL_Z = 0.055;

/** True when the gripper reaches (x, y) pointing down at the working height, at some yaw of the jaws. */
export function reachableTopDown(x: number, y: number, z = SO101_LOW_Z, yaw = Math.atan2(y, x)): boolean {
  const k = So101Kinematics.shared();
  return k.ik([x, y, z], SO101_READY, { R: topDownRotation(yaw) }).reachable;
}

/** Draws the start pose and the objects of an episode of `task` from `seed`. */
export function sampleSo101Episode(task: So101TaskName, seed: number): So101EpisodeInit {
  const rng = createRng(seed);
  const q = startPose(rng, task);
  const t = SO101_SPEC.table;
  const onTable = (x: number, y: number, m: number): boolean => x > t.xMin + m && x < t.xMax - m && Math.abs(y) < t.yHalf - m;
  if (task === "reach") {
    for (let attempt = 0; ; attempt++) {
      const r = rng.uniform(0.14, 0.3);
      const a = rng.uniform(-0.9, 0.9);
      const p: [number, number, number] = [r * Math.cos(a), r * Math.sin(a), rng.uniform(0.03, 0.2)];
      if (So101Kinematics.shared().ik(p, SO101_READY, { free: [true, true, true, true, false] }).reachable || attempt > 200) return { q, target: p };
    }
  }
  if (task === "multi_push") {
    const multi = sampleSo101MultiPush(rng);
    return { q, cube: multi.cubes[multi.goal.color], target: multi.targets[multi.goal.side], multi };
  }
  // push_cube: the pusher's stand-off points behind the cube and behind the target must be reachable pointing
  // down, low (pushing) and at the travel height (arriving over the first one).
  // pick_place: the cube and the target must be reachable for a top-down grasp at a yaw that fits the cube.
  const stand = SO101_SPEC.cubeHalf + 0.03;
  const pushable = (x: number, y: number, yaw: number, z: number): boolean => reachableTopDown(x, y, z, yaw - Math.PI / 2) || reachableTopDown(x, y, z, yaw + Math.PI / 2);
  for (let attempt = 0; ; attempt++) {
    const r = rng.uniform(0.14, 0.27);
    const a = rng.uniform(-0.7, 0.7);
    const cx = r * Math.cos(a);
    const cy = r * Math.sin(a);
    const yaw = rng.uniform(-Math.PI / 4, Math.PI / 4);
    const d = task === "push_cube" ? rng.uniform(0.07, 0.14) : rng.uniform(0.08, 0.2);
    const phi = rng.uniform(-Math.PI, Math.PI);
    const tx = cx + d * Math.cos(phi);
    const ty = cy + d * Math.sin(phi);
    const u = [Math.cos(phi), Math.sin(phi)];
    const ok =
      onTable(tx, ty, 0.05) &&
      Math.hypot(tx, ty) > 0.12 &&
      (task === "push_cube"
        ? pushable(cx - stand * u[0], cy - stand * u[1], phi, SO101_TRAVEL_Z) && pushable(cx - stand * u[0], cy - stand * u[1], phi, SO101_LOW_Z) && pushable(tx - stand * u[0], ty - stand * u[1], phi, SO101_LOW_Z)
        : reachableTopDown(cx, cy, SO101_LOW_Z, yaw) && reachableTopDown(cx, cy, SO101_TRAVEL_Z, yaw) && reachableTopDown(tx, ty, SO101_TRAVEL_Z));
    if (ok || attempt > 500) return { q, cube: { x: cx, y: cy, yaw }, target: [tx, ty, 0] };
  }
}

/** Distance from point p to the segment a–b (on the table plane). */
function segmentDistance(p: readonly number[], a: readonly number[], b: readonly number[]): number {
  const d = [b[0] - a[0], b[1] - a[1]];
  const len2 = d[0] * d[0] + d[1] * d[1];
  const t = len2 > 0 ? Math.min(1, Math.max(0, ((p[0] - a[0]) * d[0] + (p[1] - a[1]) * d[1]) / len2)) : 0;
  return Math.hypot(p[0] - a[0] - t * d[0], p[1] - a[1] - t * d[1]);
}

/** The SO-101's multi_push ranges (sampleSo101MultiPush). */
const SO101_MULTI_PUSH: MultiPushRanges = { nearX: [0.15, 0.18], farX: [0.245, 0.265], cubeY: 0.04, targetX: [0.18, 0.23], targetY: [0.115, 0.145] };

/**
 * The SO-101's multi_push layout: a red and a blue cube, one near the base (x 15–18 cm) and one far (24.5–26.5 cm),
 * which colour is near drawn at random, both within ±4 cm of the centre line; a target disc 11.5–14.5 cm to each
 * side at x 18–23 cm; the instruction as rlft_arm5's multi_push (sim/multiPush.ts). Every one of the four
 * cube → target pushes must be feasible, because a fixed `--instruction` may ask for any of them on any seed: the
 * pusher's stand-offs behind the cube (at the travel and the pushing height) and behind the target reachable
 * pointing down, and the pushed cube's path and the pusher's sweep at least 5.5 cm from the other cube's centre.
 */
export function sampleSo101MultiPush(rng: Rng): MultiPushLayout {
  const stand = SO101_SPEC.cubeHalf + 0.03;
  const pushable = (x: number, y: number, phi: number, z: number): boolean => reachableTopDown(x, y, z, phi - Math.PI / 2) || reachableTopDown(x, y, z, phi + Math.PI / 2);
  const colors: CubeColor[] = ["red", "blue"];
  const sides: TargetSide[] = ["left", "right"];
  for (let attempt = 0; ; attempt++) {
    const layout = sampleMultiPush(rng, SO101_MULTI_PUSH);
    const { cubes, targets } = layout;
    const ok = colors.every((color) =>
      sides.every((side) => {
        const c = cubes[color];
        const o = cubes[color === "red" ? "blue" : "red"];
        const t = targets[side];
        const phi = Math.atan2(t[1] - c.y, t[0] - c.x);
        const u = [Math.cos(phi), Math.sin(phi)];
        const start = [c.x - stand * u[0], c.y - stand * u[1]];
        const end = [t[0] - stand * u[0], t[1] - stand * u[1]];
        return (
          pushable(start[0], start[1], phi, SO101_TRAVEL_Z) &&
          pushable(start[0], start[1], phi, SO101_LOW_Z) &&
          pushable(end[0], end[1], phi, SO101_LOW_Z) &&
          segmentDistance([o.x, o.y], [c.x, c.y], t) > 0.055 &&
          segmentDistance([o.x, o.y], start, end) > 0.055
        );
      }),
    );
    if (ok || attempt > 500) return layout;
  }
}

/**
 * Gripper pointing down 5–7.5 cm above the table near the base (the wrist_flex limit keeps a vertical gripper
 * below ~8 cm), a little joint noise; closed for pushing.
 */
function startPose(rng: Rng, task: So101TaskName): number[] {
  const p = [rng.uniform(0.13, 0.2), rng.uniform(-0.05, 0.05), rng.uniform(0.05, 0.075)];
  const arm = So101Kinematics.shared().ik(p, SO101_READY, { R: topDownRotation(rng.uniform(-0.3, 0.3)) }).q;
  const gripper = task === "push_cube" || task === "multi_push" ? rng.uniform(0, 0.05) : rng.uniform(0, 0.4);
  const q = [...arm.map((v) => v + 0.03 * rng.normal()), gripper];
  return q.map((v, i) => Math.min(SO101_SPEC.jointUpper[i], Math.max(SO101_SPEC.jointLower[i], v)));
}
