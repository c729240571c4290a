/** Random start states of the SO-101 tasks, drawn from a seed only (so any seed replays exactly). */
import { createRng, type Rng } from "../rng.ts";
import type { So101TaskName } from "../tasks.ts";
import { So101Kinematics, topDownRotation } from "./so101Kinematics.ts";
import { SO101_SPEC } from "./so101Spec.ts";

/** Initial state of one SO-101 episode. */
export interface So101EpisodeInit {
  /** Joint positions in jointNames order (rad; the gripper's servo angle last). */
  q: number[];
  /** Cube centre x, y (resting on the table) and yaw (push_cube, pick_place). */
  cube?: { x: number; y: number; yaw: number };
  /** Target: the reach point, or the disc centre on the table (z = 0). */
  target: [number, number, number];
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

/**
 * Gripper pointing down 5–7.5 cm above the table near the base (the wrist_flex limit keeps a vertical gripper
 * below ~8 cm), a little joint noise; closed for pushing.
 */
function startPose(rng: Rng, task: So101TaskName): number[] {
  const p = [rng.uniform(0.13, 0.2), rng.uniform(-0.05, 0.05), rng.uniform(0.05, 0.075)];
  const arm = So101Kinematics.shared().ik(p, SO101_READY, { R: topDownRotation(rng.uniform(-0.3, 0.3)) }).q;
  const gripper = task === "push_cube" ? rng.uniform(0, 0.05) : rng.uniform(0, 0.4);
  const q = [...arm.map((v) => v + 0.03 * rng.normal()), gripper];
  return q.map((v, i) => Math.min(SO101_SPEC.jointUpper[i], Math.max(SO101_SPEC.jointLower[i], v)));
}
