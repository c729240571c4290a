/** Velocity / acceleration limits and the workspace box: properties over random command streams, plus FK checks. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { limitRates, limitWorkspace, type WorkspaceBox } from "./motionLimits.ts";
import { dhForwardKinematics, FK_PRESETS, UR5E_DH } from "./kinematics.ts";
import { createRng } from "../sim/rng.ts";

test("UR5e DH forward kinematics: the zero pose is the published flange position", () => {
  const p = dhForwardKinematics(UR5E_DH)([0, 0, 0, 0, 0, 0]);
  const want = [-0.8172, -0.2329, 0.0628];
  p.forEach((x, k) => assert.ok(Math.abs(x - want[k]) < 1e-4, `${p} vs ${want}`));
  // Shoulder pan by 90° turns the arm about z.
  const q = dhForwardKinematics(UR5E_DH)([Math.PI / 2, 0, 0, 0, 0, 0]);
  assert.ok(Math.abs(q[0] - 0.2329) < 1e-4 && Math.abs(q[1] + 0.8172) < 1e-4);
});

test("rate limits: every output respects max velocity and acceleration, whatever the input", () => {
  const r0 = createRng(7);
  const rng = () => r0.next();
  const names = ["a", "b", "c"];
  const limits = { names, maxVelocity: [1, 0.5, 2], maxAcceleration: [4, 2, 10] };
  const dt = 0.05;
  let prev = { position: [0, 0, 0], velocity: [0, 0, 0] };
  let clamped = 0;
  for (let t = 0; t < 500; t++) {
    const req = names.map(() => (rng() - 0.5) * 4);
    const r = limitRates(req, prev, dt, limits);
    r.velocity.forEach((v, i) => {
      assert.ok(Math.abs(v) <= limits.maxVelocity[i] + 1e-9, `velocity ${v} of ${names[i]}`);
      assert.ok(Math.abs(v - prev.velocity[i]) <= limits.maxAcceleration[i] * dt + 1e-9, `acceleration of ${names[i]}`);
      assert.ok(Math.abs(r.positions[i] - prev.position[i] - v * dt) < 1e-12);
    });
    if (r.changes.length) clamped++;
    prev = { position: r.positions, velocity: r.velocity };
  }
  assert.ok(clamped > 0);
  // A slow command passes unchanged.
  const slow = limitRates([0.01, 0, 0], { position: [0, 0, 0], velocity: [0.2, 0, 0] }, dt, limits);
  assert.deepEqual(slow.changes, []);
  assert.ok(Math.abs(slow.positions[0] - 0.01) < 1e-12);
});

test("workspace box: commands are cut at the box edge; outside the box only moves back in pass", () => {
  const fk = FK_PRESETS.rlft_arm5;
  const names = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "gripper"];
  const box: WorkspaceBox = { min: [0.05, -0.3, 0.03], max: [0.45, 0.3, 0.5] };
  const inside = (p: number[]) => p.every((x, k) => x >= box.min[k] - 1e-9 && x <= box.max[k] + 1e-9);
  const r0 = createRng(3);
  const rng = () => r0.next();
  const home = [0, 0.3, 0.9, 1.5, 0.02];
  assert.ok(inside(fk(home)), `home ${fk(home)} must be inside`);
  let cut = 0;
  for (let t = 0; t < 300; t++) {
    const req = home.map((q, i) => (i === 4 ? q : q + (rng() - 0.5) * 3));
    const r = limitWorkspace(req, home, fk, box, names);
    assert.ok(inside(fk(r.positions)), `output ${fk(r.positions)} left the box`);
    if (r.changes.length) {
      cut++;
      assert.equal(r.changes[0].kind, "workspace");
      assert.match(r.changes[0].detail, /leaves the workspace box/);
    } else assert.deepEqual(r.positions, req);
  }
  assert.ok(cut > 10, `only ${cut} of 300 random targets were cut`);
  // Starting outside (e.g. after a box change): moving further out holds, moving back in passes.
  const out = [0, 1.4, 1.2, 0.5, 0.02];
  assert.ok(!inside(fk(out)));
  const further = limitWorkspace([0, 1.5, 1.3, 0.5, 0.02], out, fk, box, names);
  assert.deepEqual(further.positions, out);
  assert.match(further.changes[0].detail, /outside the workspace box; only moves back/);
  assert.deepEqual(limitWorkspace(home, out, fk, box, names).changes, []);
});
