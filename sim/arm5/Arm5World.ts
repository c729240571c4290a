/** `rlft_arm5` in the sim: its generated MJCF scene and the per-task world (layout, reset, observation, status). */
import type { MainModule, MjModel } from "mujoco-js";
import { ARM_SPEC } from "../armSpec.ts";
import { sampleEpisode } from "../sampleEpisode.ts";
import { sceneXml } from "../scene.ts";
import type { Arm5TaskName, TaskSpec } from "../tasks.ts";
import { setUpMultiPush, type CubeColor, type MultiPushGoal, type TargetSide } from "../multiPush.ts";
import type { RobotWorld, SimContext, SimRobot, SimStateOverride, SimStatus } from "../simRobot.ts";
import { compileXml, idLookup, vec3 } from "../mjUtil.ts";

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

/** The made-up 5-joint arm with a parallel gripper (sim/armSpec.ts, sim/scene.ts). */
export const ARM5_ROBOT: SimRobot = {
  name: "rlft_arm5",
  jointNames: ARM_SPEC.jointNames,
  jointLower: ARM_SPEC.jointLower,
  jointUpper: ARM_SPEC.jointUpper,
  units: ["rad", "rad", "rad", "rad", "m"],
  // The contract's 2 ms step.
  defaultPhysicsDt: () => 0.002,
  loadModel: (mj: MainModule, task: TaskSpec, physicsDt: number): MjModel => compileXml(mj, "/working", "rlft_arm5", sceneXml({ task: task.name as Arm5TaskName, physicsDt })),
  bind: (ctx) => new Arm5World(ctx),
};

/** One rlft_arm5 scene. */
class Arm5World implements RobotWorld {
  readonly frictionGeoms: readonly number[];
  readonly objectBodies: readonly number[];
  readonly #ctx: SimContext;
  readonly #layout: Layout;
  #instruction: string | null = null;
  #goal: MultiPushGoal | null = null;
  #initialDistance = 1;

  constructor(ctx: SimContext) {
    this.#ctx = ctx;
    this.#layout = this.#lookUp();
    this.frictionGeoms = this.#layout.frictionGeoms;
    this.objectBodies = this.#layout.objectBodies;
  }


  get instruction(): string | null {
    return this.#instruction;
  }

  get goal(): MultiPushGoal | null {
    return this.#goal;
  }

  #lookUp(): Layout {
    const { mj, model: m, task } = this.#ctx;
    const id = idLookup(mj, m, (name) => `ArmSim: scene has no ${name}; sceneXml() and ArmSim are out of step`);
    const JOINT = mj.mjtObj.mjOBJ_JOINT.value;
    const qadr = m.jnt_qposadr as Int32Array;
    const dadr = m.jnt_dofadr as Int32Array;
    const joint = (n: string): number => id(JOINT, n);
    const arm = ARM_SPEC.jointNames.slice(0, 4).map(joint);
    const fingers = ["finger_left", "finger_right"].map(joint);
    const cubeJoint = id(JOINT, "cube", false);
    const pegJoint = id(JOINT, "peg", false);
    const BODY = mj.mjtObj.mjOBJ_BODY.value;
    const isMulti = task.name === "multi_push";
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

  reset(seed: number): void {
    const { mj, model, data, task } = this.#ctx;
    const L = this.#layout;
    const init = sampleEpisode(task.name as Arm5TaskName, seed);
    const qpos = data.qpos as Float64Array;
    L.armQpos.forEach((a, i) => (qpos[a] = init.q[i]));
    qpos[L.fingerQpos[0]] = qpos[L.fingerQpos[1]] = init.q[4] / 2;
    const placeCube = (c: { x: number; y: number; yaw: number }, adr: number): void =>
      qpos.set([c.x, c.y, ARM_SPEC.cubeHalf, Math.cos(c.yaw / 2), 0, 0, Math.sin(c.yaw / 2)], adr);
    if (init.multi && L.multi) {
      const e = setUpMultiPush(init.multi, this.#ctx.instruction, L.multi, data.mocap_pos as Float64Array, placeCube);
      [this.#goal, this.#instruction, L.cubeQpos, L.cubeBody, L.targetMocap] = [e.goal, e.instruction, e.cubeQpos, e.cubeBody, e.targetMocap];
    } else if (init.cube && L.cubeQpos >= 0) placeCube(init.cube, L.cubeQpos);
    if (!init.multi) (data.mocap_pos as Float64Array).set(init.target, 3 * L.targetMocap);
    const yaw = init.targetYaw ?? 0;
    (data.mocap_quat as Float64Array).set([Math.cos(yaw / 2), 0, 0, Math.sin(yaw / 2)], 4 * L.targetMocap);
    (data.ctrl as Float64Array).set(init.q);
    if (L.pegQpos >= 0) this.#placePegInHand(init.q);
    mj.mj_forward(model, data);
    this.#initialDistance = Math.max(this.#taskDistance(), 1e-6);
  }

  /**
   * peg_insert: fingers opened to the peg's width around it, peg centre at the fingertips, sides
   * parallel to the finger faces. The gripper command (init.q[4]) is below the width, so the servo squeezes.
   */
  #placePegInHand(q: readonly number[]): void {
    const L = this.#layout;
    const qpos = this.#ctx.data.qpos as Float64Array;
    qpos[L.fingerQpos[0]] = qpos[L.fingerQpos[1]] = ARM_SPEC.peg.half;
    this.#ctx.mj.mj_kinematics(this.#ctx.model, this.#ctx.data);
    const ee = this.eePosition();
    // Hand orientation = Rz(pan)·Ry(lift + elbow + wrist): the pitch joints all turn about the arm plane's y.
    const p = q[0] / 2;
    const t = (q[1] + q[2] + q[3]) / 2;
    const quat = [Math.cos(p) * Math.cos(t), -Math.sin(p) * Math.sin(t), Math.cos(p) * Math.sin(t), Math.sin(p) * Math.cos(t)];
    qpos.set([...ee, ...quat], L.pegQpos);
  }

  setState(state: SimStateOverride): void {
    const { mj, model, data } = this.#ctx;
    const L = this.#layout;
    const qpos = data.qpos as Float64Array;
    L.armQpos.forEach((a, i) => (qpos[a] = state.q[i]));
    qpos[L.fingerQpos[0]] = qpos[L.fingerQpos[1]] = state.q[4] / 2;
    (data.ctrl as Float64Array).set(state.q);
    const obj = L.cubeQpos >= 0 ? L.cubeQpos : L.pegQpos;
    if (state.object && obj >= 0) qpos.set(state.object, obj);
    if (state.target) (data.mocap_pos as Float64Array).set(state.target, 3 * L.targetMocap);
    (data.qvel as Float64Array).fill(0);
    mj.mj_forward(model, data);
    this.#initialDistance = Math.max(this.#taskDistance(), 1e-6);
  }

  command(q: readonly number[]): void {
    (this.#ctx.data.ctrl as Float64Array).set(q);
  }

  jointState(): { position: number[]; velocity: number[]; effort: number[] } {
    const L = this.#layout;
    const { data } = this.#ctx;
    const qpos = data.qpos as Float64Array;
    const qvel = data.qvel as Float64Array;
    const force = data.actuator_force as Float64Array;
    return {
      position: [...L.armQpos.map((a) => qpos[a]), qpos[L.fingerQpos[0]] + qpos[L.fingerQpos[1]]],
      velocity: [...L.armDof.map((a) => qvel[a]), qvel[L.fingerDof[0]] + qvel[L.fingerDof[1]]],
      effort: Array.from(force.subarray(0, 5)),
    };
  }

  eePosition(): [number, number, number] {
    return vec3(this.#ctx.data.site_xpos, this.#layout.eeSite);
  }

  targetPosition(): [number, number, number] {
    return vec3(this.#ctx.data.mocap_pos, this.#layout.targetMocap);
  }

  cubePosition(): [number, number, number] {
    return this.#qposXyz(this.#layout.cubeQpos);
  }

  pegPosition(): [number, number, number] {
    return this.#qposXyz(this.#layout.pegQpos);
  }

  #qposXyz(c: number): [number, number, number] {
    if (c < 0) return [NaN, NaN, NaN];
    const q = this.#ctx.data.qpos as Float64Array;
    return [q[c], q[c + 1], q[c + 2]];
  }

  /** Centre of the peg's bottom face (it leads into the hole), from the peg's orientation (peg_insert only). */
  #pegBottom(): [number, number, number] {
    const c = this.pegPosition();
    const b = this.#layout.pegBody;
    if (b < 0) return c;
    const m = (this.#ctx.data.xmat as Float64Array).subarray(9 * b, 9 * b + 9);
    const h = ARM_SPEC.peg.halfLength;
    // Column 3 of the row-major rotation is the peg's long axis; it starts along the tool, pointing down,
    // so the leading (bottom) face is at +halfLength on it.
    return [c[0] + h * m[2], c[1] + h * m[5], c[2] + h * m[8]];
  }

  observation(): { names: string[]; values: number[] } {
    const task = this.#ctx.task;
    const q = this.jointState().position;
    const ee = this.eePosition();
    const t = this.targetPosition();
    let values: number[];
    switch (task.name) {
      case "push_cube":
        values = [...q, ...ee, this.cubePosition()[0], this.cubePosition()[1], t[0], t[1]];
        break;
      case "peg_insert":
        values = [...q, ...ee, ...this.pegPosition(), t[0], t[1]];
        break;
      case "multi_push": {
        const M = this.#layout.multi!;
        const qp = this.#ctx.data.qpos as Float64Array;
        const mp = this.#ctx.data.mocap_pos as Float64Array;
        const xy = (adr: number): number[] => [qp[adr], qp[adr + 1]];
        const txy = (m: number): number[] => [mp[3 * m], mp[3 * m + 1]];
        values = [...q, ...ee, ...this.cubePosition().slice(0, 2), t[0], t[1], ...xy(M.cubeQpos.red), ...xy(M.cubeQpos.blue), ...txy(M.targetMocap.left), ...txy(M.targetMocap.right)];
        break;
      }
      default:
        values = [...q, ...ee, ...t];
    }
    return { names: [...task.observationNames], values };
  }

  status(): SimStatus {
    const name = this.#ctx.task.name;
    const d = this.#taskDistance();
    let failed = !Number.isFinite(d);
    if (name === "push_cube" || name === "multi_push") {
      const t = ARM_SPEC.table;
      const M = this.#layout.multi;
      const q = this.#ctx.data.qpos as Float64Array;
      // Off the table (or sunk through it after a blow-up): the episode cannot be won any more (either cube for multi_push).
      for (const c of M ? [M.cubeQpos.red, M.cubeQpos.blue] : [this.#layout.cubeQpos]) {
        const [x, y, z] = [q[c], q[c + 1], q[c + 2]];
        failed ||= z < 0 || x < t.xMin || x > t.xMax || Math.abs(y) > t.yHalf;
      }
    }
    // Goal reached: within successRadius of the target; for the peg, inside the hole and deep enough.
    let reached = d < this.#ctx.task.successRadius;
    if (name === "peg_insert") {
      const [x, y, z] = this.pegPosition();
      const t = ARM_SPEC.table;
      const ee = this.eePosition();
      const bottom = this.#pegBottom();
      const hole = this.targetPosition();
      const p = ARM_SPEC.peg;
      reached = bottom[2] <= p.height - p.insertDepth && Math.hypot(bottom[0] - hole[0], bottom[1] - hole[1]) < this.#ctx.task.successRadius;
      // Dropped or knocked out of the fingers (its centre starts at the fingertips), or off the table.
      const lost = Math.hypot(x - ee[0], y - ee[1], z - ee[2]) > 0.05;
      failed ||= !reached && (lost || z < 0 || x < t.xMin || x > t.xMax || Math.abs(y) > t.yHalf);
    }
    const success = !failed && reached;
    const progress = success ? 1 : failed ? 0 : Math.min(1, Math.max(0, 1 - d / this.#initialDistance));
    return { success, failed, progress };
  }

  #taskDistance(): number {
    const name = this.#ctx.task.name;
    const t = this.targetPosition();
    if (name === "peg_insert") {
      // The peg's bottom face to where it is when inserted (hole axis, insertDepth below the fixture top).
      const b = this.#pegBottom();
      const p = ARM_SPEC.peg;
      return Math.hypot(b[0] - t[0], b[1] - t[1], b[2] - (p.height - p.insertDepth));
    }
    if (name === "push_cube" || name === "multi_push") {
      const c = this.cubePosition();
      return Math.hypot(c[0] - t[0], c[1] - t[1]);
    }
    const e = this.eePosition();
    return Math.hypot(e[0] - t[0], e[1] - t[1], e[2] - t[2]);
  }
}
