/**
 * Per-robot motion limits as pure functions, applied by the safety supervisor after safeJointCommand:
 * joint velocity and acceleration limits over the command stream, and a box the end effector must stay in.
 * Like safety.ts, each returns the command it allows plus what it changed.
 */
import type { SafetyChange } from "./safety.ts";
import type { ForwardKinematics } from "./kinematics.ts";

/** The previous command (position and the velocity it implied). */
export interface CommandHistory {
  position: readonly number[];
  velocity: readonly number[];
}

/** Velocity / acceleration limits per joint (rad/s, rad/s²). */
export interface RateLimits {
  names: readonly string[];
  maxVelocity: readonly number[];
  maxAcceleration: readonly number[];
}

/**
 * Limits the velocity implied by going from the previous command to `requested` in `dt`, and its change
 * from the previous velocity. With no history the previous velocity is 0 (start from rest).
 */
export function limitRates(requested: readonly number[], prev: CommandHistory, dt: number, limits: RateLimits): { positions: number[]; velocity: number[]; changes: SafetyChange[] } {
  const vel: string[] = [];
  const acc: string[] = [];
  const v = requested.map((q, i) => {
    let vi = (q - prev.position[i]) / dt;
    const vmax = limits.maxVelocity[i];
    if (Math.abs(vi) > vmax) {
      vi = Math.sign(vi) * vmax;
      vel.push(limits.names[i]);
    }
    const v0 = prev.velocity[i] ?? 0;
    const dv = limits.maxAcceleration[i] * dt;
    if (vi > v0 + dv || vi < v0 - dv) {
      vi = Math.min(v0 + dv, Math.max(v0 - dv, vi));
      acc.push(limits.names[i]);
    }
    return vi;
  });
  const changes: SafetyChange[] = [];
  if (vel.length) changes.push({ kind: "velocity_clamp", detail: `velocity limited: ${vel.join(", ")}`, joints: vel });
  if (acc.length) changes.push({ kind: "acceleration_clamp", detail: `acceleration limited: ${acc.join(", ")}`, joints: acc });
  return { positions: v.map((vi, i) => prev.position[i] + vi * dt), velocity: v, changes };
}

/** An axis-aligned box in the robot's base frame (m). */
export interface WorkspaceBox {
  min: readonly [number, number, number];
  max: readonly [number, number, number];
}

function outside(p: readonly number[], box: WorkspaceBox): number {
  let d = 0;
  for (let k = 0; k < 3; k++) d = Math.max(d, box.min[k] - p[k], p[k] - box.max[k]);
  return d;
}

/**
 * Keeps the end effector inside `box`: a command whose FK leaves the box is cut back along the joint-space
 * segment from `from` (the measured or last safe pose) to the last point still inside (bisection, 12 steps).
 * When `from` is already outside, only commands that bring the end effector closer to the box pass.
 */
export function limitWorkspace(requested: readonly number[], from: readonly number[], fk: ForwardKinematics, box: WorkspaceBox, names: readonly string[]): { positions: number[]; changes: SafetyChange[] } {
  const dReq = outside(fk(requested), box);
  if (dReq <= 0) return { positions: [...requested], changes: [] };
  const dFrom = outside(fk(from), box);
  const fmt = (p: number[]) => p.map((x) => x.toFixed(3)).join(", ");
  if (dFrom > 0) {
    if (dReq < dFrom) return { positions: [...requested], changes: [] };
    return { positions: [...from], changes: [{ kind: "workspace", detail: `end effector is ${(dFrom * 100).toFixed(1)} cm outside the workspace box; only moves back towards it are allowed (holding)`, joints: [...names] }] };
  }
  let lo = 0;
  let hi = 1;
  for (let k = 0; k < 12; k++) {
    const mid = (lo + hi) / 2;
    if (outside(fk(requested.map((q, i) => from[i] + mid * (q - from[i]))), box) <= 0) lo = mid;
    else hi = mid;
  }
  const out = requested.map((q, i) => from[i] + lo * (q - from[i]));
  return { positions: out, changes: [{ kind: "workspace", detail: `target end effector (${fmt(fk(requested))}) m leaves the workspace box [${fmt([...box.min])}]–[${fmt([...box.max])}]; stopped at its edge`, joints: [...names] }] };
}
