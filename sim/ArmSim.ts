/** The MuJoCo simulation of `rlft_arm5` behind the small API the driver nodes code against. */
import type { MainModule, MjData, MjModel } from "mujoco-js";
import { ARM_SPEC } from "./armSpec.ts";
import { loadMujoco } from "./loadMujoco.ts";
import { createRng } from "./rng.ts";
import { sampleEpisode } from "./sampleEpisode.ts";
import { sceneXml } from "./scene.ts";
import { TASKS, type TaskName, type TaskSpec } from "./tasks.ts";
import { goalFromInstruction, type CubeColor, type MultiPushGoal, type TargetSide } from "./multiPush.ts";

/** Options of {@link ArmSim.create}. */
export interface ArmSimOptions {
  task: TaskName;
  /** Physics step in seconds (default 0.002, the contract's value). */
  physicsDt?: number;
  /** Control ticks per second (default 10); one stepControl() advances 1/controlHz seconds. */
  controlHz?: number;
  /** Jitter cube/table friction and cube mass from the reset seed (domain randomisation); default false. */
  randomizePhysics?: boolean;
  /**
   * multi_push: a fixed instruction for every episode (e.g. from `rlft eval --instruction`); the goal is read from
   * it, and parts it does not name (colour, side) come from the seed. Default: the seed's own instruction.
   */
  instruction?: string;
}

/** Where the sim keeps each quantity inside MuJoCo's flat arrays, looked up by name once. */
interface Layout {
  armQpos: number[];
  armDof: number[];
  fingerQpos: [number, number];
  fingerDof: [number, number];
  eeSite: number;
  targetMocap: number;
  cubeQpos: number;
  cubeBody: number;
  pegQpos: number;
  pegBody: number;
  frictionGeoms: number[];
  /** Loose objects whose mass the physics jitter scales: the cube(s) or the peg. */
  objectBodies: number[];
  /** multi_push: both cubes and both targets; cubeQpos/cubeBody/targetMocap above point at the instructed pair. */
  multi: { cubeQpos: Record<CubeColor, number>; cubeBody: Record<CubeColor, number>; targetMocap: Record<TargetSide, number> } | null;
}

let sceneCounter = 0;

/** One simulated arm + task scene, stepped synchronously at the control rate. */
export class ArmSim {
  /** Task description, with controlHz as configured. */
  readonly task: TaskSpec;
  /** Command/state order: the 4 arm joints, then the gripper opening. */
  readonly jointNames: readonly string[] = ARM_SPEC.jointNames;
  /** Lower command limits (rad, gripper: m). */
  readonly jointLower: readonly number[] = ARM_SPEC.jointLower;
  /** Upper command limits (rad, gripper: m). */
  readonly jointUpper: readonly number[] = ARM_SPEC.jointUpper;
  /** Raw MuJoCo model (the cameras render it: sim/render/). */
  readonly model: MjModel;
  /** Raw MuJoCo data (the cameras render it). */
  readonly data: MjData;
  /** The MuJoCo module the handles belong to. */
  readonly mujoco: MainModule;
  readonly #substeps: number;
  readonly #randomize: boolean;
  readonly #layout: Layout;
  readonly #nominalFriction: number[];
  readonly #nominalMass: number[];
  readonly #nominalInertia: number[][];
  readonly #fixedInstruction: string | undefined;
  #instruction: string | null = null;
  #goal: MultiPushGoal | null = null;
  #initialDistance = 1;
  #closed = false;

  /** Loads the MuJoCo module (once per process) and builds the scene; call reset() before stepping. */
  static async create(opts: ArmSimOptions): Promise<ArmSim> {
    if (!(opts.task in TASKS)) {
      throw new Error(`ArmSim: unknown task "${String(opts.task)}"; expected one of ${Object.keys(TASKS).join(", ")}`);
    }
    const mj = await loadMujoco();
    const physicsDt = opts.physicsDt ?? 0.002;
    const path = `/working/rlft_arm5_${process.pid}_${sceneCounter++}.xml`;
    mj.FS.writeFile(path, sceneXml({ task: opts.task, physicsDt }));
    let model: MjModel;
    try {
      model = mj.MjModel.loadFromXML(path);
    } finally {
      mj.FS.unlink(path);
    }
    const sim = new ArmSim(mj, model, new mj.MjData(model), opts, physicsDt);
    sim.reset(0);
    return sim;
  }

  private constructor(mj: MainModule, model: MjModel, data: MjData, opts: ArmSimOptions, physicsDt: number) {
    const controlHz = opts.controlHz ?? 10;
    const substeps = Math.round(1 / controlHz / physicsDt);
    if (!(substeps >= 1) || Math.abs(substeps * physicsDt * controlHz - 1) > 1e-6) {
      throw new Error(`ArmSim: control period 1/${controlHz} s must be a whole number of physics steps of ${physicsDt} s`);
    }
    this.mujoco = mj;
    this.model = model;
    this.data = data;
    this.task = { ...TASKS[opts.task], controlHz };
    this.#substeps = substeps;
    this.#randomize = opts.randomizePhysics ?? false;
    this.#fixedInstruction = opts.instruction;
    this.#layout = this.#lookUp();
    const fr = model.geom_friction as Float64Array;
    this.#nominalFriction = this.#layout.frictionGeoms.map((g) => fr[3 * g]);
    const bodies = this.#layout.objectBodies;
    this.#nominalMass = bodies.map((b) => (model.body_mass as Float64Array)[b]);
    this.#nominalInertia = bodies.map((b) => Array.from((model.body_inertia as Float64Array).subarray(3 * b, 3 * b + 3)));
  }

  #lookUp(): Layout {
    const mj = this.mujoco;
    const m = this.model;
    const id = (type: number, name: string, required = true): number => {
      const i = mj.mj_name2id(m, type, name);
      if (i < 0 && required) throw new Error(`ArmSim: scene has no ${name}; sceneXml() and ArmSim are out of step`);
      return i;
    };
    const JOINT = mj.mjtObj.mjOBJ_JOINT.value;
    const qadr = m.jnt_qposadr as Int32Array;
    const dadr = m.jnt_dofadr as Int32Array;
    const joint = (n: string): number => id(JOINT, n);
    const arm = ARM_SPEC.jointNames.slice(0, 4).map(joint);
    const fingers = ["finger_left", "finger_right"].map(joint);
    const cubeJoint = id(JOINT, "cube", false);
    const pegJoint = id(JOINT, "peg", false);
    const BODY = mj.mjtObj.mjOBJ_BODY.value;
    const isMulti = this.task.name === "multi_push";
    const mocap = (name: string): number => (m.body_mocapid as Int32Array)[id(BODY, name)];
    const multi = isMulti
      ? {
          cubeQpos: { red: qadr[id(JOINT, "cube_red")], blue: qadr[id(JOINT, "cube_blue")] },
          cubeBody: { red: id(BODY, "cube_red"), blue: id(BODY, "cube_blue") },
          targetMocap: { left: mocap("target_left"), right: mocap("target_right") },
        }
      : null;
    const targetBody = id(BODY, isMulti ? "target_left" : "target");
    const GEOM = mj.mjtObj.mjOBJ_GEOM.value;
    const cubeBody = id(BODY, "cube", false);
    const pegBody = id(BODY, "peg", false);
    return {
      armQpos: arm.map((j) => qadr[j]),
      armDof: arm.map((j) => dadr[j]),
      fingerQpos: [qadr[fingers[0]], qadr[fingers[1]]],
      fingerDof: [dadr[fingers[0]], dadr[fingers[1]]],
      eeSite: id(mj.mjtObj.mjOBJ_SITE.value, "ee"),
      targetMocap: (m.body_mocapid as Int32Array)[targetBody],
      cubeQpos: multi ? multi.cubeQpos.red : cubeJoint >= 0 ? qadr[cubeJoint] : -1,
      cubeBody: multi ? multi.cubeBody.red : cubeBody,
      pegQpos: pegJoint >= 0 ? qadr[pegJoint] : -1,
      pegBody,
      frictionGeoms: ["table", "cube", "peg", "cube_red", "cube_blue"].map((n) => id(GEOM, n, false)).filter((g) => g >= 0),
      objectBodies: multi ? [multi.cubeBody.red, multi.cubeBody.blue] : [cubeBody, pegBody].filter((b) => b >= 0),
      multi,
    };
  }

  /** multi_push: the episode's instruction (the seed's, or the fixed one); null for the other tasks. */
  get instruction(): string | null {
    return this.#instruction;
  }

  /** multi_push: which cube goes to which target this episode; null for the other tasks. */
  get goal(): MultiPushGoal | null {
    return this.#goal;
  }

  /** Puts arm, cube and target in the random start state of `seed` (same seed → same state). */
  reset(seed: number): void {
    this.#assertOpen();
    const mj = this.mujoco;
    const L = this.#layout;
    mj.mj_resetData(this.model, this.data);
    this.#applyPhysicsJitter(seed);
    const init = sampleEpisode(this.task.name, seed);
    const qpos = this.data.qpos as Float64Array;
    L.armQpos.forEach((a, i) => (qpos[a] = init.q[i]));
    qpos[L.fingerQpos[0]] = qpos[L.fingerQpos[1]] = init.q[4] / 2;
    const placeCube = (c: { x: number; y: number; yaw: number }, adr: number): void =>
      qpos.set([c.x, c.y, ARM_SPEC.cubeHalf, Math.cos(c.yaw / 2), 0, 0, Math.sin(c.yaw / 2)], adr);
    if (init.multi && L.multi) {
      const M = L.multi;
      const fixed = this.#fixedInstruction;
      this.#goal = fixed === undefined ? init.multi.goal : goalFromInstruction(fixed, init.multi.goal).goal;
      this.#instruction = fixed ?? init.multi.instruction;
      for (const color of ["red", "blue"] as const) placeCube(init.multi.cubes[color], M.cubeQpos[color]);
      for (const side of ["left", "right"] as const) (this.data.mocap_pos as Float64Array).set(init.multi.targets[side], 3 * M.targetMocap[side]);
      L.cubeQpos = M.cubeQpos[this.#goal.color];
      L.cubeBody = M.cubeBody[this.#goal.color];
      L.targetMocap = M.targetMocap[this.#goal.side];
    } else if (init.cube && L.cubeQpos >= 0) placeCube(init.cube, L.cubeQpos);
    if (!init.multi) (this.data.mocap_pos as Float64Array).set(init.target, 3 * L.targetMocap);
    const yaw = init.targetYaw ?? 0;
    (this.data.mocap_quat as Float64Array).set([Math.cos(yaw / 2), 0, 0, Math.sin(yaw / 2)], 4 * L.targetMocap);
    (this.data.ctrl as Float64Array).set(init.q);
    if (L.pegQpos >= 0) this.#placePegInHand(init.q);
    mj.mj_forward(this.model, this.data);
    this.#initialDistance = Math.max(this.#taskDistance(), 1e-6);
  }

  /**
   * peg_insert: fingers opened to the peg's width around it, peg centre at the fingertips, sides
   * parallel to the finger faces. The gripper command (init.q[4]) is below the width, so the servo squeezes.
   */
  #placePegInHand(q: readonly number[]): void {
    const L = this.#layout;
    const qpos = this.data.qpos as Float64Array;
    qpos[L.fingerQpos[0]] = qpos[L.fingerQpos[1]] = ARM_SPEC.peg.half;
    this.mujoco.mj_kinematics(this.model, this.data);
    const ee = this.eePosition();
    // Hand orientation = Rz(pan)·Ry(lift + elbow + wrist): the pitch joints all turn about the arm plane's y.
    const p = q[0] / 2;
    const t = (q[1] + q[2] + q[3]) / 2;
    const quat = [Math.cos(p) * Math.cos(t), -Math.sin(p) * Math.sin(t), Math.cos(p) * Math.sin(t), Math.sin(p) * Math.cos(t)];
    qpos.set([...ee, ...quat], L.pegQpos);
  }

  #applyPhysicsJitter(seed: number): void {
    const L = this.#layout;
    const fr = this.model.geom_friction as Float64Array;
    // A separate stream keeps the start state identical with and without randomisation.
    const rng = createRng(seed ^ 0x5bd1e995);
    const jitter = (lo: number, hi: number): number => (this.#randomize ? rng.uniform(lo, hi) : 1);
    L.frictionGeoms.forEach((g, i) => (fr[3 * g] = this.#nominalFriction[i] * jitter(0.7, 1.3)));
    L.objectBodies.forEach((body, i) => {
      const k = jitter(0.7, 1.5);
      (this.model.body_mass as Float64Array)[body] = this.#nominalMass[i] * k;
      (this.model.body_inertia as Float64Array).set(this.#nominalInertia[i].map((v) => v * k), 3 * body);
    });
  }

  /**
   * Overwrites the state after reset(): joint positions (jointNames order; the command is set to them too), the
   * loose object's x/y (cube or peg, height and orientation kept) and the target's x/y. Replay uses it to start from
   * a recorded observation when a log has no seed (docs/data.md).
   */
  setState(state: { q: readonly number[]; object?: readonly [number, number]; target?: readonly [number, number] }): void {
    this.#assertOpen();
    const L = this.#layout;
    const qpos = this.data.qpos as Float64Array;
    if (state.q.length !== this.jointNames.length) throw new Error(`ArmSim.setState: expected ${this.jointNames.length} joint positions (${this.jointNames.join(", ")}), got ${state.q.length}`);
    L.armQpos.forEach((a, i) => (qpos[a] = state.q[i]));
    qpos[L.fingerQpos[0]] = qpos[L.fingerQpos[1]] = state.q[4] / 2;
    (this.data.ctrl as Float64Array).set(state.q);
    const obj = L.cubeQpos >= 0 ? L.cubeQpos : L.pegQpos;
    if (state.object && obj >= 0) qpos.set(state.object, obj);
    if (state.target) (this.data.mocap_pos as Float64Array).set(state.target, 3 * L.targetMocap);
    (this.data.qvel as Float64Array).fill(0);
    this.mujoco.mj_forward(this.model, this.data);
    this.#initialDistance = Math.max(this.#taskDistance(), 1e-6);
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
    (this.data.ctrl as Float64Array).set(out);
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

  /** Joint positions, velocities and actuator efforts in jointNames order (gripper: opening, m). */
  jointState(): { position: number[]; velocity: number[]; effort: number[] } {
    this.#assertOpen();
    const L = this.#layout;
    const qpos = this.data.qpos as Float64Array;
    const qvel = this.data.qvel as Float64Array;
    const force = this.data.actuator_force as Float64Array;
    return {
      position: [...L.armQpos.map((a) => qpos[a]), qpos[L.fingerQpos[0]] + qpos[L.fingerQpos[1]]],
      velocity: [...L.armDof.map((a) => qvel[a]), qvel[L.fingerDof[0]] + qvel[L.fingerDof[1]]],
      effort: Array.from(force.subarray(0, 5)),
    };
  }

  /** World position of the `ee` site (between the finger tips). */
  eePosition(): [number, number, number] {
    this.#assertOpen();
    const x = this.data.site_xpos as Float64Array;
    const i = 3 * this.#layout.eeSite;
    return [x[i], x[i + 1], x[i + 2]];
  }

  /** Target centre (the disc centre on the table for push_cube, the hole centre on the table for peg_insert). */
  targetPosition(): [number, number, number] {
    const p = this.data.mocap_pos as Float64Array;
    const i = 3 * this.#layout.targetMocap;
    return [p[i], p[i + 1], p[i + 2]];
  }

  /** Cube centre (push_cube; multi_push: the instructed cube; NaN otherwise). */
  cubePosition(): [number, number, number] {
    const c = this.#layout.cubeQpos;
    if (c < 0) return [NaN, NaN, NaN];
    const q = this.data.qpos as Float64Array;
    return [q[c], q[c + 1], q[c + 2]];
  }

  /** Peg centre (peg_insert only; NaN otherwise). */
  pegPosition(): [number, number, number] {
    const c = this.#layout.pegQpos;
    if (c < 0) return [NaN, NaN, NaN];
    const q = this.data.qpos as Float64Array;
    return [q[c], q[c + 1], q[c + 2]];
  }

  /** Centre of the peg's bottom face (it leads into the hole), from the peg's orientation (peg_insert only). */
  #pegBottom(): [number, number, number] {
    const c = this.pegPosition();
    const b = this.#layout.pegBody;
    if (b < 0) return c;
    const m = (this.data.xmat as Float64Array).subarray(9 * b, 9 * b + 9);
    const h = ARM_SPEC.peg.halfLength;
    // Column 3 of the row-major rotation is the peg's long axis; it starts along the tool, pointing down,
    // so the leading (bottom) face is at +halfLength on it.
    return [c[0] + h * m[2], c[1] + h * m[5], c[2] + h * m[8]];
  }

  /** The observation vector, names exactly as in docs/contracts.md for the task. */
  observation(): { names: string[]; values: number[] } {
    this.#assertOpen();
    const q = this.jointState().position;
    const ee = this.eePosition();
    const t = this.targetPosition();
    let values: number[];
    switch (this.task.name) {
      case "push_cube":
        values = [...q, ...ee, this.cubePosition()[0], this.cubePosition()[1], t[0], t[1]];
        break;
      case "peg_insert":
        values = [...q, ...ee, ...this.pegPosition(), t[0], t[1]];
        break;
      case "reach":
        values = [...q, ...ee, ...t];
        break;
      case "multi_push": {
        const M = this.#layout.multi!;
        const qp = this.data.qpos as Float64Array;
        const mp = this.data.mocap_pos as Float64Array;
        const xy = (adr: number): number[] => [qp[adr], qp[adr + 1]];
        const txy = (m: number): number[] => [mp[3 * m], mp[3 * m + 1]];
        values = [...q, ...ee, ...this.cubePosition().slice(0, 2), t[0], t[1], ...xy(M.cubeQpos.red), ...xy(M.cubeQpos.blue), ...txy(M.targetMocap.left), ...txy(M.targetMocap.right)];
        break;
      }
    }
    return { names: [...this.task.observationNames], values };
  }

  /** Success detector, failure detector and a shaped progress in [0, 1] (1 − distance / initial distance). */
  status(): { success: boolean; failed: boolean; progress: number } {
    this.#assertOpen();
    const d = this.#taskDistance();
    let failed = !Number.isFinite(d);
    if (this.task.name === "push_cube" || this.task.name === "multi_push") {
      const t = ARM_SPEC.table;
      const M = this.#layout.multi;
      const q = this.data.qpos as Float64Array;
      // Off the table (or sunk through it after a blow-up): the episode cannot be won any more (either cube for multi_push).
      for (const c of M ? [M.cubeQpos.red, M.cubeQpos.blue] : [this.#layout.cubeQpos]) {
        const [x, y, z] = [q[c], q[c + 1], q[c + 2]];
        failed ||= z < 0 || x < t.xMin || x > t.xMax || Math.abs(y) > t.yHalf;
      }
    }
    // Goal reached: within successRadius of the target; for the peg, inside the hole and deep enough.
    let reached = d < this.task.successRadius;
    if (this.task.name === "peg_insert") {
      const [x, y, z] = this.pegPosition();
      const t = ARM_SPEC.table;
      const ee = this.eePosition();
      const bottom = this.#pegBottom();
      const hole = this.targetPosition();
      const p = ARM_SPEC.peg;
      reached = bottom[2] <= p.height - p.insertDepth && Math.hypot(bottom[0] - hole[0], bottom[1] - hole[1]) < this.task.successRadius;
      // Dropped or knocked out of the fingers (its centre starts at the fingertips), or off the table.
      const lost = Math.hypot(x - ee[0], y - ee[1], z - ee[2]) > 0.05;
      failed ||= !reached && (lost || z < 0 || x < t.xMin || x > t.xMax || Math.abs(y) > t.yHalf);
    }
    const success = !failed && reached;
    const progress = success ? 1 : failed ? 0 : Math.min(1, Math.max(0, 1 - d / this.#initialDistance));
    return { success, failed, progress };
  }

  /** Frees the MuJoCo model and data; the instance is unusable afterwards. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.data.delete();
    this.model.delete();
  }

  #taskDistance(): number {
    const t = this.targetPosition();
    if (this.task.name === "peg_insert") {
      // The peg's bottom face to where it is when inserted (hole axis, insertDepth below the fixture top).
      const b = this.#pegBottom();
      const p = ARM_SPEC.peg;
      return Math.hypot(b[0] - t[0], b[1] - t[1], b[2] - (p.height - p.insertDepth));
    }
    if (this.task.name === "push_cube" || this.task.name === "multi_push") {
      const c = this.cubePosition();
      return Math.hypot(c[0] - t[0], c[1] - t[1]);
    }
    const e = this.eePosition();
    return Math.hypot(e[0] - t[0], e[1] - t[1], e[2] - t[2]);
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error("ArmSim: used after close(); create a new ArmSim");
  }
}
