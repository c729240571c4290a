import { test } from "node:test";
import assert from "node:assert/strict";
import { safeJointCommand, type JointLimits } from "./safety.ts";

const limits: JointLimits = { names: ["a", "b"], lower: [-1, -1], upper: [1, 1], maxStep: [0.1, 0.1] };

test("a safe command passes unchanged", () => {
  const r = safeJointCommand([0.05, -0.05], [0, 0], limits);
  assert.deepEqual(r.positions, [0.05, -0.05]);
  assert.equal(r.changes.length, 0);
  assert.equal(r.held, false);
});

test("NaN holds the measured position and names the joint", () => {
  const r = safeJointCommand([NaN, 0], [0.3, 0.2], limits);
  assert.deepEqual(r.positions, [0.3, 0.2]);
  assert.equal(r.held, true);
  assert.equal(r.changes[0].kind, "nan_guard");
  assert.deepEqual(r.changes[0].joints, ["a"]);
});

test("limits clamp, then the step is limited from the measured position", () => {
  const r = safeJointCommand([5, -0.02], [0.95, 0], limits);
  assert.deepEqual(r.positions, [1, -0.02]);
  assert.deepEqual(r.changes.map((c) => c.kind), ["joint_limit"]);
  const s = safeJointCommand([0.9, 0], [0, 0], limits);
  assert.ok(Math.abs(s.positions[0] - 0.1) < 1e-12);
  assert.deepEqual(s.changes.map((c) => c.kind), ["velocity_clamp"]);
});

test("wrong length holds", () => {
  const r = safeJointCommand([0], [0.1, 0.2], limits);
  assert.equal(r.held, true);
  assert.equal(r.changes[0].kind, "length_mismatch");
});
