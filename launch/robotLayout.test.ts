import { test } from "node:test";
import assert from "node:assert/strict";
import { loadLaunch, parseLaunch, LaunchConfigError } from "./LaunchConfig.ts";
import { robotLayout } from "./robotLayout.ts";
import { SimArmDriver } from "../hardware/sim/SimArmDriver.ts";
import { SO101_TASKS, stateNames } from "../sim/tasks.ts";

test("launch/sim_so101.yaml and launch/so100.yaml give a policy the same observation.state and action (names, order, units, limits)", () => {
  const sim = loadLaunch("launch/sim_so101.yaml");
  const real = loadLaunch("launch/so100.yaml");
  assert.equal(sim.driver.kind, "sim");
  assert.equal(real.driver.kind, "feetech");
  const a = robotLayout(sim);
  const b = robotLayout(real);
  assert.deepEqual(a, b);
  assert.deepEqual(a.action.names, ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]);
  assert.deepEqual(a.observation.names, a.action.names.map((n) => `q.${n}`));
  assert.deepEqual(a.action.units, Array(6).fill("rad"));
  // Every SO-101 task keeps that state: the rest of its observation is sim-only.
  for (const task of ["reach", "push_cube", "pick_place"] as const) {
    assert.deepEqual(robotLayout({ ...sim, task }), a, task);
    assert.deepEqual(stateNames(SO101_TASKS[task]), a.observation.names, task);
  }
});

test("the layout is what the running sim drives: joint names, limits, and observation.state leading the published observation", async () => {
  const cfg = loadLaunch("launch/sim_so101.yaml");
  const layout = robotLayout(cfg);
  for (const task of ["reach", "push_cube", "pick_place"] as const) {
    const d = await SimArmDriver.create({ robot: "so101", task, controlHz: cfg.control_hz });
    try {
      assert.deepEqual([...d.jointNames], layout.action.names);
      assert.deepEqual([...d.jointLower], layout.action.lower);
      assert.deepEqual([...d.jointUpper], layout.action.upper);
      assert.deepEqual([...d.sim.jointUnits], layout.action.units);
      const obs = d.sim.observation();
      assert.deepEqual(obs.names.slice(0, 6), layout.observation.names);
      // Privileged names are exactly what follows the state.
      assert.deepEqual(obs.names.slice(6), [...d.sim.task.privileged]);
    } finally {
      d.sim.close();
    }
  }
});

test("a sim launch file whose robot or task the simulator lacks is one error naming the line and what exists", () => {
  assert.throws(
    () => parseLaunch("robot: so100\ntask: push_cube\ndriver: {kind: sim}\n", "bad.yaml"),
    (e: unknown) => e instanceof LaunchConfigError && /bad\.yaml:1: robot: robot "so100" is not simulated: the simulator has rlft_arm5, so101/.test(e.message),
  );
  assert.throws(
    () => parseLaunch("robot: so101\ntask: peg_insert\n", "bad.yaml"),
    (e: unknown) => e instanceof LaunchConfigError && /bad\.yaml:2: task: robot so101 has no task "peg_insert"; its tasks are reach, push_cube, pick_place/.test(e.message),
  );
  // A real arm's task is metadata: any robot name goes.
  assert.equal(parseLaunch("robot: my_arm\ntask: pick_place\ndriver: {kind: ros2_control, joints: [a], lower: [-1], upper: [1]}\nclock: wall\n", "ok.yaml").robot, "my_arm");
});

test("the ROS 2 node executables take robot: so101 (sim, expert, operator, episode_manager, policy)", async () => {
  const { NODE_EXECUTABLES, policyObservationNames } = await import("./nodeExecutables.ts");
  for (const exe of ["sim", "expert", "operator", "episode_manager", "policy"]) {
    const p = NODE_EXECUTABLES[exe].params.parse({ robot: "so101", task: "pick_place", ...(exe === "policy" ? { package: "x" } : {}) }) as { robot: string };
    assert.equal(p.robot, "so101", exe);
  }
  assert.throws(() => NODE_EXECUTABLES.sim.params.parse({ robot: "so100" }), /robot/);
  const names = policyObservationNames({ observation: "task", task: "pick_place", robot: "so101", joint_names: [...SO101_TASKS.pick_place.actionNames] });
  assert.deepEqual(names, [...SO101_TASKS.pick_place.observationNames]);
});
