/**
 * The `driver:` block of a launch file: which arm driver runs and its settings, one zod schema per kind
 * (unknown keys rejected). `kind` defaults to sim, so launch files written before real arms still parse.
 */
import { z } from "zod";
import { bounded } from "../launch/physicalBounds.ts";

const onDeactivate = z.enum(["hold", "torque_off"]);

/** The MuJoCo arm. */
const SimDriver = z
  .object({
    kind: z.literal("sim"),
    /** Jitter friction and mass from the seed (domain randomisation). */
    randomize_physics: z.boolean().default(false),
  })
  .strict();

/** One servo joint of a bus arm. */
const ServoJointSchema = z
  .object({
    /** Joint name as in /joint_states and the policy package. */
    name: z.string().min(1),
    /** Servo id on the bus (set once with the vendor tool or rlft calibrate). */
    id: z.number().int().min(0).max(252),
    /** Raw encoder ticks at joint angle 0 (from calibration; 2048 = the middle of an STS3215 / X-series turn). */
    zero_ticks: z.number().int().default(2048),
    /** -1 when the servo turns opposite to the joint's positive direction. */
    direction: z.union([z.literal(1), z.literal(-1)]).default(1),
    /** Joint limits in rad (gripper too: its servo angle); commands are clamped to them. */
    lower: z.number(),
    upper: z.number(),
    /** Servo model of this joint when a bus mixes models (Koch: xl430 + xl330); default driver.model. */
    model: z.string().optional(),
  })
  .strict()
  .refine((j) => j.lower < j.upper, { message: "lower must be below upper" });

const servoCommon = {
  /** Serial port of the bus adapter; `rlft launch --port` overrides it. Prefer /dev/serial/by-id/... (stable across replugs). */
  port: z.string().default("/dev/ttyACM0"),
  /** I/O loop rate: one sync write of goals + one sync read of state per cycle. */
  loop_hz: z.number().positive().max(1000).default(100),
  /** Per-reply deadline (ms); raise it for FTDI adapters whose latency_timer is 16 ms. */
  timeout_ms: z.number().int().min(1).max(1000).default(50),
  /** Retries after a checksum error or a missing reply before a cycle fails. */
  retries: z.number().int().min(0).max(10).default(2),
  /** A reading older than this makes read() fail (the stack then stops publishing state and the watchdog holds). */
  stale_sec: bounded("reading_age").default(0.5),
  /** What deactivate (end of session, Ctrl-C) does: hold the pose with torque on, or torque off (arm goes limp). */
  on_deactivate: onDeactivate.default("torque_off"),
  /** What a bus fault while active does (5 failed cycles): torque off, or leave the servos holding their last goal. */
  on_fault: onDeactivate.default("hold"),
  joints: z.array(ServoJointSchema).min(1),
};

/** Feetech STS/SCS bus (SO-100, SO-101). */
const FeetechDriver = z
  .object({
    kind: z.literal("feetech"),
    ...servoCommon,
    /** STS3215 factory default: 1 Mbps. */
    baud: z.number().int().positive().default(1_000_000),
    model: z.enum(["sts3215"]).default("sts3215"),
  })
  .strict();

/** Dynamixel Protocol 2.0 bus (Koch). */
const DynamixelDriver = z
  .object({
    kind: z.literal("dynamixel"),
    ...servoCommon,
    /** X-series factory default is 57600; Koch setups usually switch to 1 Mbps. */
    baud: z.number().int().positive().default(1_000_000),
    model: z.enum(["xl330", "xl430"]).default("xl330"),
    /** Bus Watchdog (ms, multiple of 20; 0 = off): the servos stop by themselves if rlft goes silent. */
    bus_watchdog_ms: z.number().int().min(0).max(2540).default(100),
  })
  .strict();

/** Universal Robots e-Series over RTDE. */
const UrRtdeDriver = z
  .object({
    kind: z.literal("ur_rtde"),
    /** Controller IP address. */
    host: z.string().default("192.168.1.10"),
    /** RTDE port (fixed by UR). */
    port: z.number().int().default(30004),
    /** Output rate: 500 Hz on e-Series, 125 Hz on CB3. */
    frequency: z.union([z.literal(125), z.literal(500)]).default(500),
    /** Send hardware/ur/rlft_servoj.script to the primary interface at activate (else load it as a program on the pendant). */
    upload_script: z.boolean().default(true),
    /** Primary client interface port: the script goes there and the controller's messages (refusals, stops) come back. */
    script_port: z.number().int().default(30001),
    /** servoj lookahead time (s, 0.03–0.2): smoother but later. */
    lookahead_time: z.number().min(0.03).max(0.2).default(0.1),
    /** servoj gain (100–2000): stiffer tracking. */
    gain: z.number().min(100).max(2000).default(300),
    /** The script stops the arm when no fresh target arrives for this long. */
    watchdog_sec: bounded("controller_watchdog").default(0.1),
    /** UR joint names; the order of actual_q. */
    joints: z.array(z.string()).length(6).default(["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]),
    /** Joint limits (rad); default ±2π, narrow them to the cell. */
    lower: z.array(z.number()).length(6).default(Array(6).fill(-2 * Math.PI)),
    upper: z.array(z.number()).length(6).default(Array(6).fill(2 * Math.PI)),
    /** Socket connect deadline. */
    timeout_ms: z.number().int().positive().default(3000),
  })
  .strict();

/** Any arm with a ros2_control driver (UR, Franka, Kinova, xArm), through its controllers' topics. */
const Ros2ControlDriver = z
  .object({
    kind: z.literal("ros2_control"),
    /** Joint names, in the order the controller's command array expects. */
    joints: z.array(z.string()).min(1),
    lower: z.array(z.number()),
    upper: z.array(z.number()),
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
  .strict();

/** The driver block: a discriminated union on `kind` (default sim). */
export const DriverSchema = z.preprocess(
  (v) => (v && typeof v === "object" && !Array.isArray(v) && !("kind" in v) ? { ...v, kind: "sim" } : v),
  z.discriminatedUnion("kind", [SimDriver, FeetechDriver, DynamixelDriver, UrRtdeDriver, Ros2ControlDriver]),
);

/** A parsed driver block. */
export type DriverConfig = z.infer<typeof DriverSchema>;

const xyz = z.tuple([z.number(), z.number(), z.number()]);

/** `safety.workspace`: a box for the end effector and the forward kinematics that finds it. */
export const WorkspaceSchema = z
  .object({
    /** rlft_arm5 | ur5e | so101 (built in), or dh with `dh` rows (standard DH: a, alpha, d, theta offset). */
    fk: z.enum(["rlft_arm5", "ur5e", "so101", "dh"]),
    dh: z.array(z.object({ a: z.number(), alpha: z.number(), d: z.number(), theta: z.number().default(0) }).strict()).optional(),
    /** Box corners in the base frame (m). */
    min: xyz,
    max: xyz,
  })
  .strict()
  .refine((w) => w.fk !== "dh" || (w.dh?.length ?? 0) > 0, { message: "fk: dh needs the dh rows" })
  .refine((w) => w.min.every((v, k) => v < w.max[k]), { message: "min must be below max on every axis" });
