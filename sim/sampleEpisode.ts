/** Random initial conditions of an episode, drawn from a seed only (so any seed replays exactly). */
import { ARM_SPEC } from "./armSpec.ts";
import { inverseKinematics } from "./kinematics.ts";
import { createRng } from "./rng.ts";
import type { Arm5TaskName } from "./tasks.ts";
import { sampleMultiPush, type MultiPushLayout } from "./multiPush.ts";

/** Initial state of one episode. */
export interface EpisodeInit {
  /** Arm joint positions in jointNames order (the last entry is the gripper opening). */
  q: number[];
  /** Cube centre x, y and yaw (push_cube only). */
  cube?: { x: number; y: number; yaw: number };
  /** Target centre (z = 0 for the push_cube disc and for the peg_insert fixture, whose hole it is). */
  target: [number, number, number];
  /** Yaw of the target body (peg_insert: the fixture faces the base, so the held peg's sides line up with the hole's). */
  targetYaw?: number;
  /** multi_push: both cubes, both targets, the goal and the instruction. */
  multi?: MultiPushLayout;
}

/** Draws the start pose, the cube and the target of an episode of `task` from `seed`. */
export function sampleEpisode(task: Arm5TaskName, seed: number): EpisodeInit {
  const rng = createRng(seed);
  const s = ARM_SPEC;
  // Start above the table near the base, tool down, so the arm never starts inside the cube.
  const start = inverseKinematics([rng.uniform(0.1, 0.16), rng.uniform(-0.06, 0.06), rng.uniform(0.1, 0.16)]).q;
  const q = [...start.map((v) => v + 0.03 * rng.normal()), rng.uniform(0, 0.03)];
  for (let i = 0; i < q.length; i++) q[i] = Math.min(s.jointUpper[i], Math.max(s.jointLower[i], q[i]));
  if (task === "peg_insert") {
    // The peg starts squeezed between the fingers; the hole lies where the tool can reach it pointing down.
    q[4] = s.peg.grip;
    const r = rng.uniform(0.16, 0.26);
    const a = rng.uniform(-0.6, 0.6);
    // The arm has no wrist roll: the held peg's yaw is the pan angle, atan2(y, x), at the hole too.
    return { q, target: [r * Math.cos(a), r * Math.sin(a), 0], targetYaw: a };
  }
  if (task === "multi_push") {
    const multi = sampleMultiPush(rng);
    const c = multi.cubes[multi.goal.color];
    return { q, cube: c, target: multi.targets[multi.goal.side], multi };
  }
  if (task === "reach") {
    const r = rng.uniform(0.14, 0.28);
    const a = rng.uniform(-0.8, 0.8);
    return { q, target: [r * Math.cos(a), r * Math.sin(a), rng.uniform(0.03, 0.15)] };
  }
  // push_cube: cube and target both inside the annulus the tool can sweep at table height, and the
  // pusher positions before and after the push reachable too, so every seed is solvable.
  const stand = s.cubeHalf + s.fingerHalf + 0.02;
  const inAnnulus = (x: number, y: number, lo: number, hi: number): boolean => {
    const r = Math.hypot(x, y);
    return r >= lo && r <= hi && Math.abs(Math.atan2(y, x)) <= 0.85;
  };
  for (let attempt = 0; ; attempt++) {
    const r = rng.uniform(0.15, 0.27);
    const a = rng.uniform(-0.6, 0.6);
    const cx = r * Math.cos(a);
    const cy = r * Math.sin(a);
    const d = rng.uniform(0.1, 0.2);
    const phi = rng.uniform(-Math.PI, Math.PI);
    const tx = cx + d * Math.cos(phi);
    const ty = cy + d * Math.sin(phi);
    const ux = Math.cos(phi);
    const uy = Math.sin(phi);
    const ok =
      inAnnulus(tx, ty, 0.14, 0.29) &&
      inAnnulus(cx - stand * ux, cy - stand * uy, 0.1, 0.31) &&
      inAnnulus(tx - stand * ux, ty - stand * uy, 0.1, 0.31);
    if (ok || attempt > 10000) {
      return { q, cube: { x: cx, y: cy, yaw: rng.uniform(-Math.PI / 4, Math.PI / 4) }, target: [tx, ty, 0] };
    }
  }
}
