import { test } from "node:test";
import assert from "node:assert/strict";
import { ArmSim } from "./ArmSim.ts";
import { forwardKinematics } from "./kinematics.ts";
import { ARM_SPEC } from "./armSpec.ts";

const PUSH_NAMES = ["q.shoulder_pan", "q.shoulder_lift", "q.elbow_flex", "q.wrist_flex", "q.gripper", "ee.x", "ee.y", "ee.z", "cube.x", "cube.y", "target.x", "target.y"];
const REACH_NAMES = [...PUSH_NAMES.slice(0, 8), "target.x", "target.y", "target.z"];

/** Runs a fixed command sequence and returns every observation, for determinism checks. */
function rollout(sim: ArmSim, seed: number): number[][] {
  sim.reset(seed);
  const out = [sim.observation().values];
  for (let t = 0; t < 5; t++) {
    sim.setCommand([0.2 * t, 0.4, 1.4, 1.2, 0.01 * t]);
    sim.stepControl();
    out.push(sim.observation().values);
  }
  return out;
}

test("observation names are exactly the contract's, per task", async () => {
  const push = await ArmSim.create({ task: "push_cube" });
  const reach = await ArmSim.create({ task: "reach" });
  assert.deepEqual(push.observation().names, PUSH_NAMES);
  assert.deepEqual(reach.observation().names, REACH_NAMES);
  assert.deepEqual(push.jointNames, ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "gripper"]);
  assert.equal(push.observation().values.length, PUSH_NAMES.length);
  assert.equal(reach.observation().values.length, REACH_NAMES.length);
  push.close();
  reach.close();
});

test("same seed gives the same start state and the same trajectory; other seeds differ", async () => {
  const a = await ArmSim.create({ task: "push_cube" });
  const b = await ArmSim.create({ task: "push_cube" });
  assert.deepEqual(rollout(a, 7), rollout(b, 7));
  assert.deepEqual(rollout(a, 7), rollout(a, 7), "reset must fully restore the state");
  assert.notDeepEqual(rollout(a, 7)[0], rollout(a, 8)[0]);
  a.close();
  b.close();
});

test("physics randomisation is deterministic per seed and leaves the start pose unchanged", async () => {
  const plain = await ArmSim.create({ task: "push_cube" });
  const rand = await ArmSim.create({ task: "push_cube", randomizePhysics: true });
  const rand2 = await ArmSim.create({ task: "push_cube", randomizePhysics: true });
  assert.deepEqual(rollout(rand, 3), rollout(rand2, 3));
  plain.reset(3);
  rand.reset(3);
  assert.deepEqual(plain.observation().values, rand.observation().values);
  plain.close();
  rand.close();
  rand2.close();
});

test("time advances one control period per stepControl and restarts at reset", async () => {
  const sim = await ArmSim.create({ task: "reach", controlHz: 20 });
  sim.reset(1);
  assert.equal(sim.time, 0);
  for (let i = 0; i < 4; i++) sim.stepControl();
  assert.ok(Math.abs(sim.time - 0.2) < 1e-9, `time ${sim.time}`);
  sim.reset(1);
  assert.equal(sim.time, 0);
  sim.close();
});

test("commands are clamped to the joint limits and the joints stay inside them", async () => {
  const sim = await ArmSim.create({ task: "reach" });
  sim.reset(0);
  const sent = sim.setCommand([10, -10, 10, -10, 1]);
  assert.deepEqual(sent, [sim.jointUpper[0], sim.jointLower[1], sim.jointUpper[2], sim.jointLower[3], sim.jointUpper[4]]);
  for (let i = 0; i < 20; i++) sim.stepControl();
  const q = sim.jointState().position;
  q.forEach((v, i) => {
    assert.ok(v >= sim.jointLower[i] - 0.02 && v <= sim.jointUpper[i] + 0.02, `${sim.jointNames[i]} = ${v} outside limits`);
  });
  sim.close();
});

test("a NaN or wrong-length command is rejected with a message naming the joint", async () => {
  const sim = await ArmSim.create({ task: "reach" });
  assert.throws(() => sim.setCommand([0, NaN, 0, 0, 0]), /shoulder_lift.*NaN.*finite/);
  assert.throws(() => sim.setCommand([0, 0, 0]), /expected 5 positions.*got 3/);
  sim.close();
});

test("the ee site follows the kinematics and the gripper opens to the commanded width", async () => {
  const sim = await ArmSim.create({ task: "reach" });
  sim.reset(2);
  const target = [0.3, 0.5, 1.6, 1.0, 0.05];
  sim.setCommand(target);
  for (let i = 0; i < 10; i++) sim.stepControl();
  const s = sim.jointState();
  const fk = forwardKinematics(s.position);
  sim.eePosition().forEach((v, k) => assert.ok(Math.abs(v - fk[k]) < 1e-6, `ee axis ${k}: ${v} vs FK ${fk[k]}`));
  s.position.forEach((v, i) => assert.ok(Math.abs(v - target[i]) < 0.01, `${sim.jointNames[i]} = ${v}, commanded ${target[i]}`));
  sim.close();
});

test("success and failure detectors on hand-placed cube positions", async () => {
  const sim = await ArmSim.create({ task: "push_cube" });
  sim.reset(4);
  assert.equal(sim.status().success, false);
  assert.equal(sim.status().progress, 0);
  const mj = sim.mujoco;
  const cube = mj.mj_name2id(sim.model, mj.mjtObj.mjOBJ_JOINT.value, "cube");
  const adr = (sim.model.jnt_qposadr as Int32Array)[cube];
  const qpos = sim.data.qpos as Float64Array;
  const [tx, ty] = sim.observation().values.slice(10);
  const place = (x: number, y: number, z: number): void => {
    qpos.set([x, y, z], adr);
    mj.mj_forward(sim.model, sim.data);
  };
  place(tx + 0.01, ty - 0.01, 0.0225);
  assert.deepEqual(sim.status(), { success: true, failed: false, progress: 1 });
  place(tx + 0.05, ty, 0.0225);
  assert.equal(sim.status().success, false, "5 cm from the centre is outside the 3.5 cm disc");
  place(0.3, 0.6, -0.3);
  assert.equal(sim.status().failed, true, "a cube below the table top has fallen off");
  assert.equal(sim.status().success, false);
  sim.close();
});

test("reach succeeds within 2 cm of the target point", async () => {
  const sim = await ArmSim.create({ task: "reach" });
  sim.reset(5);
  assert.equal(sim.status().success, false);
  const t = sim.observation().values.slice(8);
  const mocap = sim.data.mocap_pos as Float64Array;
  const ee = sim.eePosition();
  mocap.set([ee[0] + 0.015, ee[1], ee[2]], 0);
  assert.equal(sim.status().success, true);
  mocap.set([ee[0] + 0.025, ee[1], ee[2]], 0);
  assert.equal(sim.status().success, false);
  assert.equal(t.length, 3);
  sim.close();
});

test("using a closed sim fails loudly", async () => {
  const sim = await ArmSim.create({ task: "reach" });
  sim.close();
  assert.throws(() => sim.stepControl(), /after close/);
});

test("peg_insert: contract names, the peg starts squeezed between the fingers and stays there", async () => {
  const sim = await ArmSim.create({ task: "peg_insert" });
  const names = sim.observation().names;
  assert.deepEqual(names, [...PUSH_NAMES.slice(0, 8), "peg.x", "peg.y", "peg.z", "hole.x", "hole.y"]);
  for (const seed of [0, 5, 9]) {
    sim.reset(seed);
    const v0 = sim.observation().values;
    // The peg centre is at the fingertips (the ee site) and the fixture faces the base.
    for (let k = 0; k < 3; k++) assert.ok(Math.abs(v0[8 + k] - v0[5 + k]) < 1e-6, `seed ${seed}: peg axis ${k} off the ee`);
    const hold = [...v0.slice(0, 4), 0];
    for (let t = 0; t < 20; t++) {
      sim.setCommand(hold);
      sim.stepControl();
    }
    const v = sim.observation().values;
    assert.ok(Math.hypot(v[8] - v[5], v[9] - v[6], v[10] - v[7]) < 0.005, `seed ${seed}: the peg slid ${Math.hypot(v[8] - v[5], v[9] - v[6], v[10] - v[7])} m in 2 s`);
    assert.ok(Math.abs(v[4] - 2 * ARM_SPEC.peg.half) < 0.004, `seed ${seed}: gripper at ${v[4]}, the peg is ${2 * ARM_SPEC.peg.half} wide`);
    assert.equal(sim.status().failed, false);
    assert.equal(sim.status().success, false);
  }
  sim.close();
});

test("peg_insert: the fixture is turned to face the base, success needs depth inside the hole, a dropped peg fails", async () => {
  const sim = await ArmSim.create({ task: "peg_insert" });
  sim.reset(3);
  const mj = sim.mujoco;
  const [hx, hy] = sim.observation().values.slice(11);
  const q = (sim.data.mocap_quat as Float64Array).slice(0, 4);
  assert.ok(Math.abs(2 * Math.atan2(q[3], q[0]) - Math.atan2(hy, hx)) < 1e-9, "fixture yaw = atan2(y, x) of the hole");
  const adr = (sim.model.jnt_qposadr as Int32Array)[mj.mj_name2id(sim.model, mj.mjtObj.mjOBJ_JOINT.value, "peg")];
  const qpos = sim.data.qpos as Float64Array;
  const P = ARM_SPEC.peg;
  // The peg upright (long axis down, like in the hand), its bottom face at height z.
  const place = (x: number, y: number, bottom: number): void => {
    qpos.set([x, y, bottom + P.halfLength, 0, 1, 0, 0], adr);
    mj.mj_forward(sim.model, sim.data);
  };
  place(hx, hy, P.height - P.insertDepth - 0.002);
  assert.equal(sim.status().failed, false);
  assert.equal(sim.status().success, true);
  place(hx, hy, P.height - P.insertDepth + 0.005);
  assert.equal(sim.status().success, false, "only 1.5 cm deep");
  place(hx + 0.1, hy, 0);
  assert.equal(sim.status().success, false, "beside the fixture, on the table");
  assert.equal(sim.status().failed, true, "dropped: far from the fingers");
  sim.close();
});
