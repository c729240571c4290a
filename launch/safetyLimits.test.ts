/** The safety block of a launch file reaches the supervisor: rate limits and the workspace box, each change published. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { FK_PRESETS } from "../hardware/kinematics.ts";

test("the safety supervisor applies rate limits and the workspace box from a launch file, and publishes each change", async () => {
  const { EmbeddedRuntime } = await import("../runtime/embedded/EmbeddedRuntime.ts");
  const { SafetySupervisorNode } = await import("../nodes/SafetySupervisorNode.ts");
  const { TOPICS } = await import("../contracts/topics.ts");
  const { jointState, toTime } = await import("../contracts/msgs.ts");
  const { parseLaunch } = await import("./LaunchConfig.ts");
  const { motionLimits } = await import("./safetyLimits.ts");
  const cfg = parseLaunch("safety:\n  max_step: 1\n  max_velocity: 1\n  max_acceleration: [20, 20, 20, 20, 20]\n  workspace: {fk: rlft_arm5, min: [0.05, -0.3, 0.03], max: [0.45, 0.3, 0.5]}\n", "x.yaml");
  const names = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "gripper"];
  const rt = await EmbeddedRuntime.create({ clock: "sim", logLevel: "error" });
  const sup = new SafetySupervisorNode(rt.createNode("safety_supervisor"), {
    limits: { names, lower: [-2, -1.6, -2.8, -2.2, 0], upper: [2, 1.6, 2.8, 2.2, 0.08], maxStep: names.map(() => 1) },
    watchdogSec: 0.5,
    ...motionLimits(cfg.safety, names, 10),
  });
  await sup.configure();
  await sup.activate();
  const n = rt.createNode("probe");
  const cmds: number[][] = [];
  const kinds: string[] = [];
  n.createSubscription<{ position: number[] }>(TOPICS.jointCommand.type, TOPICS.jointCommand.topic, (m) => cmds.push(Array.from(m.position)));
  n.createSubscription<{ kind: string }>(TOPICS.safetyEvent.type, TOPICS.safetyEvent.topic, (m) => kinds.push(m.kind));
  const home = [0, 0.3, 0.9, 1.5, 0.02];
  n.createPublisher(TOPICS.jointStates.type, TOPICS.jointStates.topic).publish(jointState(toTime(0), names, home));
  const pub = n.createPublisher(TOPICS.proposedCommand.type, TOPICS.proposedCommand.topic);
  pub.publish(jointState(toTime(0), names, [0.5, 0.3, 0.9, 1.5, 0.02]));
  // 1 rad/s at 10 Hz: at most 0.1 rad per tick (max_step alone would allow 0.5).
  assert.ok(Math.abs(cmds.at(-1)![0] - 0.1) < 1e-9, `${cmds.at(-1)}`);
  assert.ok(kinds.includes("velocity_clamp"));
  // Reaching down through the table (z < 0.03): cut at the box's floor.
  for (let i = 0; i < 30; i++) pub.publish(jointState(toTime(0), names, [0, 1.2, 1.5, 1.5, 0.02]));
  const p = FK_PRESETS.rlft_arm5(cmds.at(-1)!);
  assert.ok(p[2] >= 0.03 - 1e-6, `end effector at ${p}`);
  assert.ok(kinds.includes("workspace"), `safety events: ${kinds.join(", ")}`);
  await sup.shutdown();
  await rt.shutdown();
});
