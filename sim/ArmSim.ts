/**
 * A simulated arm behind the small API the driver nodes code against: `rlft_arm5` (sim/arm5/) or the SO-101
 * (sim/so101/), chosen by `robot`. This file is the robot-generic core (loading, stepping, command checks,
 * physics jitter, lifecycle); what is robot- or task-specific lives in the robot's world (sim/simRobot.ts).
 */
import type { MainModule, MjData, MjModel } from "mujoco-js";
import { loadMujoco } from "./loadMujoco.ts";
import { createRng } from "./rng.ts";
import { episodeSteps, taskSpec, type SimRobotName, type TaskName, type TaskSpec } from "./tasks.ts";
import type { MultiPushGoal } from "./multiPush.ts";
import type { RobotWorld, SimRobot, SimStateOverride, SimStatus } from "./simRobot.ts";
import { ARM5_ROBOT } from "./arm5/Arm5World.ts";
import { SO101_ROBOT } from "./so101/So101World.ts";

/** Options of {@link ArmSim.create}. */
export interface ArmSimOptions {
  task: TaskName;
  /** Which simulated robot (default rlft_arm5); a launch file's `robot:`. */
  robot?: SimRobotName;
  /** Physics step in seconds (default: 0.002 for rlft_arm5; for the SO-101 Menagerie's 5 ms, or the largest step below it that divides the control period). */
  physicsDt?: number;
  /** Control ticks per second (default 10); one stepControl() advances 1/controlHz seconds. */
  controlHz?: number;
  /** Jitter object/table friction and object mass from the reset seed (domain randomisation); default false. */
  randomizePhysics?: boolean;
  /**
   * multi_push: a fixed instruction for every episode (e.g. from `rlft eval --instruction`); the goal is read from
   * it, and parts it does not name (colour, side) come from the seed. Default: the seed's own instruction.
   */
  instruction?: string;
}

/** The simulated robots by name. */
export const SIM_ROBOT_MODELS: Readonly<Record<SimRobotName, SimRobot>> = { rlft_arm5: ARM5_ROBOT, so101: SO101_ROBOT };

/** One simulated arm + task scene, stepped synchronously at the control rate. */
export class ArmSim {
  /** Task description, with controlHz (and maxSteps, for tasks timed in seconds) as configured. */
  readonly task: TaskSpec;
  /** The simulated robot. */
  readonly robot: SimRobotName;
  /** Command/state order (rlft_arm5: 4 arm joints + gripper opening; so101: 6 joints, launch/so100.yaml's). */
  readonly jointNames: readonly string[];
  /** Lower command limits (rad; the rlft_arm5 gripper: m). */
  readonly jointLower: readonly number[];
  /** Upper command limits. */
  readonly jointUpper: readonly number[];
  /** Unit of each joint ("rad" or "m"). */
  readonly jointUnits: readonly string[];
  /** Raw MuJoCo model (for cameras). */
  readonly model: MjModel;
  /** Raw MuJoCo data (for cameras). */
  readonly data: MjData;
  /** The MuJoCo module the handles belong to (cameras call mj_multiRay through it). */
  readonly mujoco: MainModule;
  readonly #substeps: number;
  readonly #randomize: boolean;
  readonly #world: RobotWorld;
  readonly #nominalFriction: number[];
  readonly #nominalMass: number[];
  readonly #nominalInertia: number[][];
  #closed = false;

  /** Loads the MuJoCo module (once per process) and builds the scene; call reset() before stepping. */
  static async create(opts: ArmSimOptions): Promise<ArmSim> {
    const spec = taskSpec(opts.robot, opts.task); // names the robots and tasks that exist when these do not
    const robot = SIM_ROBOT_MODELS[spec.robot];
    const controlHz = opts.controlHz ?? 10;
    const physicsDt = opts.physicsDt ?? robot.defaultPhysicsDt(controlHz);
    const substeps = Math.round(1 / controlHz / physicsDt);
    if (!(substeps >= 1) || Math.abs(substeps * physicsDt * controlHz - 1) > 1e-6) {
      throw new Error(`ArmSim: control period 1/${controlHz} s must be a whole number of physics steps of ${physicsDt} s`);
    }
    const task: TaskSpec = { ...spec, controlHz, maxSteps: episodeSteps(spec, controlHz) };
    const mj = await loadMujoco();
    const model = robot.loadModel(mj, task, physicsDt);
    const data = new mj.MjData(model);
    const sim = new ArmSim(mj, model, data, robot, task, substeps, opts);
    sim.reset(0);
    return sim;
  }

  private constructor(mj: MainModule, model: MjModel, data: MjData, robot: SimRobot, task: TaskSpec, substeps: number, opts: ArmSimOptions) {
    this.mujoco = mj;
    this.model = model;
    this.data = data;
    this.task = task;
    this.robot = robot.name;
    this.jointNames = robot.jointNames;
    this.jointLower = robot.jointLower;
    this.jointUpper = robot.jointUpper;
    this.jointUnits = robot.units;
    this.#substeps = substeps;
    this.#randomize = opts.randomizePhysics ?? false;
    this.#world = robot.bind({ mj, model, data, task, instruction: opts.instruction });
    const fr = model.geom_friction as Float64Array;
    this.#nominalFriction = this.#world.frictionGeoms.map((g) => fr[3 * g]);
    const bodies = this.#world.objectBodies;
    this.#nominalMass = bodies.map((b) => (model.body_mass as Float64Array)[b]);
    this.#nominalInertia = bodies.map((b) => Array.from((model.body_inertia as Float64Array).subarray(3 * b, 3 * b + 3)));
  }

  /** multi_push: the episode's instruction (the seed's, or the fixed one); null for the other tasks. */
  get instruction(): string | null {
    return this.#world.instruction;
  }

  /** multi_push: which cube goes to which target this episode; null for the other tasks. */
  get goal(): MultiPushGoal | null {
    return this.#world.goal;
  }

  /** Puts arm, objects and target in the random start state of `seed` (same seed → same state). */
  reset(seed: number): void {
    this.#assertOpen();
    this.mujoco.mj_resetData(this.model, this.data);
    this.#applyPhysicsJitter(seed);
    this.#world.reset(seed);
  }

  #applyPhysicsJitter(seed: number): void {
    const w = this.#world;
    const fr = this.model.geom_friction as Float64Array;
    // A separate stream keeps the start state identical with and without randomisation.
    const rng = createRng(seed ^ 0x5bd1e995);
    const jitter = (lo: number, hi: number): number => (this.#randomize ? rng.uniform(lo, hi) : 1);
    w.frictionGeoms.forEach((g, i) => (fr[3 * g] = this.#nominalFriction[i] * jitter(0.7, 1.3)));
    w.objectBodies.forEach((body, i) => {
      const k = jitter(0.7, 1.5);
      (this.model.body_mass as Float64Array)[body] = this.#nominalMass[i] * k;
      (this.model.body_inertia as Float64Array).set(this.#nominalInertia[i].map((v) => v * k), 3 * body);
    });
  }

  /**
   * Overwrites the state after reset(): joint positions (jointNames order; the command is set to them too), the
   * loose object's x/y (height and orientation kept) and the target's x/y. Replay uses it to start from
   * a recorded observation when a log has no seed (docs/data.md).
   */
  setState(state: SimStateOverride): void {
    this.#assertOpen();
    if (state.q.length !== this.jointNames.length) throw new Error(`ArmSim.setState: expected ${this.jointNames.length} joint positions (${this.jointNames.join(", ")}), got ${state.q.length}`);
    this.#world.setState(state);
  }

  /**
   * Sets absolute joint targets (jointNames order), clamped to the joint limits.
   * Returns the targets actually applied, so callers can log what the clamp changed.
   */
  setCommand(positions: ArrayLike<number>): number[] {
    this.#assertOpen();
    const n = this.jointNames.length;
    if (positions == null || positions.length !== n) {
      throw new Error(`ArmSim.setCommand: expected ${n} positions (${this.jointNames.join(", ")}), got ${positions?.length ?? positions}`);
    }
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      const v = positions[i];
      if (typeof v !== "number" || !Number.isFinite(v)) {
        throw new Error(`ArmSim.setCommand: position of ${this.jointNames[i]} (index ${i}) is ${v}; expected a finite number`);
      }
      out[i] = Math.min(this.jointUpper[i], Math.max(this.jointLower[i], v));
    }
    this.#world.command(out);
    return out;
  }

  /** Advances physics by one control period (physicsDt × substeps). */
  stepControl(): void {
    this.#assertOpen();
    for (let i = 0; i < this.#substeps; i++) this.mujoco.mj_step(this.model, this.data);
  }

  /** Simulated seconds since the last reset. */
  get time(): number {
    return this.data.time;
  }

  /** Joint positions, velocities and actuator efforts in jointNames order and units. */
  jointState(): { position: number[]; velocity: number[]; effort: number[] } {
    this.#assertOpen();
    return this.#world.jointState();
  }

  /** World position of the end-effector site (rlft_arm5: `ee`, between the finger tips; so101: `gripperframe`). */
  eePosition(): [number, number, number] {
    this.#assertOpen();
    return this.#world.eePosition();
  }

  /** Target centre (a disc centre on the table, the reach point, or the hole centre on the table for peg_insert). */
  targetPosition(): [number, number, number] {
    return this.#world.targetPosition();
  }

  /** Cube centre (push_cube, pick_place; multi_push: the instructed cube; NaN otherwise). */
  cubePosition(): [number, number, number] {
    return this.#world.cubePosition();
  }

  /** Peg centre (peg_insert only; NaN otherwise). */
  pegPosition(): [number, number, number] {
    return this.#world.pegPosition();
  }

  /** The observation vector, names exactly as the task spec's (docs/contracts.md). */
  observation(): { names: string[]; values: number[] } {
    this.#assertOpen();
    return this.#world.observation();
  }

  /** Success detector, failure detector and a shaped progress in [0, 1] (1 − distance / initial distance). */
  status(): SimStatus {
    this.#assertOpen();
    return this.#world.status();
  }

  /** Frees the MuJoCo model and data; the instance is unusable afterwards. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.data.delete();
    this.model.delete();
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error("ArmSim: used after close(); create a new ArmSim");
  }
}
