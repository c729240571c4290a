/** Axis shaping as pure functions: deadzone, scaling, clamping (every device uses the same ones). */

/**
 * Scaled radial deadzone on one axis: |x| ≤ deadzone → 0; beyond it the output rises linearly from 0 so
 * there is no jump at the deadzone's edge. `x` and the result are in [-1, 1].
 */
export function deadzone(x: number, zone: number): number {
  if (!Number.isFinite(x)) return 0;
  const a = Math.min(1, Math.abs(x));
  if (a <= zone) return 0;
  return (Math.sign(x) * (a - zone)) / (1 - zone);
}

/** Axis shaping options (zod-validated in TeleopConfig). */
export interface AxisShaping {
  /** Fraction of the axis range that reads as zero (stick drift, resting hand). */
  deadzone: number;
  /** Full deflection → this many metres per second (translation). */
  linearSpeed: number;
  /** Full deflection → this many radians per second (rotation). */
  angularSpeed: number;
  /** Per-axis sign flips / gains for (x, y, z, roll, pitch, yaw): mount the device any way round. */
  axisGain: readonly number[];
}

/**
 * Six normalised axes in [-1, 1] → displacement over `dtSec`: deadzone, then gain, then speed × dt.
 * Returns the linear and angular parts and whether anything moved.
 */
export function shapeTwist(axes: readonly number[], dtSec: number, s: AxisShaping): { linear: [number, number, number]; angular: [number, number, number]; moving: boolean } {
  const v = [0, 1, 2, 3, 4, 5].map((i) => deadzone(axes[i] ?? 0, s.deadzone) * (s.axisGain[i] ?? 1));
  const moving = v.some((x) => x !== 0);
  const l = s.linearSpeed * dtSec;
  const r = s.angularSpeed * dtSec;
  return { linear: [v[0] * l, v[1] * l, v[2] * l], angular: [v[3] * r, v[4] * r, v[5] * r], moving };
}

/** Clamps `x` to [lo, hi]. */
export function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

/** Picks six robot axes out of a device's axes: `map[i]` is the device axis (−1 = none), times `gain[i]`. */
export function mapAxes(device: readonly number[], map: readonly number[], gain: readonly number[]): number[] {
  return [0, 1, 2, 3, 4, 5].map((i) => (map[i] >= 0 ? (device[map[i]] ?? 0) * (gain[i] ?? 1) : 0));
}
