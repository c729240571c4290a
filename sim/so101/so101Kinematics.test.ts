import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { So101Kinematics, topDownRotation } from "./so101Kinematics.ts";
import { parseMjcfTree } from "./mjcfChain.ts";
import { SO101_ASSET_DIR, SO101_SPEC, toModelAngles } from "./so101Spec.ts";
import { so101SceneXml } from "./so101Scene.ts";
import { mujocoPython, mujocoPythonUnavailable } from "./mujocoPython.ts";
import { ArmSim } from "../ArmSim.ts";
import { createRng } from "../rng.ts";

const missing = mujocoPythonUnavailable();
const K = So101Kinematics.shared();

/** Joint vectors across the range: zero, the limits' corners, and seeded random ones. */
function jointVectors(n: number): number[][] {
  const rng = createRng(11);
  const lo = SO101_SPEC.jointLower;
  const hi = SO101_SPEC.jointUpper;
  const out = [lo.map(() => 0), [...lo], [...hi], lo.map((l, i) => (i % 2 ? l : hi[i]))];
  while (out.length < n) out.push(lo.map((l, i) => rng.uniform(l, hi[i])));
  return out;
}

test("SO-101 forward kinematics in rlft's joint convention equals MuJoCo's own (Python bindings, same so101.xml) to 1e-6", { skip: missing ?? false }, () => {
  const qs = jointVectors(12);
  const ref = mujocoPython(join(SO101_ASSET_DIR, "so101.xml"), SO101_SPEC.eeSite, qs.map((q) => ({ qpos: toModelAngles(q) })));
  qs.forEach((q, k) => {
    const mine = K.fk(q);
    const theirs = ref.results[k];
    mine.pos.forEach((v, i) => assert.ok(Math.abs(v - theirs.site_pos[i]) < 1e-6, `q=${q}: site ${i} ${v} vs MuJoCo ${theirs.site_pos[i]}`));
    mine.R.flat().forEach((v, i) => assert.ok(Math.abs(v - theirs.site_mat[i]) < 1e-6, `q=${q}: R[${i}] ${v} vs MuJoCo ${theirs.site_mat[i]}`));
  });
});

test("the simulated SO-101 (mujoco-js) moves like MuJoCo's Python bindings on the same scene file: pose, then 0.5 s of servo motion", { skip: missing ?? false }, async () => {
  const sim = await ArmSim.create({ robot: "so101", task: "pick_place" });
  const dir = mkdtempSync(join(tmpdir(), "rlft-so101-"));
  try {
    // The scene beside so101.xml and its meshes, as ArmSim compiles it.
    symlinkSync(join(SO101_ASSET_DIR, "so101.xml"), join(dir, "so101.xml"));
    symlinkSync(join(SO101_ASSET_DIR, "assets"), join(dir, "assets"));
    writeFileSync(join(dir, "scene.xml"), so101SceneXml({ task: "pick_place", physicsDt: sim.model.opt.timestep }));
    sim.reset(4);
    const qpos0 = Array.from(sim.data.qpos as Float64Array);
    const mocap = Array.from(sim.data.mocap_pos as Float64Array);
    const command = sim.jointState().position.map((v, i) => v + [0.3, -0.2, 0.25, -0.2, 0.5, 0.4][i]);
    const applied = sim.setCommand(command);
    const steps = 5;
    for (let t = 0; t < steps; t++) sim.stepControl();
    const substeps = Math.round(0.1 / sim.model.opt.timestep);
    const ref = mujocoPython(join(dir, "scene.xml"), SO101_SPEC.eeSite, [
      { qpos: qpos0, mocap_pos: mocap },
      { qpos: qpos0, mocap_pos: mocap, ctrl: toModelAngles(applied), steps: steps * substeps },
    ]);
    sim.reset(4);
    const atRest = sim.eePosition();
    atRest.forEach((v, i) => assert.ok(Math.abs(v - ref.results[0].site_pos[i]) < 1e-9, `site at rest ${i}: ${v} vs ${ref.results[0].site_pos[i]}`));
    sim.setCommand(command);
    for (let t = 0; t < steps; t++) sim.stepControl();
    const q = Array.from(sim.data.qpos as Float64Array);
    // mujoco-js is MuJoCo 3.3.8 (dev), the wheel 3.3.7: the same physics to well under a millimetre / milliradian.
    q.forEach((v, i) => assert.ok(Math.abs(v - ref.results[1].qpos[i]) < 1e-4, `qpos[${i}] after ${steps} ticks: ${v} vs MuJoCo ${ref.results[1].qpos[i]} (${ref.version})`));
    sim.eePosition().forEach((v, i) => assert.ok(Math.abs(v - ref.results[1].site_pos[i]) < 1e-4));
  } finally {
    sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the Jacobian matches finite differences of the forward kinematics", () => {
  for (const q of jointVectors(6)) {
    const J = K.jacobian(q);
    const h = 1e-6;
    for (let j = 0; j < 5; j++) {
      const qp = q.slice();
      qp[j] += h;
      const d = K.fk(qp).pos.map((v, i) => (v - K.fk(q).pos[i]) / h);
      d.forEach((v, i) => assert.ok(Math.abs(v - J[i][j]) < 1e-5, `dp${i}/dq${j}: ${J[i][j]} vs ${v}`));
    }
  }
});

test("IK recovers reachable poses (position + top-down orientation) from another start, within the command limits", () => {
  const rng = createRng(5);
  let solved = 0;
  for (let k = 0; k < 20; k++) {
    const x = rng.uniform(0.14, 0.26);
    const y = rng.uniform(-0.1, 0.1);
    const R = topDownRotation(Math.atan2(y, x) + rng.uniform(-0.5, 0.5));
    const r = K.ik([x, y, 0.02], [0, -0.6, 0.6, 1.55, 0], { R });
    if (!r.reachable) continue;
    solved++;
    const f = K.fk(r.q);
    assert.ok(Math.hypot(f.pos[0] - x, f.pos[1] - y, f.pos[2] - 0.02) < 0.002);
    r.q.forEach((v, i) => assert.ok(v >= SO101_SPEC.jointLower[i] && v <= SO101_SPEC.jointUpper[i]));
  }
  assert.ok(solved >= 18, `only ${solved}/20 top-down poses in the workspace solved`);
  // Out of reach: the best effort, flagged.
  assert.equal(K.ik([0.6, 0, 0.1], [0, 0, 0, 0, 0]).reachable, false);
});

test("the MJCF reader refuses what it would misread, naming the element", () => {
  assert.throws(() => parseMjcfTree('<mujoco><compiler angle="degree"/><worldbody/></mujoco>'), /only angle="radian"/);
  assert.throws(() => parseMjcfTree('<mujoco><compiler angle="radian"/><worldbody><body name="b" euler="0 0 1"/></worldbody></mujoco>'), /body "b": orientation by euler/);
  assert.throws(() => parseMjcfTree('<mujoco><compiler angle="radian"/><worldbody><body name="b"><joint name="j" type="slide"/></body></worldbody></mujoco>'), /joint "j": type slide/);
  assert.throws(() => So101Kinematics.fromXml('<mujoco><compiler angle="radian"/><worldbody><body name="b"/></worldbody></mujoco>'), /no site "gripperframe"/);
});
