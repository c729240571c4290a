/** homeTrajectory: properties over random poses and limits (seeded), and its bad-input errors. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRng } from "../sim/rng.ts";
import { homeTrajectory } from "./homeTrajectory.ts";

test("home trajectory: no joint step exceeds max speed × dt, joints arrive together, it ends exactly at home", () => {
  const rng = createRng(7);
  const u = (a: number, b: number) => a + (b - a) * rng.next();
  for (let trial = 0; trial < 500; trial++) {
    const n = 1 + Math.floor(u(0, 7));
    const start = Array.from({ length: n }, () => u(-3, 3));
    const home = Array.from({ length: n }, () => (rng.next() < 0.1 ? start[0] : u(-3, 3)));
    const speed = Array.from({ length: n }, () => u(0.05, 3));
    const dt = u(0.002, 0.2);
    const pts = homeTrajectory(start, home, speed, dt);
    let prev = start;
    for (const p of pts) {
      p.forEach((q, i) => assert.ok(Math.abs(q - prev[i]) <= speed[i] * dt * (1 + 1e-9), `trial ${trial}: joint ${i} steps ${Math.abs(q - prev[i])} > ${speed[i] * dt}`));
      prev = p;
    }
    if (pts.length) assert.deepEqual(pts[pts.length - 1], home);
    else assert.deepEqual(home, start);
    // Minimal: one tick fewer would break the slowest joint's limit.
    const need = Math.max(...home.map((h, i) => Math.abs(h - start[i]) / (speed[i] * dt)));
    assert.ok(pts.length < need + 1, `trial ${trial}: ${pts.length} ticks for ${need}`);
    // Straight line: every point is start + s·(home − start) with one s for all joints.
    for (const p of pts) {
      const s = p.map((q, i) => (Math.abs(home[i] - start[i]) > 1e-6 ? (q - start[i]) / (home[i] - start[i]) : NaN)).filter(Number.isFinite);
      for (const x of s) assert.ok(Math.abs(x - s[0]) < 1e-6);
    }
  }
});

test("home trajectory: already home is no motion; bad input is refused with the reason", () => {
  assert.deepEqual(homeTrajectory([0.1, 0.2], [0.1, 0.2], [1, 1], 0.1), []);
  assert.throws(() => homeTrajectory([0, NaN], [0, 0], [1, 1], 0.1), /non-finite joint position \(measured joint 1\)/);
  assert.throws(() => homeTrajectory([0, 0], [0, 0, 0], [1, 1], 0.1), /one value per joint/);
  assert.throws(() => homeTrajectory([0], [1], [0], 0.1), /max speed must be positive/);
  assert.throws(() => homeTrajectory([0], [1], [1], 0), /control period must be positive/);
});
