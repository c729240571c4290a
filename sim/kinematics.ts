/**
 * Analytic kinematics of `rlft_arm5`: a yaw joint followed by a planar 3-link pitch chain.
 * Angles are measured from the vertical: with every joint at 0 the arm points straight up, and a
 * positive pitch leans the next link towards +x of the (yawed) arm plane.
 */
import { ARM_SPEC } from "./armSpec.ts";

/** The result of {@link inverseKinematics}. */
export interface IkSolution {
  /** shoulder_pan, shoulder_lift, elbow_flex, wrist_flex (rad). */
  q: [number, number, number, number];
  /** False when the point was out of reach (q then reaches towards it) or a joint left its limits (q is clamped). */
  reachable: boolean;
}

/** End-effector (`ee` site) position for the 4 arm joint angles; extra entries (the gripper) are ignored. */
export function forwardKinematics(q: ArrayLike<number>): [number, number, number] {
  const { shoulderHeight: h, upperArm: l1, forearm: l2, tool: l3 } = ARM_SPEC;
  const a1 = q[1];
  const a2 = a1 + q[2];
  const a3 = a2 + q[3];
  const r = l1 * Math.sin(a1) + l2 * Math.sin(a2) + l3 * Math.sin(a3);
  const z = h + l1 * Math.cos(a1) + l2 * Math.cos(a2) + l3 * Math.cos(a3);
  return [r * Math.cos(q[0]), r * Math.sin(q[0]), z];
}

/**
 * Joint angles that put the `ee` site at `p` with the tool at `pitch` from vertical
 * (default π: pointing straight down, which is what pushing and grasping want). Elbow-up branch.
 */
export function inverseKinematics(p: ArrayLike<number>, opts: { pitch?: number } = {}): IkSolution {
  const pitch = opts.pitch ?? Math.PI;
  const { shoulderHeight: h, upperArm: l1, forearm: l2, tool: l3 } = ARM_SPEC;
  const pan = Math.atan2(p[1], p[0]);
  const r = Math.hypot(p[0], p[1]);
  // Wrist axis position in the arm plane, relative to the shoulder_lift axis.
  const wr = r - l3 * Math.sin(pitch);
  const wz = p[2] - h - l3 * Math.cos(pitch);
  let d = Math.hypot(wr, wz);
  let reachable = true;
  const dMax = l1 + l2 - 1e-6;
  const dMin = Math.abs(l1 - l2) + 1e-6;
  if (d > dMax || d < dMin) {
    reachable = false;
    d = Math.min(Math.max(d, dMin), dMax);
  }
  const c2 = (d * d - l1 * l1 - l2 * l2) / (2 * l1 * l2);
  const elbow = Math.acos(Math.min(1, Math.max(-1, c2)));
  const lift = Math.atan2(wr, wz) - Math.atan2(l2 * Math.sin(elbow), l1 + l2 * Math.cos(elbow));
  const wrist = pitch - lift - elbow;
  const q: [number, number, number, number] = [pan, lift, elbow, wrapAngle(wrist)];
  for (let i = 0; i < 4; i++) {
    const lo = ARM_SPEC.jointLower[i];
    const hi = ARM_SPEC.jointUpper[i];
    if (q[i] < lo || q[i] > hi) {
      reachable = false;
      q[i] = Math.min(hi, Math.max(lo, q[i]));
    }
  }
  return { q, reachable };
}

/** Maps an angle into (-π, π] so the wrist never asks for a full extra turn. */
function wrapAngle(a: number): number {
  return a - 2 * Math.PI * Math.round(a / (2 * Math.PI));
}
