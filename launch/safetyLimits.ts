/** The safety supervisor's rate and workspace limits, built from a launch file's `safety:` block. */
import type { LaunchConfig } from "./LaunchConfig.ts";
import type { RateLimits, WorkspaceBox } from "../hardware/motionLimits.ts";
import { dhForwardKinematics, FK_PRESETS, type ForwardKinematics } from "../hardware/kinematics.ts";

/** The safety supervisor's rate and workspace limits from a launch file's `safety:` block. */
export function motionLimits(
  safety: LaunchConfig["safety"],
  names: readonly string[],
  controlHz: number,
): { rates?: RateLimits & { dt: number }; workspace?: { fk: ForwardKinematics; box: WorkspaceBox } } {
  const perJoint = (v: number | number[] | undefined, key: string): number[] | undefined => {
    if (v === undefined) return undefined;
    const arr = typeof v === "number" ? names.map(() => v) : v;
    if (arr.length !== names.length) throw new Error(`safety.${key}: expected ${names.length} values (${names.join(", ")}), got ${arr.length}`);
    return arr;
  };
  const maxVelocity = perJoint(safety.max_velocity, "max_velocity");
  const maxAcceleration = perJoint(safety.max_acceleration, "max_acceleration");
  if (maxAcceleration && !maxVelocity) throw new Error("safety.max_acceleration needs safety.max_velocity too");
  const out: ReturnType<typeof motionLimits> = {};
  if (maxVelocity) out.rates = { names, maxVelocity, maxAcceleration: maxAcceleration ?? names.map(() => Infinity), dt: 1 / controlHz };
  const w = safety.workspace;
  if (w) out.workspace = { fk: w.fk === "dh" ? dhForwardKinematics(w.dh!) : FK_PRESETS[w.fk], box: { min: w.min, max: w.max } };
  return out;
}
