/**
 * The way home at episode reset on a real arm: a straight line in joint space from where the arm is to the
 * configured home pose, every joint arriving together, sampled once per control tick so that no joint moves
 * more than its speed limit × dt between two points. Pure; the safety supervisor executes it (nodes/SafetySupervisorNode.ts).
 */

/** Points to command, one per tick, ending exactly at `home` (empty when already there). */
export function homeTrajectory(start: readonly number[], home: readonly number[], maxSpeed: readonly number[], dt: number): number[][] {
  if (start.length !== home.length || maxSpeed.length !== home.length) {
    throw new Error(`home trajectory: start (${start.length}), home (${home.length}) and max speed (${maxSpeed.length}) need one value per joint`);
  }
  if (!(dt > 0) || !Number.isFinite(dt)) throw new Error(`home trajectory: control period must be positive, got ${dt}`);
  const bad = [...start, ...home].findIndex((v) => !Number.isFinite(v));
  if (bad >= 0) throw new Error(`home trajectory: non-finite joint position (${bad < start.length ? "measured" : "home"} joint ${bad % start.length}); not moving`);
  if (maxSpeed.some((v) => !(v > 0) || !Number.isFinite(v))) throw new Error(`home trajectory: max speed must be positive and finite per joint, got [${maxSpeed.join(", ")}]`);
  // Ticks the slowest joint needs; a hair of slack keeps an exact multiple from rounding up to one more tick.
  const n = Math.max(0, ...home.map((h, i) => Math.ceil(Math.abs(h - start[i]) / (maxSpeed[i] * dt) - 1e-9)));
  const out: number[][] = [];
  for (let k = 1; k <= n; k++) out.push(k === n ? [...home] : home.map((h, i) => start[i] + ((h - start[i]) * k) / n));
  return out;
}
