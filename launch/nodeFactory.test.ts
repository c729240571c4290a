/**
 * One vocabulary for both ways of running the stack: the embedded Stack (launch files) and the ROS 2 executables
 * (`rlft node`) accept the same task names, the SO-101 tasks included, and the same driver kinds, all taken from
 * sim/tasks.ts and hardware/registry.ts through launch/nodeFactory.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { launchTaskProblem, parseLaunch } from "./LaunchConfig.ts";
import { NODE_EXECUTABLES, checkParams } from "./nodeExecutables.ts";
import { AnyTaskSchema, DriverKindSchema, TaskSchema, defaultEpisodeSteps } from "./nodeFactory.ts";
import { DRIVERS, DRIVER_KINDS } from "../hardware/registry.ts";
import { ROBOT_TASKS, SIM_ROBOTS, TASK_NAMES, taskSpec } from "../sim/tasks.ts";

/** The options of a (possibly defaulted) enum schema. */
const enumOptions = (s: z.ZodTypeAny): string[] => {
  let t: z.ZodTypeAny = s;
  while (t instanceof z.ZodDefault || t instanceof z.ZodOptional) t = t.unwrap() as z.ZodTypeAny;
  assert.ok(t instanceof z.ZodEnum, "an enum");
  return [...(t as z.ZodEnum).options].map(String).sort();
};

test("the launch file and every executable with a task parameter accept the same sim task names, the SO-101 tasks among them; a gym env's own name only where a gym driver runs", () => {
  const all = [...TASK_NAMES].sort();
  for (const t of ["reach", "push_cube", "peg_insert", "multi_push", "pick_place"]) assert.ok(all.includes(t as never), t);
  // The launch file's task is checked against its driver (launchTaskProblem): every sim name on a real arm, any plain name on gym.
  const feetech = (task: string) => ({ driver: { kind: "feetech" } as never, robot: "so100", task });
  for (const t of all) assert.equal(launchTaskProblem(feetech(t)), null, t);
  assert.match(launchTaskProblem(feetech("stack_two"))!.message, /not one of/);
  assert.equal(launchTaskProblem({ driver: { kind: "gym" } as never, robot: "franka_panda", task: "stack_two" }), null);
  assert.deepEqual(enumOptions(TaskSchema), all);
  const withTask = Object.entries(NODE_EXECUTABLES).filter(([, e]) => "task" in e.params.shape);
  assert.ok(withTask.length >= 5, withTask.map(([n]) => n).join(", "));
  for (const [name, exe] of withTask) {
    // arm_driver may serve a gym env (driver from a launch file): any plain task name, the sim's among them.
    if (name === "arm_driver") {
      for (const t of [...all, "PandaPickCube-v0"]) assert.ok((exe.params.shape.task as z.ZodTypeAny).safeParse(t).success, `${name} ${t}`);
      for (const t of ["a/b", "x\ny", "x".repeat(65)]) assert.equal((exe.params.shape.task as z.ZodTypeAny).safeParse(t).success, false, `${name} ${JSON.stringify(t)}`);
      assert.ok(AnyTaskSchema.safeParse("stack_two").success);
    } else assert.deepEqual(enumOptions(exe.params.shape.task as z.ZodTypeAny), all, `${name} task`);
  }
});

test("every task of every simulated robot runs from a launch file and from the executables, with the same episode length", () => {
  for (const robot of SIM_ROBOTS) {
    for (const task of Object.keys(ROBOT_TASKS[robot])) {
      const cfg = parseLaunch(`robot: ${robot}\ntask: ${task}\ncontrol_hz: 20\n`, `${robot}-${task}.yaml`);
      assert.equal(cfg.task, task);
      for (const exe of ["expert", "operator", "episode_manager"]) checkParams(exe, { robot, task, control_hz: 20 });
      checkParams("sim", { robot, task });
      const spec = taskSpec(robot, task);
      assert.equal(defaultEpisodeSteps({ simulated: true, robot, task, controlHz: 20 }), spec.episodeSec === undefined ? spec.maxSteps : Math.round(spec.episodeSec * 20), `${robot} ${task}`);
    }
  }
  for (const task of ["reach", "push_cube", "pick_place"]) assert.equal(checkParams("expert", { robot: "so101", task }).task, task);
});

test("the launch file and the arm_driver executable accept the same driver kinds: the registry's", () => {
  const kinds = [...DRIVER_KINDS].sort();
  assert.deepEqual(enumOptions(DriverKindSchema), kinds);
  assert.deepEqual(enumOptions(NODE_EXECUTABLES.arm_driver.params.shape.driver as z.ZodTypeAny), kinds, "arm_driver driver=");
  for (const d of DRIVERS) {
    assert.equal(parseLaunch(`clock: wall\ndriver: ${JSON.stringify({ kind: d.kind, ...d.example })}\n`, `${d.kind}.yaml`).driver.kind, d.kind);
    assert.equal(checkParams("arm_driver", { driver: d.kind }).driver, d.kind);
  }
  assert.throws(() => checkParams("arm_driver", { driver: "kuka" }), /arm_driver: driver: .*feetech/);
});

test("safety_supervisor and arm_driver refuse joint limits beyond one turn, naming the parameter and the bound joint_range", () => {
  const bound = /is outside the bound joint_range \(in \[-6\.3, 6\.3\] rad.*\) that protects the joint limits/;
  for (const [exe, params, key] of [
    ["safety_supervisor", { joint_names: ["a"], joint_lower: [-1], joint_upper: [1e308] }, "joint_upper.0"],
    ["safety_supervisor", { joint_names: ["a", "b"], joint_lower: [-1, -1e308], joint_upper: [1, 1] }, "joint_lower.1"],
    ["arm_driver", { driver: "ros2_control", joint_names: ["a"], joint_upper: [1e308] }, "joint_upper.0"],
    ["arm_driver", { driver: "feetech", joint_names: ["a"], joint_lower: [-7] }, "joint_lower.0"],
  ] as const) {
    assert.throws(() => checkParams(exe, params), (e: unknown) => {
      const msg = (e as Error).message;
      assert.ok(msg.startsWith(`${exe}: ${key}: `), msg);
      assert.match(msg, bound);
      return true;
    });
  }
  // The defaults and one turn each way pass.
  checkParams("safety_supervisor", { joint_names: ["a"], joint_lower: [-6.3], joint_upper: [6.3] });
  checkParams("safety_supervisor", {});
});
