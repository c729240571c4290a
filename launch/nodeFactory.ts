/**
 * The one place the stack's nodes are built, for both ways of running them: the embedded `Stack` (launch/Stack.ts,
 * one process) and the ROS 2 executables (launch/nodeExecutables.ts, one process per node). Node names, the driver
 * context, the task and driver-kind vocabularies, episode lengths and the recorder's metadata come from here, so the
 * two paths cannot drift apart (launch/nodeFactory.test.ts holds them to it).
 */
import { execFileSync } from "node:child_process";
import { z } from "zod";
import type { Runtime } from "../runtime/Runtime.ts";
import type { ArmDriver } from "../hardware/ArmDriver.ts";
import { DRIVER_KINDS, createArmDriver, type DriverConfig } from "../hardware/registry.ts";
import { SIM_ROBOTS, TASK_NAME, TASK_NAMES, episodeSteps, taskSpec, type SimRobotName, type TaskName } from "../sim/tasks.ts";
import { ArmDriverNode, type ArmDriverNodeOptions } from "../nodes/ArmDriverNode.ts";
import { ActorNode } from "../nodes/ActorNode.ts";
import type { Actor } from "../policies/actors/Actor.ts";
import { ExpertActor, type ExpertActorOptions } from "../policies/actors/ExpertActor.ts";
import { OperatorNode, type OperatorNodeOptions } from "../nodes/OperatorNode.ts";
import { InterventionArbiterNode, type InterventionArbiterOptions } from "../nodes/InterventionArbiterNode.ts";
import { SafetySupervisorNode, type SafetySupervisorOptions } from "../nodes/SafetySupervisorNode.ts";
import { EpisodeManagerNode } from "../nodes/EpisodeManagerNode.ts";
import { RecorderNode, type RecorderOptions } from "../nodes/RecorderNode.ts";
import { JointObservationNode } from "../nodes/JointObservationNode.ts";
import { calibrationMetadata, type CalibrationPaths } from "../calibration/CalibrationFiles.ts";

/** Every sim task name, for the sim-side executables' `task` parameter (the launch file's is checked by launchTaskProblem). */
export const TaskSchema = z.enum(TASK_NAMES);
/**
 * The arm_driver executable's `task`: a sim task, or (driver gym) the env's own task name — a plain identifier, as a gym
 * launch file's (sim/tasks.ts TASK_NAME; it ends up in recordings and file names).
 */
export const AnyTaskSchema = z.string().regex(TASK_NAME, "a task name: 1-64 letters, digits, _ . or -, starting with a letter");
/** Every registered driver kind, for the `arm_driver` executable's `driver` parameter (the launch file's is DriverSchema). */
export const DriverKindSchema = z.enum(DRIVER_KINDS);
/** Every simulated robot. */
export const SimRobotSchema = z.enum(SIM_ROBOTS as [SimRobotName, ...SimRobotName[]]);

/** Episode length when the launch file or the parameters give none: the sim task's own, 200 ticks on a real arm. */
export function defaultEpisodeSteps(o: { simulated: boolean; robot?: string; task: string; controlHz: number }): number {
  return o.simulated ? episodeSteps(taskSpec(o.robot, o.task), o.controlHz) : 200;
}

/** A logger that prints info unless quiet. */
export function nodeLogger(quiet = false): { info(m: string): void; warn(m: string): void } {
  return { info: (m) => !quiet && console.log(m), warn: (m) => console.warn(m) };
}

/** Builds nodes on one runtime, named as both paths name them. */
export class NodeFactory {
  constructor(
    readonly runtime: Runtime,
    readonly logger = nodeLogger(),
  ) {}

  /** The arm driver a parsed `driver:` block describes (hardware/registry.ts); robot and task pick the sim's world. */
  driver(cfg: DriverConfig, o: { robot?: string; task: string; controlHz: number; instruction?: string; armCalibration?: string }): Promise<ArmDriver> {
    return createArmDriver(cfg, { node: () => this.runtime.createNode("arm_bridge"), logger: this.logger, ...o });
  }

  armDriver(driver: ArmDriver, opts: ArmDriverNodeOptions): ArmDriverNode {
    return new ArmDriverNode(this.runtime.createNode("arm_driver"), driver, opts);
  }

  /** The scripted expert of a sim task. */
  expert(o: Omit<ExpertActorOptions, "task"> & { task: string }): ExpertActor {
    return new ExpertActor({ ...o, task: o.task as TaskName });
  }

  /** The actor's node: "expert" for the scripted expert, "policy" for a package. */
  actor(actor: Actor, o: { expert: boolean; controlHz: number }): ActorNode {
    return new ActorNode(this.runtime.createNode(o.expert ? "expert" : "policy"), actor, { controlHz: o.controlHz });
  }

  /** The scripted operator (sim). */
  operator(o: Omit<OperatorNodeOptions, "task"> & { task: string }): OperatorNode {
    return new OperatorNode(this.runtime.createNode("operator"), { ...o, task: o.task as TaskName });
  }

  arbiter(o: InterventionArbiterOptions): InterventionArbiterNode {
    return new InterventionArbiterNode(this.runtime.createNode("intervention_arbiter"), o);
  }

  safety(o: SafetySupervisorOptions): SafetySupervisorNode {
    return new SafetySupervisorNode(this.runtime.createNode("safety_supervisor"), o);
  }

  /** The episode manager; `maxSteps` absent: defaultEpisodeSteps. */
  episodeManager(o: { simulated: boolean; robot?: string; task: string; controlHz: number; maxSteps?: number }): EpisodeManagerNode {
    return new EpisodeManagerNode(this.runtime.createNode("episode_manager"), { task: o.task, controlHz: o.controlHz, maxSteps: o.maxSteps ?? defaultEpisodeSteps(o) });
  }

  recorder(o: RecorderOptions): RecorderNode {
    return new RecorderNode(this.runtime.createNode("recorder"), o);
  }

  jointObservation(names: readonly string[]): JointObservationNode {
    return new JointObservationNode(this.runtime.createNode("joint_observation"), [...names]);
  }
}

/** The metadata every recorded episode carries, on both paths: robot, policy, code revision, runtime, calibration. */
export function recorderMetadata(o: { robot: string; policyVersion: string; runtime: string; calibration: CalibrationPaths }): Record<string, string> {
  return { robot: o.robot, policy_version: o.policyVersion, git_revision: gitRevision(), runtime: o.runtime, ...calibrationMetadata(o.calibration, o.robot) };
}

/** Short git revision of the checkout (`-dirty` when tracked files have uncommitted changes), or "unknown" outside git; read once per process. */
export function gitRevision(): string {
  if (cachedRevision === undefined) {
    try {
      const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { stdio: ["ignore", "pipe", "ignore"] }).toString().trim();
      // Uncommitted changes to tracked files: the recorded revision is not the code that ran.
      const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { stdio: ["ignore", "pipe", "ignore"] }).toString().trim() !== "";
      cachedRevision = dirty ? `${head}-dirty` : head;
    } catch {
      cachedRevision = "unknown";
    }
  }
  return cachedRevision;
}
let cachedRevision: string | undefined;
