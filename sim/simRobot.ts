/**
 * What a simulated robot plugs into ArmSim (sim/ArmSim.ts): how its MJCF scene is loaded, and a world bound to one
 * MuJoCo model that knows where its joints and task objects are. ArmSim owns stepping, command checks, physics
 * jitter and the lifecycle; the world owns everything robot- and task-specific.
 */
import type { MainModule, MjData, MjModel } from "mujoco-js";
import type { SimRobotName, TaskSpec } from "./tasks.ts";
import type { MultiPushGoal } from "./multiPush.ts";

/** What a world is bound to. */
export interface SimContext {
  mj: MainModule;
  model: MjModel;
  data: MjData;
  /** The task, with the configured control rate. */
  task: TaskSpec;
  /** multi_push: a fixed instruction for every episode. */
  instruction?: string;
}

/** A state to start from instead of a seed's (replay of a log without a seed). */
export interface SimStateOverride {
  q: readonly number[];
  object?: readonly [number, number];
  target?: readonly [number, number];
}

/** Task status: success, failure and a shaped progress in [0, 1]. */
export interface SimStatus {
  success: boolean;
  failed: boolean;
  progress: number;
}

/** One robot + task scene inside one MuJoCo model/data pair. */
export interface RobotWorld {
  /** Geoms whose sliding friction the physics jitter scales. */
  readonly frictionGeoms: readonly number[];
  /** Loose objects whose mass and inertia the physics jitter scales. */
  readonly objectBodies: readonly number[];
  /** multi_push: the instruction and goal of the episode; null elsewhere. */
  readonly instruction: string | null;
  readonly goal: MultiPushGoal | null;
  /** After mj_resetData and the jitter: the start state of `seed` (qpos, ctrl, mocap), then mj_forward. */
  reset(seed: number): void;
  setState(state: SimStateOverride): void;
  /** Writes clamped joint targets (rlft's joint order and units) into the actuators. */
  command(q: readonly number[]): void;
  jointState(): { position: number[]; velocity: number[]; effort: number[] };
  eePosition(): [number, number, number];
  targetPosition(): [number, number, number];
  cubePosition(): [number, number, number];
  pegPosition(): [number, number, number];
  observation(): { names: string[]; values: number[] };
  status(): SimStatus;
}

/** A simulated robot. */
export interface SimRobot {
  readonly name: SimRobotName;
  /** Command/state order, limits and units. */
  readonly jointNames: readonly string[];
  readonly jointLower: readonly number[];
  readonly jointUpper: readonly number[];
  readonly units: readonly string[];
  /** The physics step when the caller gives none, for a control rate. */
  defaultPhysicsDt(controlHz: number): number;
  /** Writes the scene (and any mesh files) into MuJoCo's virtual FS and compiles it. */
  loadModel(mj: MainModule, task: TaskSpec, physicsDt: number): MjModel;
  bind(ctx: SimContext): RobotWorld;
}
