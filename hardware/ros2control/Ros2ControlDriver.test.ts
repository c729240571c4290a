/**
 * The ros2_control bridge on the embedded runtime (same node code as under rclnodejs) against a test double
 * of a controller_manager: a joint_state_broadcaster publishing every joint in its own order, plus a
 * forward_command_controller or a joint_trajectory_controller that moves the joints to what it receives.
 * The messages also go through CDR (what the ROS 2 wire carries) to check their shape.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { EmbeddedRuntime } from "../../runtime/embedded/EmbeddedRuntime.ts";
import { Ros2ControlDriver } from "./Ros2ControlDriver.ts";
import { FAKE_ARM as ARM, fakeRos2Control } from "./fakeRos2Control.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await sleep(5);
  }
}

for (const mode of ["forward", "trajectory"] as const) {
  test(`ros2_control bridge (${mode}): joint states by name, INACTIVE refuses, commands reach the controller`, async () => {
    const rt = await EmbeddedRuntime.create({ clock: "wall", logLevel: "error" });
    const fake = fakeRos2Control(rt.createNode("controller_manager"), mode);
    const d = new Ros2ControlDriver({ node: rt.createNode("arm_bridge"), joints: ARM, lower: [-1, -1, -1], upper: [1, 1, 1], command: mode, timeFromStart: 0.25 });
    try {
      await d.configure();
      assert.deepEqual(d.read().reading!.position, [0.1, 0.2, 0.3]);
      assert.match((d.write([0, 0, 0]) as { error: string }).error, /inactive: commands are not taken/);
      assert.equal(fake.received.length, 0);
      await d.activate();
      assert.ok(d.write([0.5, -0.5, 2]).ok);
      await until(() => fake.q.joint3 === 1 && d.read().reading!.position[2] === 1);
      assert.deepEqual(d.read().reading!.position, [0.5, -0.5, 1]);
      const last = fake.received.at(-1) as Record<string, unknown>;
      if (mode === "forward") {
        assert.deepEqual(last.data, [0.5, -0.5, 1]);
      } else {
        assert.deepEqual(last.joint_names, ARM);
        const pt = (last.points as { positions: number[]; time_from_start: { sec: number; nanosec: number } }[])[0];
        assert.deepEqual(pt.positions, [0.5, -0.5, 1]);
        assert.deepEqual(pt.time_from_start, { sec: 0, nanosec: 250_000_000 });
      }
      assert.equal(d.write([NaN, 0, 0]).ok, false);
      // Deactivate: the last command is the measured pose (a forward controller holds there).
      const before = fake.received.length;
      await d.deactivate();
      assert.equal(fake.received.length, before + 1);
      // The robot side goes quiet: read() reports it.
      fake.stop();
      await sleep(600);
      assert.match((d.read().status as { error: string }).error, /no joint state on \/joint_states for .* is the ros2_control node alive/);
    } finally {
      await d.close();
      fake.stop();
      await rt.shutdown();
    }
  });
}

test("ros2_control bridge: no broadcaster, or joints missing from it, is named at configure", async () => {
  const rt = await EmbeddedRuntime.create({ clock: "wall", logLevel: "error" });
  try {
    const none = new Ros2ControlDriver({ node: rt.createNode("a"), joints: ARM, lower: [-1, -1, -1], upper: [1, 1, 1], command: "forward", waitSec: 0.1 });
    await assert.rejects(none.configure(), /no sensor_msgs\/JointState on \/joint_states in 0\.1 s — is the robot's ros2_control launch running with joint_state_broadcaster active/);
    const fake = fakeRos2Control(rt.createNode("cm"), "forward");
    const wrong = new Ros2ControlDriver({ node: rt.createNode("b"), joints: ["joint1", "elbow"], lower: [-1, -1], upper: [1, 1], command: "forward", waitSec: 0.2 });
    await assert.rejects(wrong.configure(), /lack elbow — check driver\.joints/);
    fake.stop();
  } finally {
    await rt.shutdown();
  }
});
