import { test } from "node:test";
import assert from "node:assert/strict";
import { forwardKinematics, inverseKinematics } from "./kinematics.ts";
import { createRng } from "./rng.ts";

test("FK(IK(p)) ≈ p over the tabletop workspace, tool pointing down", () => {
  const rng = createRng(1);
  for (let i = 0; i < 500; i++) {
    const r = rng.uniform(0.1, 0.33);
    const a = rng.uniform(-1.2, 1.2);
    const p = [r * Math.cos(a), r * Math.sin(a), rng.uniform(0.01, 0.15)];
    const { q, reachable } = inverseKinematics(p);
    assert.ok(reachable, `point ${p.map((v) => v.toFixed(3))} should be reachable`);
    const f = forwardKinematics(q);
    for (let k = 0; k < 3; k++) assert.ok(Math.abs(f[k] - p[k]) < 1e-9, `axis ${k}: ${f[k]} vs ${p[k]}`);
    // Tool pointing down means the three pitch joints sum to π.
    assert.ok(Math.abs(q[1] + q[2] + q[3] - Math.PI) < 1e-9);
  }
});

test("IK(FK(q)) recovers elbow-up joint angles", () => {
  const q = [0.3, 0.4, 1.5, Math.PI - 1.9];
  const sol = inverseKinematics(forwardKinematics(q));
  for (let k = 0; k < 4; k++) assert.ok(Math.abs(sol.q[k] - q[k]) < 1e-9);
});

test("out-of-reach points are flagged and still give finite angles", () => {
  const sol = inverseKinematics([0.9, 0, 0.02]);
  assert.equal(sol.reachable, false);
  assert.ok(sol.q.every(Number.isFinite));
});
