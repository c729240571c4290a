/**
 * The `teleop` section of a launch file: one block per device kind plus the shaping all twist devices share.
 * Every field says why it exists; unknown keys are rejected (launch/LaunchConfig.ts pretty-prints errors).
 */
import { z } from "zod";

const six = z.array(z.number()).length(6);
/** Device axis index per robot axis (x forward, y left, z up, roll, pitch, yaw); -1 = unused. */
const axisMap = z.array(z.number().int().min(-1).max(31)).length(6);

/** Schema of the `teleop` section. */
export const TeleopSchema = z
  .object({
    /** Fraction of each axis' range that reads as zero (stick drift, a resting hand on a SpaceMouse). */
    deadzone: z.number().min(0).max(0.9).default(0.1),
    /** End-effector speed at full deflection (m/s). Slow by default: the operator corrects, not races. */
    linear_speed: z.number().positive().max(1).default(0.1),
    /** Tool pitch speed at full deflection (rad/s). */
    angular_speed: z.number().positive().max(3).default(0.5),
    /** Motion-takeover devices hand back after this long without motion (0: only the takeover button hands back). */
    release_sec: z.number().min(0).default(1.5),
    keyboard: z
      .object({
        /** Terminal keys have no key-up: each press jogs the tool this far (m). Web UI keys move at linear_speed while held. */
        jog_step: z.number().positive().max(0.1).default(0.01),
        /** Each pitch key press turns the tool this far (rad). */
        jog_angle: z.number().positive().max(0.5).default(0.05),
      })
      .strict()
      .default({ jog_step: 0.01, jog_angle: 0.05 }),
    gamepad: z
      .object({
        /** Joystick device node (Linux joystick API). */
        path: z.string().default("/dev/input/js0"),
        /** Defaults fit xpad (Xbox) pads: left stick → x/y, right stick vertical → z, horizontal → pitch. */
        axis_map: axisMap.default([1, 0, 4, -1, 3, -1]),
        axis_gain: six.default([-1, -1, -1, 1, 1, 1]),
        /** Button numbers (xpad: A 0, B 1, X 2, Y 3, LB 4, RB 5, Back 6, Start 7). deadman: held = operator in control. */
        buttons: z
          .object({
            deadman: z.number().int().min(0).default(5),
            gripper: z.number().int().min(0).default(0),
            success: z.number().int().min(0).default(3),
            failure: z.number().int().min(0).default(1),
            start: z.number().int().min(0).default(7),
            pause: z.number().int().min(0).default(6),
          })
          .strict()
          .default({ deadman: 5, gripper: 0, success: 3, failure: 1, start: 7, pause: 6 }),
      })
      .strict()
      .default({ path: "/dev/input/js0", axis_map: [1, 0, 4, -1, 3, -1], axis_gain: [-1, -1, -1, 1, 1, 1], buttons: { deadman: 5, gripper: 0, success: 3, failure: 1, start: 7, pause: 6 } }),
    spacemouse: z
      .object({
        /** hidraw path of the device; default: the first known 3Dconnexion model found. */
        path: z.string().optional(),
        /** SpaceMouse axes are (right, forward, up, ...) after parsing; the robot's x is forward. */
        axis_map: axisMap.default([1, 0, 2, 3, 4, 5]),
        axis_gain: six.default([1, -1, 1, 1, 1, 1]),
      })
      .strict()
      .default({ axis_map: [1, 0, 2, 3, 4, 5], axis_gain: [1, -1, 1, 1, 1, 1] }),
    leader: z
      .object({
        /** Servo bus of the leader arm (Feetech/Dynamixel driver, issue 6): serial port and protocol. */
        port: z.string().default("/dev/ttyUSB1"),
        protocol: z.enum(["feetech", "dynamixel"]).default("feetech"),
        /** follower = offset + scale × leader, per joint in command order (calibrate once: `rlft calibrate`). */
        joint_scale: z.array(z.number()).optional(),
        joint_offset: z.array(z.number()).optional(),
        /** Leader joint speed (rad/s) above which it counts as moved (servo read noise stays below). */
        motion_threshold: z.number().positive().default(0.1),
      })
      .strict()
      .default({ port: "/dev/ttyUSB1", protocol: "feetech", motion_threshold: 0.1 }),
  })
  .strict();

/** The parsed `teleop` section. */
export type TeleopConfig = z.infer<typeof TeleopSchema>;

/** Defaults of the whole section. */
export const TELEOP_DEFAULTS: TeleopConfig = TeleopSchema.parse({});
