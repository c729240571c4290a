import { test } from "node:test";
import assert from "node:assert/strict";
import { ArmSim } from "../ArmSim.ts";
import { SO101_SPEC } from "./so101Spec.ts";
import { so101PhysicsDt } from "./So101World.ts";
import { So101Kinematics, topDownRotation } from "./so101Kinematics.ts";
import { FK_PRESETS } from "../../hardware/kinematics.ts";

const Q = ["q.shoulder_pan", "q.shoulder_lift", "q.elbow_flex", "q.wrist_flex", "q.wrist_roll", "q.gripper"];

test("the SO-101 scenes load with the contract's observation per task; the start pose is within the limits", async () => {
  const expected = {
    reach: [...Q, "ee.x", "ee.y", "ee.z", "target.x", "target.y", "target.z"],
    push_cube: [...Q, "ee.x", "ee.y", "ee.z", "cube.x", "cube.y", "target.x", "target.y"],
    pick_place: [...Q, "ee.x", "ee.y", "ee.z", "cube.x", "cube.y", "cube.z", "cube.yaw", "target.x", "target.y"],
    multi_push: [...Q, "ee.x", "ee.y", "ee.z", "cube.x", "cube.y", "target.x", "target.y", "red.x", "red.y", "blue.x", "blue.y", "left.x", "left.y", "right.x", "right.y"],
  };
  for (const [task, names] of Object.entries(expected)) {
    const sim = await ArmSim.create({ robot: "so101", task: task as "reach" });
    try {
      assert.equal(sim.robot, "so101");
      assert.deepEqual([...sim.jointNames], [...SO101_SPEC.jointNames]);
      assert.deepEqual(sim.task.privileged, names.slice(6));
      for (let seed = 0; seed < 5; seed++) {
        sim.reset(seed);
        const o = sim.observation();
        assert.deepEqual(o.names, names);
        assert.ok(o.values.every(Number.isFinite), `${task} seed ${seed}: ${o.values}`);
        o.values.slice(0, 6).forEach((v, i) => assert.ok(v >= SO101_SPEC.jointLower[i] - 1e-9 && v <= SO101_SPEC.jointUpper[i] + 1e-9, `${task} seed ${seed}: ${Q[i]} = ${v}`));
        const s = sim.status();
        assert.equal(s.success, false);
        assert.equal(s.failed, false);
        // The safety workspace's `fk: so101` (a real arm's) puts the gripper tip where the sim has it.
        const ee = sim.eePosition();
        FK_PRESETS.so101(o.values.slice(0, 6)).forEach((v, i) => assert.ok(Math.abs(v - ee[i]) < 1e-9));
      }
    } finally {
      sim.close();
    }
  }
});

test("a robot without the task, or no such robot, is one error that names what exists", async () => {
  await assert.rejects(ArmSim.create({ robot: "so101", task: "peg_insert" }), /robot so101 has no task "peg_insert"; its tasks are reach, push_cube, pick_place, multi_push/);
  await assert.rejects(ArmSim.create({ robot: "ur5e" as "so101", task: "reach" }), /robot "ur5e" is not simulated: the simulator has rlft_arm5, so101/);
  await assert.rejects(ArmSim.create({ robot: "rlft_arm5", task: "pick_place" }), /robot rlft_arm5 has no task "pick_place"/);
});

test("joints follow position commands like servos: they arrive, at a finite speed, and hold against gravity", async () => {
  const sim = await ArmSim.create({ robot: "so101", task: "reach" });
  try {
    sim.reset(0);
    // Gripper up and clear of the table, then a 0.4 rad step on every joint.
    const start = [0, -0.8, 0.6, 0.6, 0, 0.2];
    sim.setState({ q: start });
    const goal = start.map((v, i) => v + (i === 1 ? -0.4 : 0.4));
    sim.setCommand(goal);
    sim.stepControl();
    const after1 = sim.jointState();
    // One 0.1 s tick is not enough for 0.4 rad: the STS3215 turns at most ~4.7 rad/s unloaded.
    after1.position.forEach((v, i) => assert.ok(Math.abs(v - goal[i]) > 0.005 || i === 5, `${Q[i]} jumped to its goal in one tick`));
    after1.velocity.forEach((v, i) => assert.ok(Math.abs(v) < 6, `${Q[i]} moves at ${v} rad/s`));
    for (let t = 0; t < 9; t++) sim.stepControl();
    const s = sim.jointState();
    s.position.forEach((v, i) => assert.ok(Math.abs(v - goal[i]) < 0.01, `${Q[i]}: ${v} after 1 s, goal ${goal[i]}`));
    s.velocity.forEach((v) => assert.ok(Math.abs(v) < 0.05));
    // Commands are clamped to the Feetech limits of launch/so100.yaml.
    const applied = sim.setCommand([9, -9, 9, -9, 9, 9]);
    assert.deepEqual(applied, [1.9, -1.745, 1.69, -1.658, 2.743, 1.7]);
  } finally {
    sim.close();
  }
});

test("reset is deterministic from the seed, with or without physics randomisation", async () => {
  const a = await ArmSim.create({ robot: "so101", task: "pick_place" });
  const b = await ArmSim.create({ robot: "so101", task: "pick_place", randomizePhysics: true });
  const roll = (sim: ArmSim, seed: number): number[][] => {
    sim.reset(seed);
    const out = [sim.observation().values];
    for (let t = 0; t < 4; t++) {
      sim.setCommand(sim.jointState().position.map((v, i) => v + 0.05 * (i + 1)));
      sim.stepControl();
      out.push(sim.observation().values);
    }
    return out;
  };
  try {
    assert.deepEqual(roll(a, 7), roll(a, 7));
    assert.deepEqual(roll(b, 7), roll(b, 7));
    assert.notDeepEqual(roll(a, 7)[0], roll(a, 8)[0]);
    // Randomisation changes friction and mass, never the start state.
    a.reset(3);
    b.reset(3);
    assert.deepEqual(a.observation().values, b.observation().values);
  } finally {
    a.close();
    b.close();
  }
});

test("success and failure detectors: cube on the disc (push), cube put down on the disc and let go (pick), cube off the table", async () => {
  const push = await ArmSim.create({ robot: "so101", task: "push_cube" });
  const pick = await ArmSim.create({ robot: "so101", task: "pick_place" });
  try {
    push.reset(2);
    const t = push.targetPosition();
    push.setState({ q: push.jointState().position, object: [t[0] + 0.02, t[1]] });
    assert.equal(push.status().success, true);
    push.setState({ q: push.jointState().position, object: [t[0] + 0.04, t[1]] });
    assert.equal(push.status().success, false);
    push.setState({ q: push.jointState().position, object: [0.6, 0] });
    assert.deepEqual(push.status(), { success: false, failed: true, progress: 0 });

    pick.reset(2);
    const p = pick.targetPosition();
    const q0 = pick.jointState().position;
    pick.setState({ q: q0, object: [p[0], p[1]] });
    assert.equal(pick.status().success, true, "resting on the disc, jaws away");
    // Held above the disc: not placed.
    const m = pick.mujoco;
    const adr = (pick.model.jnt_qposadr as Int32Array)[m.mj_name2id(pick.model, m.mjtObj.mjOBJ_JOINT.value, "cube")];
    (pick.data.qpos as Float64Array)[adr + 2] = SO101_SPEC.cubeHalf + 0.03;
    pick.mujoco.mj_forward(pick.model, pick.data);
    assert.equal(pick.status().success, false, "lifted");
    // Resting on the disc with the jaws closed on it: not let go; opened: placed.
    pick.reset(2);
    const cube = pick.cubePosition();
    const yaw = pick.observation().values[12];
    const jaw = [Math.cos(yaw), Math.sin(yaw)];
    // The cube sits against the fixed jaw, 2 mm along −z of the gripperframe site (pickPlacePlan.ts).
    const ik = So101Kinematics.shared().ik([cube[0] + 0.002 * jaw[0], cube[1] + 0.002 * jaw[1], 0.013], q0, { R: topDownRotation(yaw) });
    assert.ok(ik.reachable);
    pick.setState({ q: [...ik.q, 0.8], target: [cube[0], cube[1]] });
    pick.setCommand([...ik.q, -0.17]);
    for (let k = 0; k < 8; k++) pick.stepControl();
    assert.ok(pick.jointState().position[5] > 0.1, "the jaw stopped on the cube");
    assert.equal(pick.status().success, false, "gripped");
    pick.setCommand([...ik.q, 0.8]);
    for (let k = 0; k < 8; k++) pick.stepControl();
    assert.equal(pick.status().success, true, "released on the disc");
  } finally {
    push.close();
    pick.close();
  }
});

test("control rates: 10 Hz runs Menagerie's 5 ms step, 30 Hz a step that divides its period; episode limits keep their seconds", async () => {
  assert.equal(so101PhysicsDt(10), 0.005);
  assert.ok(Math.abs(so101PhysicsDt(30) * 7 - 1 / 30) < 1e-12);
  const a = await ArmSim.create({ robot: "so101", task: "push_cube", controlHz: 30 });
  try {
    assert.equal(a.task.maxSteps, 450);
    a.reset(0);
    a.stepControl();
    assert.ok(Math.abs(a.time - 1 / 30) < 1e-9);
  } finally {
    a.close();
  }
});
