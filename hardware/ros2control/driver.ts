/** Any arm with a ros2_control driver (UR, Franka, Kinova, xArm), through its controllers' topics: `driver: {kind: ros2_control}`. */
import { z } from "zod";
import { defineDriver, perJointParam } from "../driverEntry.ts";
import { bounded } from "../../contracts/physicalBounds.ts";
import { Ros2ControlDriver } from "./Ros2ControlDriver.ts";
import { TOPICS } from "../../contracts/topics.ts";

export const ros2ControlDriver = defineDriver({
  kind: "ros2_control",
  configSchema: z
    .object({
      kind: z.literal("ros2_control"),
      /** Joint names, in the order the controller's command array expects. */
      joints: z.array(z.string()).min(1),
      lower: z.array(bounded("joint_range")),
      upper: z.array(bounded("joint_range")),
      /** forward: forward_command_controller (Float64MultiArray); trajectory: joint_trajectory_controller (one-point JointTrajectory). */
      command: z.enum(["forward", "trajectory"]).default("forward"),
      /** Command topic; default /forward_position_controller/commands or /joint_trajectory_controller/joint_trajectory. */
      command_topic: z.string().optional(),
      /** Where joint_state_broadcaster publishes. */
      state_topic: z.string().default("/joint_states"),
      /** Trajectory mode: time_from_start of the single point (s); about one control period. */
      time_from_start: z.number().positive().default(0.1),
      /** No /joint_states for this long → read() fails. */
      stale_sec: bounded("reading_age").default(0.5),
    })
    .strict(),
  create: async (cfg, ctx) =>
    new Ros2ControlDriver({
      node: ctx.node(),
      joints: cfg.joints,
      lower: cfg.lower,
      upper: cfg.upper,
      command: cfg.command,
      commandTopic: cfg.command_topic,
      stateTopic: cfg.state_topic,
      timeFromStart: cfg.time_from_start,
      staleSec: cfg.stale_sec,
    }),
  // joint_state_broadcaster publishes /joint_states itself when it is the topic the driver reads.
  ownsJointStates: (cfg) => cfg.state_topic === TOPICS.jointStates.topic,
  joints: (cfg) => cfg.joints.map((name, i) => ({ name, unit: "rad", lower: cfg.lower[i], upper: cfg.upper[i] })),
  fromParams: (p) => {
    const controller = p.controller ?? "forward_position_controller";
    const trajectory = /trajectory/.test(controller);
    return {
      joints: p.joint_names,
      lower: perJointParam(p, p.joint_lower, -Math.PI, "joint_lower"),
      upper: perJointParam(p, p.joint_upper, Math.PI, "joint_upper"),
      command: trajectory ? "trajectory" : "forward",
      command_topic: `/${controller}/${trajectory ? "joint_trajectory" : "commands"}`,
    };
  },
  contract: async () => (await import("./contractFixture.ts")).ros2ControlFixture,
  example: { joints: ["a", "b"], lower: [-1, -1], upper: [1, 1] },
});
