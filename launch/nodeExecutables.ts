/**
 * One executable per node, so a ROS 2 launch file (launch/ros2/*.launch.xml) starts the same node classes
 * the embedded stack runs, each in its own process: `rlft node <executable> --runtime ros2 --param k=v ...`.
 * Each executable declares its parameters (a zod schema, unknown keys rejected) and builds its nodes.
 */
import { z } from "zod";
import type { Runtime } from "../runtime/Runtime.ts";
import { ARM_SPEC } from "../sim/armSpec.ts";
import { taskSpec, type SimRobotName } from "../sim/tasks.ts";
import { SIM_ROBOT_MODELS } from "../sim/ArmSim.ts";
import type { SimArmDriver } from "../hardware/sim/SimArmDriver.ts";
import { GymArmDriver } from "../hardware/gym/GymArmDriver.ts";
import { SimCameraSources } from "../sim/render/SimCameraSources.ts";
import { defaultFrontCamera, randomizationRanges } from "./cameraNodes.ts";
import { simCameraFromFiles } from "../sim/render/cameraCalibration.ts";
import { RANDOMIZE_DEFAULTS } from "../hardware/camera/CameraConfig.ts";
import { CameraNode } from "../nodes/CameraNode.ts";
import { PolicyActor } from "../policies/actors/PolicyActor.ts";
import { TOPICS } from "../contracts/topics.ts";
import { jointLimits, loadArmCalibration } from "../calibration/ArmCalibration.ts";
import { driverConfigFromParams } from "./driverFromParams.ts";
import type { ArmDriverParams } from "../hardware/driverEntry.ts";
import { jointObservationNames } from "../nodes/JointObservationNode.ts";
import { AnyTaskSchema, DriverKindSchema, NodeFactory, SimRobotSchema, TaskSchema, recorderMetadata } from "./nodeFactory.ts";
import { FfmpegCamera } from "../hardware/camera/FfmpegCamera.ts";
import { bounded } from "../contracts/physicalBounds.ts";

/** What every node class has. */
export interface ManagedNode {
  configure(): Promise<void>;
  activate(): Promise<void>;
  shutdown(): Promise<void>;
}

/** A started executable: its nodes, and a promise that settles when it has finished its work (if it ever does). */
export interface StartedExecutable {
  nodes: ManagedNode[];
  /** Resolves when the executable is done (episode_manager after its episodes); absent: runs until stopped. */
  done?: Promise<void>;
  /** Frees what the nodes do not own (the MuJoCo world, ONNX sessions). */
  close?: () => Promise<void>;
}

/** An executable: a parameter schema and a builder. */
export interface NodeExecutable {
  description: string;
  params: z.ZodObject<z.ZodRawShape>;
  start(runtime: Runtime, params: Record<string, unknown>): Promise<StartedExecutable>;
}

const task = TaskSchema.default("push_cube");
/** The simulated robot whose task layout the sim-side executables use (launch files: `robot:`). */
const robot = SimRobotSchema.default("rlft_arm5");
const hz = bounded("control_rate").default(10);
const names = z.array(z.string()).default([...ARM_SPEC.jointNames]);

/** The policy's observation names: the sim task's, or the robot's joints (`q.<joint>`, what joint_observation publishes). */
export function policyObservationNames(p: { observation: "auto" | "task" | "joints"; task: string; robot?: SimRobotName; joint_names: readonly string[] }): string[] {
  const simArm = p.joint_names.join() === ARM_SPEC.jointNames.join();
  const joints = p.observation === "joints" || (p.observation === "auto" && !simArm);
  return joints ? jointObservationNames(p.joint_names) : [...taskSpec(p.robot, p.task).observationNames];
}

const simParams = z
  .object({
    task,
    control_hz: hz,
    randomize_physics: z.boolean().default(false),
    camera: z.boolean().default(true),
    camera_rate_hz: z.number().positive().default(2),
    width: z.number().int().min(8).max(1024).default(64),
    height: z.number().int().min(8).max(1024).default(64),
    /** Named cameras from calibration files (docs/sim.md § Cameras); absent: the single default front camera. */
    cameras: z.array(z.object({ name: z.string().regex(/^[a-z][a-z0-9_]*$/), intrinsics: z.string(), hand_eye: z.string() }).strict()).optional(),
    renderer: z.enum(["raster", "ray"]).default("raster"),
    /** Per-episode domain randomisation of the cameras with the default ranges. */
    randomize: z.boolean().default(false),
    robot,
  })
  .strict();

/** Every executable, by name. */
export const NODE_EXECUTABLES: Record<string, NodeExecutable> = {
  sim: {
    description: "MuJoCo arm as a driver (arm_driver: /joint_states, /observation, /reward) plus its rendered front camera",
    params: simParams,
    async start(runtime, raw) {
      const p = simParams.parse(raw);
      const make = new NodeFactory(runtime);
      const driver = (await make.driver({ kind: "sim", randomize_physics: p.randomize_physics }, { robot: p.robot, task: p.task, controlHz: p.control_hz })) as SimArmDriver;
      const nodes: ManagedNode[] = [make.armDriver(driver, { controlHz: p.control_hz, world: driver })];
      const specs = p.cameras ? p.cameras.map((c) => simCameraFromFiles({ name: c.name, intrinsics: c.intrinsics, handEye: c.hand_eye })) : [defaultFrontCamera(p.width, p.height)];
      const cams = p.camera ? new SimCameraSources(driver.sim, specs, { renderer: p.renderer, randomize: p.randomize ? randomizationRanges(RANDOMIZE_DEFAULTS) : undefined }) : null;
      for (const spec of cams ? specs : []) {
        nodes.push(new CameraNode(runtime.createNode(p.cameras ? `camera_${spec.name}` : "camera"), cams!.source(spec.name), { rateHz: p.camera_rate_hz, name: spec.name, width: spec.model.width, height: spec.model.height }));
      }
      return {
        nodes,
        close: async () => {
          cams?.close();
          driver.sim.close();
        },
      };
    },
  },
  arm_driver: {
    description: "One real arm behind the ArmDriver interface: /joint_command in, /joint_states out",
    params: z
      .object({
        driver: DriverKindSchema,
        control_hz: hz,
        /** The sim's task (driver=sim); a gym env's own task name is metadata here. */
        task: AnyTaskSchema.default("push_cube"),
        /** The simulated robot (driver=sim). */
        robot,
        /** A launch file whose `driver:` block (and calibration.arm) to use; port/host still override it. */
        launch: z.string().optional(),
        /** Serial port (feetech, dynamixel) or RTDE port (ur_rtde). */
        port: z.union([z.string(), z.number()]).transform(String).optional(),
        host: z.string().optional(),
        /** ros2_control: controller name; a *trajectory* one gets JointTrajectory, else Float64MultiArray commands. */
        controller: z.string().optional(),
        baud: z.number().optional(),
        model: z.string().optional(),
        /** Servo ids in joint order (default 1..n). */
        ids: z.array(z.number()).optional(),
        /** rlft calibrate arm file: zeros, directions and ranges of a servo arm. */
        calibration: z.string().optional(),
        joint_names: names,
        joint_lower: z.array(bounded("joint_range")).optional(),
        joint_upper: z.array(bounded("joint_range")).optional(),
        loop_hz: z.number().positive().max(1000).optional(),
        on_deactivate: z.enum(["hold", "torque_off"]).optional(),
      })
      .strict(),
    async start(runtime, raw) {
      const p = this.params.parse(raw) as unknown as ArmDriverParams & { task: string; robot: SimRobotName; control_hz: number };
      const { driver: cfg, calibration } = driverConfigFromParams(p);
      const make = new NodeFactory(runtime);
      const driver = await make.driver(cfg, { robot: p.robot, task: p.task, controlHz: p.control_hz, armCalibration: calibration });
      // A Gymnasium environment is a world the driver node steps each tick.
      return { nodes: [make.armDriver(driver, { controlHz: p.control_hz, world: driver instanceof GymArmDriver ? driver : undefined })], close: async () => driver.close?.() };
    },
  },
  joint_observation: {
    description: "A real arm's /observation from its /joint_states (q.<joint>, in joint_names order); the sim publishes its own",
    params: z.object({ joint_names: names }).strict(),
    async start(runtime, raw) {
      const p = this.params.parse(raw) as { joint_names: string[] };
      return { nodes: [new NodeFactory(runtime).jointObservation(p.joint_names)] };
    },
  },
  camera: {
    description: "A USB (V4L2) camera through ffmpeg: /camera/<name>/image at rate_hz",
    params: z
      .object({
        /** /dev/video0, a /dev/v4l/by-id/... path, or lavfi:<graph> (ffmpeg test source) to try without a camera. */
        device: z.string().default("/dev/video0"),
        width: z.number().int().min(8).max(4096).default(640),
        height: z.number().int().min(8).max(4096).default(480),
        capture_fps: z.number().positive().max(240).default(30),
        input_format: z.enum(["mjpeg", "raw"]).default("mjpeg"),
        rate_hz: z.number().positive().max(120).default(10),
        /** Camera name: topics /camera/<name>/image. */
        name: z.string().regex(/^[a-z][a-z0-9_]*$/).default("front"),
      })
      .strict(),
    async start(runtime, raw) {
      const p = this.params.parse(raw) as { device: string; width: number; height: number; capture_fps: number; input_format: "mjpeg" | "raw"; rate_hz: number; name: string };
      const cam = new FfmpegCamera({ device: p.device, width: p.width, height: p.height, fps: p.capture_fps, inputFormat: p.input_format, logger: { info: (m) => console.log(m), warn: (m) => console.warn(m) } });
      await cam.start();
      return { nodes: [new CameraNode(runtime.createNode(p.name === "front" ? "camera" : `camera_${p.name}`), cam, { rateHz: p.rate_hz, name: p.name, width: p.width, height: p.height })], close: async () => cam.stop() };
    },
  },
  expert: {
    description: "Scripted expert (sim tasks): /observation in, /policy/joint_command out",
    params: z.object({ task, robot, control_hz: hz, quality: z.number().min(0).max(1).default(0.7), joint_names: z.array(z.string()).optional() }).strict(),
    async start(runtime, raw) {
      const p = this.params.parse(raw) as { task: "push_cube"; robot: SimRobotName; control_hz: number; quality: number; joint_names?: string[] };
      const jointNames = p.joint_names ?? SIM_ROBOT_MODELS[p.robot].jointNames;
      const make = new NodeFactory(runtime);
      return { nodes: [make.actor(make.expert({ robot: p.robot, task: p.task, quality: p.quality, jointNames, controlHz: p.control_hz }), { expert: true, controlHz: p.control_hz })] };
    },
  },
  policy: {
    description: "Diffusion (+ residual) policy package on onnxruntime-node: /observation in, /policy/joint_command out",
    params: z.object({ package: z.string(), residual: z.string().optional(), task, robot, control_hz: hz, providers: z.array(z.enum(["cuda", "tensorrt", "cpu"])).default(["cpu"]), sampler: z.enum(["graph", "ts"]).default("graph"), threads: z.number().int().min(1).default(1), joint_names: names, observation: z.enum(["auto", "task", "joints"]).default("auto"), observation_names: z.array(z.string()).optional() }).strict(),
    async start(runtime, raw) {
      const p = this.params.parse(raw) as { package: string; residual?: string; task: "push_cube"; robot: SimRobotName; control_hz: number; providers: ("cuda" | "cpu")[]; sampler: "graph" | "ts"; threads: number; joint_names: string[]; observation: "auto" | "task" | "joints"; observation_names?: string[] };
      const actor = await PolicyActor.create(p.package, { jointNames: p.joint_names, observationNames: p.observation_names ?? policyObservationNames(p), providers: p.providers, mode: p.sampler, threads: p.threads, residual: p.residual });
      return { nodes: [new NodeFactory(runtime).actor(actor, { expert: false, controlHz: p.control_hz })], close: () => actor.close() };
    },
  },
  operator: {
    description: "Scripted operator (sim): takes over when the episode goes wrong, /operator/intervention out",
    params: z.object({ task, robot, control_hz: hz, patience_sec: z.number().positive().default(3), correction_sec: z.number().positive().default(2) }).strict(),
    async start(runtime, raw) {
      const p = this.params.parse(raw) as { task: "push_cube"; robot: SimRobotName; control_hz: number; patience_sec: number; correction_sec: number };
      return { nodes: [new NodeFactory(runtime).operator({ robot: p.robot, task: p.task, controlHz: p.control_hz, patienceSec: p.patience_sec, correctionSec: p.correction_sec })] };
    },
  },
  intervention_arbiter: {
    description: "Operator-or-policy arbitration with a smooth hand-back: /arbiter/joint_command out",
    params: z.object({ control_hz: hz, with_operator: z.boolean().default(false), blend_sec: z.number().min(0).default(0.5), joint_names: names }).strict(),
    async start(runtime, raw) {
      const p = this.params.parse(raw) as { control_hz: number; with_operator: boolean; blend_sec: number; joint_names: string[] };
      return { nodes: [new NodeFactory(runtime).arbiter({ withOperator: p.with_operator, blendSec: p.blend_sec, controlHz: p.control_hz, jointNames: p.joint_names })] };
    },
  },
  safety_supervisor: {
    description: "Joint limits, step clamp, NaN guard and watchdog between the arbiter and the driver: /joint_command out",
    params: z
      .object({
        joint_names: names,
        joint_lower: z.array(bounded("joint_range")).default([...ARM_SPEC.jointLower]),
        joint_upper: z.array(bounded("joint_range")).default([...ARM_SPEC.jointUpper]),
        /** An arm calibration file: its ranges replace joint_lower/joint_upper. */
        calibration: z.string().optional(),
        max_step: bounded("step_clamp").default(0.25),
        watchdog_sec: bounded("command_watchdog").default(0.5),
        input_topic: z.string().default(TOPICS.arbiterCommand.topic),
      })
      .strict(),
    async start(runtime, raw) {
      const p = this.params.parse(raw) as { joint_names: string[]; joint_lower: number[]; joint_upper: number[]; calibration?: string; max_step: number; watchdog_sec: number; input_topic: string };
      let { joint_lower: lower, joint_upper: upper } = p;
      if (p.calibration) {
        const cal = loadArmCalibration(p.calibration);
        const lim = p.joint_names.map((n) => {
          const j = cal.joints[n];
          if (!j) throw new Error(`safety_supervisor: joint "${n}" is not in ${p.calibration} (it has ${Object.keys(cal.joints).join(", ")})`);
          return jointLimits(j);
        });
        lower = lim.map((l) => l[0]);
        upper = lim.map((l) => l[1]);
      }
      if (lower.length !== p.joint_names.length || upper.length !== p.joint_names.length) throw new Error(`safety_supervisor: joint_lower/joint_upper need ${p.joint_names.length} values (${p.joint_names.join(", ")})`);
      return { nodes: [new NodeFactory(runtime).safety({ limits: { names: p.joint_names, lower, upper, maxStep: p.joint_names.map(() => p.max_step) }, watchdogSec: p.watchdog_sec, inputTopic: p.input_topic })] };
    },
  },
  episode_manager: {
    description: "Episode lifecycle on /episode/event; runs `episodes` episodes from `seed` and exits (0: run until stopped)",
    params: z.object({ task, robot, control_hz: hz, max_steps: z.number().int().min(1).optional(), episodes: z.number().int().min(0).default(0), seed: z.number().int().min(0).default(1000), start_delay_sec: z.number().min(0).default(2) }).strict(),
    async start(runtime, raw) {
      const p = this.params.parse(raw) as { task: "push_cube"; robot: SimRobotName; control_hz: number; max_steps?: number; episodes: number; seed: number; start_delay_sec: number };
      const m = new NodeFactory(runtime).episodeManager({ simulated: true, robot: p.robot, task: p.task, controlHz: p.control_hz, maxSteps: p.max_steps });
      if (p.episodes === 0) return { nodes: [m] };
      const done = (async () => {
        // Give the other processes time to discover the topics (ROS 2 discovery is not instant).
        await new Promise((r) => setTimeout(r, p.start_delay_sec * 1000));
        for (let i = 0; i < p.episodes; i++) {
          const ended = new Promise<void>((resolve) => {
            const off = m.onEnd((r) => {
              off();
              console.log(`episode ${r.episode} (seed ${r.seed}): ${r.outcome} after ${r.steps} steps`);
              resolve();
            });
          });
          m.begin(i, p.seed + i);
          await ended;
        }
      })();
      return { nodes: [m], done };
    },
  },
  recorder: {
    description: "Every topic to one MCAP file per episode, with robot, policy and calibration in the metadata",
    params: z.object({ out: z.string().default("runs/sessions"), chunk_bytes: z.number().int().min(1024).default(1 << 20), robot: z.string().default("rlft_arm5"), policy_version: z.string().default("unknown"), calibration_arm: z.string().optional(), calibration_camera: z.string().optional(), calibration_hand_eye: z.string().optional() }).strict(),
    async start(runtime, raw) {
      const p = this.params.parse(raw) as { out: string; chunk_bytes: number; robot: string; policy_version: string; calibration_arm?: string; calibration_camera?: string; calibration_hand_eye?: string };
      const metadata = recorderMetadata({ robot: p.robot, policyVersion: p.policy_version, runtime: runtime.kind, calibration: { arm: p.calibration_arm, camera: p.calibration_camera, hand_eye: p.calibration_hand_eye } });
      return { nodes: [new NodeFactory(runtime).recorder({ outDir: p.out, chunkBytes: p.chunk_bytes, metadata })] };
    },
  },
};

/** Parses `key=value` strings: numbers, booleans, [a, b] lists (YAML flow syntax), else strings. */
export function parseParamArgs(args: readonly string[], parseValue: (s: string) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const a of args) {
    const i = a.indexOf("=");
    const j = a.indexOf(":=");
    const at = j >= 0 && (i < 0 || j < i) ? j : i;
    if (at <= 0) throw new Error(`--param ${a}: expected key=value (or key:=value), e.g. control_hz=10`);
    const key = a.slice(0, at);
    const value = a.slice(at + (at === j ? 2 : 1));
    out[key] = parseValue(value);
  }
  return out;
}

/** Validates an executable's parameters; the error names the executable, the key and what it accepts. */
export function checkParams(name: string, params: Record<string, unknown>): Record<string, unknown> {
  const exe = NODE_EXECUTABLES[name];
  if (!exe) throw new Error(`Unknown node executable "${name}" (available: ${Object.keys(NODE_EXECUTABLES).join(", ")})`);
  const r = exe.params.safeParse(params);
  if (!r.success) {
    const keys = Object.keys(exe.params.shape).join(", ");
    throw new Error(`${name}: ${r.error.issues.map((i) => (i.code === "unrecognized_keys" ? `unknown parameter(s) ${i.keys.join(", ")}` : `${i.path.join(".")}: ${i.message}`)).join("; ")} (parameters: ${keys})`);
  }
  return r.data as Record<string, unknown>;
}
