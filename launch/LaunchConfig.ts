/**
 * The launch file schema: one YAML file describes the whole stack (runtime, robot, task, nodes).
 * Parsed once at start-up; unknown keys are rejected; errors name the file, line and key. Physical settings are
 * bounded, each bound named after what it protects (contracts/physicalBounds.ts).
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { LineCounter, parseDocument, isNode } from "yaml";
import { TeleopSchema, TELEOP_DEFAULTS } from "../hardware/teleop/TeleopConfig.ts";
import { UiSchema, UI_DEFAULTS } from "../web/UiConfig.ts";
import { MqttSchema, MQTT_DEFAULTS } from "../telemetry/mqtt/MqttConfig.ts";
import { RewardSchema, REWARD_DEFAULTS } from "../nodes/RewardConfig.ts";
import { DriverSchema } from "../hardware/registry.ts";
import { CameraSchema, CAMERA_DEFAULTS } from "../hardware/camera/CameraConfig.ts";
import { bounded, perJoint } from "../contracts/physicalBounds.ts";
import { SIM_ROBOTS, TASK_NAME, TASK_NAMES, taskSpec } from "../sim/tasks.ts";
import { noiseScaleProblem } from "../policies/gaussian.ts";

const joints = z.array(z.number());

/** `safety.workspace`: a box for the end effector and the forward kinematics that finds it. */
const xyz = z.tuple([z.number(), z.number(), z.number()]);
const WorkspaceSchema = z
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

/** Schema of a launch file. Every field says why it exists. */
export const LaunchSchema = z
  .object({
    /** Which transport hosts the nodes: embedded (no ROS 2 needed) or ros2 (rclnodejs). */
    runtime: z.enum(["embedded", "ros2"]).default("embedded"),
    /** sim: stepped clock, faster than real time, deterministic. wall: real time (real robots). */
    clock: z.enum(["sim", "wall"]).default("sim"),
    /**
     * Robot description name, recorded into every episode's metadata. With driver.kind sim it picks the simulated
     * model: rlft_arm5 (the made-up 5-joint arm of the fast tests) or so101 (MuJoCo Menagerie's SO-101, the same
     * joints, order, units and limits as launch/so100.yaml).
     */
    robot: z.string().default("rlft_arm5"),
    /**
     * Task the episode manager runs and the sim builds (rlft_arm5: reach, push_cube, peg_insert, multi_push; so101:
     * reach, push_cube, pick_place). driver.kind gym: any name for the env's task (a plain identifier: it goes into
     * recordings, package versions and dataset exports); absent there, the env id's last part (PandaPickCube-v0).
     * Other drivers: one of the simulator's names (metadata). parseLaunch checks it against the driver (launchTaskProblem).
     */
    task: z.string().default("push_cube"),
    /** Language instruction for every episode (multi_push; a VLA policy reads it). Default: each seed's own instruction. */
    instruction: z.string().min(1).optional(),
    /** Control rate of the policy / expert / safety loop. */
    control_hz: bounded("control_rate").default(10),
    /** Arm driver: the sim or a real arm (feetech | dynamixel | ur_rtde | ros2_control); each kind's schema in its folder, listed in hardware/registry.ts. */
    driver: DriverSchema.default({ kind: "sim", randomize_physics: false }),
    /** Cameras: one "front", or named cameras set up by calibration files (hardware/camera/CameraConfig.ts). */
    camera: CameraSchema.default(CAMERA_DEFAULTS),
    /** Who proposes actions: a policy package, or the scripted expert (demonstrations). */
    actor: z
      .object({
        kind: z.enum(["policy", "expert"]).default("policy"),
        /** Policy package directory (kind: policy): the behaviour-cloned base. */
        package: z.string().optional(),
        /** Residual package trained on that base (rlft session); loaded on top of it. */
        residual: z.string().optional(),
        /** onnxruntime execution providers in order of preference; CPU is the fallback. */
        providers: z.array(z.enum(["cuda", "tensorrt", "cpu"])).default(["cpu"]),
        /** graph: whole DDIM loop in one ONNX graph (fast). ts: TS scheduler + per-step denoiser. */
        sampler: z.enum(["graph", "ts"]).default("graph"),
        /** Intra-op threads for onnxruntime. */
        threads: z.number().int().min(1).max(64).default(1),
        /** VLA packages: a camera frame older than this at a chunk boundary counts as missing (the arm holds). */
        max_image_age_sec: bounded("frame_age").default(0.25),
        /** Scripted expert quality in [0,1] (kind: expert): lower = noisier, hesitant, sometimes failing. */
        expert_quality: z.number().min(0).max(1).default(0.7),
        /**
         * RECAP advantage indicator fed to the policy (docs/recap.md): auto follows the package (positive for a RECAP
         * package, nothing for a plain one); positive / negative / unconditioned require a RECAP package; none requires
         * a plain one. A package that does not match is refused at load.
         */
        indicator: z.enum(["auto", "positive", "negative", "unconditioned", "none"]).default("auto"),
        /**
         * Classifier-free guidance weight β for a RECAP package, overriding its policy.json (tune guidance on the robot
         * without retraining). A β other than the one baked into sampler.onnx runs the TS sampler (two denoiser passes
         * per step). Refused for a plain package.
         */
        cfg_beta: z.number().min(0).max(10).optional(),
        /**
         * Best-of-N base chunks at every re-plan (docs/protocol.md § Best-of-N): N samples, one executed. 1 = off.
         * best_of_select critic: ranked by the residual package's critic (needs critic.onnx); chunk_critic: ranked by
         * its chunk-level critic over the K executed steps (needs chunk_critic.onnx, learner `chunk_critic: true`);
         * critics: both, their scores standardised over the N samples and summed (needs both files); consensus: the medoid. The N chunks are sampled in one batched call (npm run bench: the cost at N = 16).
         */
        best_of: z.number().int().min(1).max(64).default(1),
        best_of_select: z.enum(["critic", "chunk_critic", "critics", "consensus"]).default("critic"),
        /**
         * Training mode (rlft session) with a critic ranking: the share of re-plans that run the first sample
         * unranked (a plain base sample), so the critic keeps seeing chunks it did not pick. Evaluation never explores.
         */
        best_of_explore: z.number().min(0).max(1).default(0.2),
        /** Critic ranking: mean − best_of_pessimism · std over the ensemble's heads. */
        best_of_pessimism: z.number().min(0).max(10).default(0),
        /**
         * Sampling temperature of the policy (diffusion or VLA flow): its initial noise × noise_scale. 1 samples the
         * learned distribution; lower concentrates on its modes (0: deterministic per observation). docs/residual.md,
         * docs/recap.md.
         */
        noise_scale: z.number().superRefine((t, ctx) => {
          const problem = noiseScaleProblem(t);
          if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
        }).default(1),
      })
      .strict()
      .default({ kind: "policy", providers: ["cpu"], sampler: "graph", threads: 1, max_image_age_sec: 0.25, expert_quality: 0.7, indicator: "auto", best_of: 1, best_of_select: "critic", best_of_explore: 0.2, best_of_pessimism: 0, noise_scale: 1 }),
    safety: z
      .object({
        /** Largest joint-target change per tick, per joint (rad, gripper m). One value applies to all. */
        max_step: perJoint("step_clamp").default(0.25),
        /** No fresh command for this long → hold the measured position. */
        watchdog_sec: bounded("command_watchdog").default(0.5),
        /** Joint velocity limit (rad/s), one value or per joint; off when absent. */
        max_velocity: perJoint("joint_velocity").optional(),
        /** Joint acceleration limit (rad/s²), one value or per joint; needs max_velocity. */
        max_acceleration: perJoint("joint_acceleration").optional(),
        /** A box the end effector must stay in (base frame, m), with the arm's forward kinematics. */
        workspace: WorkspaceSchema.optional(),
      })
      .strict()
      .default({ max_step: 0.25, watchdog_sec: 0.5 }),
    episodes: z
      .object({
        /** Episodes to run (launch/eval) — collect and eval override it on the command line. */
        count: z.number().int().min(1).default(10),
        /** First seed; episode i uses seed + i, so evaluation seeds never overlap training seeds. */
        seed: z.number().int().min(0).default(1000),
        /** Episode length limit in control ticks; defaults to the task's own limit. */
        max_steps: z.number().int().min(1).optional(),
      })
      .strict()
      .default({ count: 10, seed: 1000 }),
    /**
     * Episode reset on a real arm (the sim resets to the seed's start state instead): before each episode the arm
     * drives to `home` through the safety supervisor at `max_speed`, holds there, and the episode waits for the
     * operator's start (UI, MQTT, keys) when a person is in the loop. docs/real-robot.md.
     */
    reset: z
      .object({
        /** Home pose, rad (gripper in its joint units), one value per driver joint in driver order; absent: no homing. */
        home: joints.optional(),
        /** Top joint speed on the way home (rad/s), one value or per joint. Slow: nobody supervises this motion. */
        max_speed: perJoint("homing_speed").default(0.3),
        /** Home is reached when every joint is within this of it (rad); otherwise a warning names the joints. */
        tolerance: bounded("homing_tolerance").default(0.05),
        /** After the last point, how long the arm may take to arrive (s). */
        settle_sec: z.number().min(0).default(2),
      })
      .strict()
      .default({ max_speed: 0.3, tolerance: 0.05, settle_sec: 2 }),
    /** A supervising operator who takes over when the episode goes wrong (interventions, docs/algorithms.md §2). */
    operator: z
      .object({
        enabled: z.boolean().default(false),
        /** scripted: a simulated person (sim only). ui: the web page (buttons + held keys); the others are teleop devices (teleop section). */
        kind: z.enum(["scripted", "ui", "keyboard", "gamepad", "spacemouse", "leader"]).default("scripted"),
        /** Seconds without progress before the operator takes over. */
        patience_sec: z.number().positive().default(3),
        /** Seconds the operator corrects before handing back. */
        correction_sec: z.number().positive().default(2),
        /** Hand-back blends operator → policy commands over this long, so the arm never jumps. */
        blend_sec: z.number().min(0).default(0.5),
      })
      .strict()
      .default({ enabled: false, kind: "scripted", patience_sec: 3, correction_sec: 2, blend_sec: 0.5 }),
    /** Teleop devices: shaping, takeover and per-device settings (hardware/teleop/TeleopConfig.ts). */
    teleop: TeleopSchema.default(TELEOP_DEFAULTS),
    /** The operator web UI (web/UiConfig.ts). */
    ui: UiSchema.default(UI_DEFAULTS),
    /** Operator commands and status over MQTT (telemetry/mqtt/MqttConfig.ts). */
    mqtt: MqttSchema.default(MQTT_DEFAULTS),
    /** Reward sources besides the operator: sim ground truth, a learned success classifier (nodes/RewardConfig.ts). */
    reward: RewardSchema.default(REWARD_DEFAULTS),
    /** Online learning: where experience goes and policies come from (rlft session). */
    learner: z
      .object({
        /** The learner's experience ROUTER (robot connects a DEALER). */
        experience: z.string().default("tcp://127.0.0.1:5555"),
        /** The learner's policy PUB. */
        policy: z.string().default("tcp://127.0.0.1:5556"),
        /** Unacknowledged transitions wait here on disk, so a learner restart loses nothing. */
        spool: z.string().default("runs/spool"),
        /** Robot id in the protocol; one learner serves many robots. */
        robot_id: z.string().default("sim-0"),
        /** Where received policy packages are cached (verified before use). */
        cache: z.string().default("runs/policies"),
        /** Exploration noise on the residual (training mode); off for evaluation. */
        explore: z.boolean().default(true),
        /** Spool cap on disk (MB): episodes pause before the spool would pass it (a slow or absent learner). */
        spool_cap_mb: z.number().positive().default(1024),
        /**
         * Cameras whose frames each transition carries to the learner (image.<cam> of obs, next_image.<cam> of next_obs,
         * raw rgb8: about 2 x 21 kB per 84x84 camera and step); names from camera.cameras. Empty (default): none.
         */
        cameras: z.array(z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, "a camera name: lowercase letters, digits, _")).default([]),
        /**
         * How those frames travel (docs/protocol.md § Camera frames): `zlib` (default) compresses each frame once on
         * the robot (level 1, off the control tick; 84x84 frames: ~4-5 kB instead of 21 kB, spooled and sent so), the
         * learner stores the streams as they come; `raw` sends the rgb8 bytes (for a learner from before zlib frames).
         */
        frame_encoding: z.enum(["raw", "zlib"]).default("zlib"),
        /** CURVE keys and trusted package signers (docs/security.md, `rlft keys`); absent = plain loopback ZeroMQ. */
        security: z
          .object({
            /** This robot's secret certificate (keys/<robot>.key_secret). */
            curve_secret: z.string(),
            /** The learner's public certificate (keys/learner.key): the robot talks to nobody else. */
            learner_key: z.string(),
            /** ed25519 public keys (keys/learner.sign.pub.pem) whose signed packages the robot accepts; unsigned ones are refused. */
            trusted_signers: z.array(z.string()).min(1),
          })
          .strict()
          .optional(),
      })
      .strict()
      .default({ experience: "tcp://127.0.0.1:5555", policy: "tcp://127.0.0.1:5556", spool: "runs/spool", robot_id: "sim-0", cache: "runs/policies", explore: true, spool_cap_mb: 1024, cameras: [], frame_encoding: "zlib" }),
    /** Calibration files (rlft calibrate ...): validated at start-up and recorded into every episode's metadata. */
    calibration: z
      .object({
        /** Servo arm homing offsets and ranges (rlft calibrate arm). */
        arm: z.string().optional(),
        /** Camera intrinsics (rlft calibrate intrinsics). */
        camera: z.string().optional(),
        /** Camera pose relative to the gripper or base (rlft calibrate hand-eye). */
        hand_eye: z.string().optional(),
      })
      .strict()
      .default({}),
    recorder: z
      .object({
        enabled: z.boolean().default(true),
        /** Where MCAP episodes and the session index go. */
        out: z.string().default("runs/sessions"),
        /** MCAP chunk size: a crash loses at most the open chunk. */
        chunk_bytes: z.number().int().min(1024).default(1 << 20),
        /** Byte budget of the episode files (MB); past it recording stops as on a full disk and sessions pause. */
        max_mb: z.number().positive().optional(),
      })
      .strict()
      .default({ enabled: true, out: "runs/sessions", chunk_bytes: 1 << 20 }),
  })
  .strict();

/** A parsed launch file. */
export type LaunchConfig = z.infer<typeof LaunchSchema>;

/** A launch file that could not be used; the message names file, line and key. */
export class LaunchConfigError extends Error {
  readonly code = "LAUNCH_CONFIG_INVALID";
}

/** Parses launch YAML text (file name used in messages). */
export function parseLaunch(text: string, file = "<launch>"): LaunchConfig {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const pos = e.linePos?.[0];
    throw new LaunchConfigError(`${file}${pos ? `:${pos.line}:${pos.col}` : ""}: YAML syntax error: ${e.message.split("\n")[0]}`);
  }
  const raw = doc.toJS() ?? {};
  const res = LaunchSchema.safeParse(raw);
  if (res.success) {
    // A Gymnasium env's task, when the file names none: the env id's (driver.kind gym serves any registered env).
    if (res.data.driver.kind === "gym" && (raw as { task?: unknown }).task === undefined) res.data.task = gymTaskName(res.data.driver.env);
    // The simulator must have the robot and the task; a gym env takes any plain name; a real arm one of the sim's.
    const problem = launchTaskProblem(res.data);
    if (problem) {
      const key = problem.key;
      const node = doc.get(key, true);
      const where = isNode(node) && node.range ? `:${lineCounter.linePos(node.range[0]).line}` : "";
      throw new LaunchConfigError(`${file}${where}: ${key}: ${problem.message}`);
    }
    return res.data;
  }
  const lines = res.error.issues.map((issue) => {
    let path = issue.path.map(String);
    if (issue.code === "unrecognized_keys") path = [...path, issue.keys[0]];
    let node = doc.getIn(path, true);
    // For a missing key, point at the parent mapping.
    for (let p = path; !isNode(node) && p.length > 0; ) {
      p = p.slice(0, -1);
      node = p.length ? doc.getIn(p, true) : doc.contents;
    }
    let where = "";
    if (issue.code === "unrecognized_keys") {
      const parent = path.length > 1 ? doc.getIn(path.slice(0, -1), true) : doc.contents;
      const pair = (parent as { items?: { key: { value: unknown; range?: number[] } }[] })?.items?.find((it) => it.key?.value === path[path.length - 1]);
      if (pair?.key?.range) where = `:${lineCounter.linePos(pair.key.range[0]).line}`;
    } else if (isNode(node) && node.range) {
      where = `:${lineCounter.linePos(node.range[0]).line}`;
    }
    const key = path.join(".") || "(top level)";
    const msg = issue.code === "unrecognized_keys" ? `unknown key '${key}' (allowed: ${allowedKeys(path.slice(0, -1), doc).join(", ")})` : `${key}: ${issue.message}`;
    return `${file}${where}: ${msg}`;
  });
  throw new LaunchConfigError(lines.join("\n"));
}

function allowedKeys(path: string[], doc?: { getIn(p: unknown[]): unknown }): string[] {
  let s: z.ZodTypeAny = LaunchSchema;
  const unwrap = () => {
    for (;;) {
      if (s instanceof z.ZodDefault || s instanceof z.ZodOptional) s = (s as z.ZodDefault<z.ZodTypeAny>).unwrap() as z.ZodTypeAny;
      else if (s instanceof z.ZodPipe) s = (s as z.ZodPipe<z.ZodTypeAny, z.ZodTypeAny>).out;
      else break;
    }
  };
  for (let i = 0; i < path.length; i++) {
    unwrap();
    // A discriminated union (driver.kind): the keys of the variant the file names.
    if (s instanceof z.ZodDiscriminatedUnion) s = pickVariant(s, doc?.getIn(path.slice(0, i).concat("kind")));
    if (s instanceof z.ZodObject) s = (s.shape as Record<string, z.ZodTypeAny>)[path[i]];
  }
  unwrap();
  if (s instanceof z.ZodDiscriminatedUnion) s = pickVariant(s, doc?.getIn(path.concat("kind")));
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

function pickVariant(u: z.ZodDiscriminatedUnion, kind: unknown): z.ZodTypeAny {
  const options = u.options as z.ZodTypeAny[];
  return options.find((o) => o instanceof z.ZodObject && (o.shape as Record<string, z.ZodTypeAny>).kind?.safeParse(kind ?? "sim").success) ?? options[0];
}

/** Why `task` is not a usable task name for a non-sim driver, or null. */
export function taskNameProblem(task: unknown): string | null {
  if (typeof task !== "string") return `a task name is a string; got ${typeof task}`;
  if (TASK_NAME.test(task)) return null;
  return `task name ${shownTask(task)} is not a plain name: use 1-64 letters, digits, _ . or -, starting with a letter (it goes into recordings, package versions and file names)`;
}

/** A task name as an error message shows it: quoted and escaped (no raw newline), cut after 40 characters. */
function shownTask(task: string): string {
  return `${JSON.stringify(task.length > 40 ? `${task.slice(0, 40)}...` : task)}${task.length > 64 ? ` (${task.length} characters)` : ""}`;
}

/** The task a gym launch file without `task:` runs: the env id's last part, made a plain name (gym_hil/PandaPickCube-v0 → PandaPickCube-v0). */
export function gymTaskName(env: string): string {
  const last = (env.split("/").at(-1) ?? "").replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 60);
  return /^[A-Za-z]/.test(last) ? last : `env_${last}`.slice(0, 64);
}

/**
 * Whether the config's task fits its driver: the simulator's robot must have it (the error names that robot's tasks);
 * a Gymnasium env takes any plain name (taskNameProblem); any other driver (a real arm, where the task is metadata)
 * one of the simulator's names. Returns the key at fault and a one-line message, or null.
 */
export function launchTaskProblem(cfg: Pick<LaunchConfig, "driver" | "robot" | "task">): { key: "task" | "robot"; message: string } | null {
  const kind = cfg.driver.kind;
  if (kind === "sim") {
    try {
      taskSpec(cfg.robot, cfg.task);
      return null;
    } catch (e) {
      return { key: (SIM_ROBOTS as readonly string[]).includes(cfg.robot) ? "task" : "robot", message: `${(e as Error).message} (driver.kind sim)` };
    }
  }
  if (kind === "gym") {
    const p = taskNameProblem(cfg.task);
    return p ? { key: "task", message: `${p} (driver.kind gym)` } : null;
  }
  if ((TASK_NAMES as readonly string[]).includes(cfg.task)) return null;
  const p = taskNameProblem(cfg.task);
  return { key: "task", message: `${p ?? `task "${cfg.task}" is not one of ${TASK_NAMES.join(", ")}`} (driver.kind ${kind} records one of the simulator's task names; driver.kind gym takes the env's own)` };
}

/** Sets `cfg.task` from a command-line option, refused (one line naming the option, the name and the fix) when it does not fit the driver. */
export function setTask(cfg: LaunchConfig, task: string, option = "--task"): void {
  const problem = launchTaskProblem({ ...cfg, task });
  if (problem) throw new LaunchConfigError(`${option}: ${problem.message}`);
  cfg.task = task;
}

/** Reads and parses a launch file; errors name the file. */
export function loadLaunch(path: string): LaunchConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new LaunchConfigError(`Cannot read launch file ${path}: ${(e as Error).message}`);
  }
  return parseLaunch(text, path);
}
