/**
 * The SO-101 in the sim: the robot definition ArmSim loads (sim/simRobot.ts) and the world of one scene — joints in
 * rlft's Feetech convention (so101Spec.ts converts at this boundary and nowhere else), the task objects, the
 * observation and the success/failure detectors of reach, push_cube, pick_place and multi_push.
 */
import type { MainModule, MjModel } from "mujoco-js";
import type { So101TaskName, TaskSpec } from "../tasks.ts";
import type { RobotWorld, SimContext, SimRobot, SimStateOverride, SimStatus } from "../simRobot.ts";
import { fromModelAngles, MODEL_SIGN, SO101_SPEC, toModelAngles } from "./so101Spec.ts";
import { so101SceneXml, writeSo101Assets } from "./so101Scene.ts";
import { sampleSo101Episode } from "./sampleSo101Episode.ts";
import { compileXml, idLookup, vec3 } from "../mjUtil.ts";
import { setUpMultiPush, type CubeColor, type MultiPushGoal, type TargetSide } from "../multiPush.ts";

/** Menagerie's step (so101.xml: 5 ms), or the largest step below it that divides the control period. */
export function so101PhysicsDt(controlHz: number): number {
  const period = 1 / controlHz;
  return period / Math.ceil(period / 0.005 - 1e-9);
}

/** The SO-101 as a simulated robot. */
export const SO101_ROBOT: SimRobot = {
  name: "so101",
  jointNames: SO101_SPEC.jointNames,
  jointLower: SO101_SPEC.jointLower,
  jointUpper: SO101_SPEC.jointUpper,
  units: SO101_SPEC.units,
  defaultPhysicsDt: so101PhysicsDt,
  // The scene file sits beside so101.xml: its include and the model's meshdir resolve from there.
  loadModel: (mj: MainModule, task: TaskSpec, physicsDt: number): MjModel => compileXml(mj, writeSo101Assets(mj), "rlft_so101", so101SceneXml({ task: task.name as So101TaskName, physicsDt })),
  bind: (ctx) => new So101World(ctx),
};

/** Where the SO-101 scene keeps each quantity in MuJoCo's arrays. */
interface Layout {
  qpos: number[];
  dof: number[];
  actuators: number[];
  eeSite: number;
  targetMocap: number;
  /** -1 when the task has no cube. */
  cubeQpos: number;
  cubeBody: number;
  cubeGeom: number;
  /** The arm's root body: a contact with any body under it is the robot touching something. */
  robotRoot: number;
  frictionGeoms: number[];
  objectBodies: number[];
  /** multi_push: both cubes and both targets; cubeQpos/cubeBody/cubeGeom/targetMocap above point at the instructed pair. */
  multi: { cubeQpos: Record<CubeColor, number>; cubeBody: Record<CubeColor, number>; cubeGeom: Record<CubeColor, number>; targetMocap: Record<TargetSide, number> } | null;
}

/** The cube is "resting" when its centre is at most this far above its resting height. */
const RESTING = 0.005;

class So101World implements RobotWorld {
  readonly frictionGeoms: readonly number[];
  readonly objectBodies: readonly number[];
  readonly #ctx: SimContext;
  readonly #L: Layout;
  #initialDistance = 1;
  #instruction: string | null = null;
  #goal: MultiPushGoal | null = null;

  constructor(ctx: SimContext) {
    this.#ctx = ctx;
    this.#L = this.#lookUp();
    this.frictionGeoms = this.#L.frictionGeoms;
    this.objectBodies = this.#L.objectBodies;
  }


  /** multi_push: the episode's instruction (the seed's, or the fixed one); null for the other tasks. */
  get instruction(): string | null {
    return this.#instruction;
  }

  /** multi_push: which cube goes to which target this episode; null for the other tasks. */
  get goal(): MultiPushGoal | null {
    return this.#goal;
  }

  get #task(): So101TaskName {
    return this.#ctx.task.name as So101TaskName;
  }

  #lookUp(): Layout {
    const { mj, model: m } = this.#ctx;
    const O = mj.mjtObj;
    const id = idLookup(mj, m, (name) => `ArmSim so101: the scene has no ${name}; so101Scene.ts and So101World.ts are out of step`);
    const joints = SO101_SPEC.jointNames.map((n) => id(O.mjOBJ_JOINT.value, n));
    const mocap = (name: string): number => (m.body_mocapid as Int32Array)[id(O.mjOBJ_BODY.value, name)];
    const qadr = (joint: number): number => (m.jnt_qposadr as Int32Array)[joint];
    const multi =
      this.#task === "multi_push"
        ? {
            cubeQpos: { red: qadr(id(O.mjOBJ_JOINT.value, "cube_red")), blue: qadr(id(O.mjOBJ_JOINT.value, "cube_blue")) },
            cubeBody: { red: id(O.mjOBJ_BODY.value, "cube_red"), blue: id(O.mjOBJ_BODY.value, "cube_blue") },
            cubeGeom: { red: id(O.mjOBJ_GEOM.value, "cube_red"), blue: id(O.mjOBJ_GEOM.value, "cube_blue") },
            targetMocap: { left: mocap("target_left"), right: mocap("target_right") },
          }
        : null;
    const cubeJoint = id(O.mjOBJ_JOINT.value, "cube", false);
    const cubeBody = multi ? multi.cubeBody.red : id(O.mjOBJ_BODY.value, "cube", false);
    const cubeGeom = multi ? multi.cubeGeom.red : id(O.mjOBJ_GEOM.value, "cube", false);
    return {
      qpos: joints.map((j) => (m.jnt_qposadr as Int32Array)[j]),
      dof: joints.map((j) => (m.jnt_dofadr as Int32Array)[j]),
      // so101.xml names each position actuator after its joint.
      actuators: SO101_SPEC.jointNames.map((n) => id(O.mjOBJ_ACTUATOR.value, n)),
      eeSite: id(O.mjOBJ_SITE.value, SO101_SPEC.eeSite),
      targetMocap: multi ? multi.targetMocap.left : mocap("target"),
      cubeQpos: multi ? multi.cubeQpos.red : cubeJoint >= 0 ? qadr(cubeJoint) : -1,
      cubeBody,
      cubeGeom,
      robotRoot: id(O.mjOBJ_BODY.value, "base"),
      frictionGeoms: [id(O.mjOBJ_GEOM.value, "table"), ...(multi ? [multi.cubeGeom.red, multi.cubeGeom.blue] : [cubeGeom])].filter((g) => g >= 0),
      objectBodies: multi ? [multi.cubeBody.red, multi.cubeBody.blue] : cubeBody >= 0 ? [cubeBody] : [],
      multi,
    };
  }

  reset(seed: number): void {
    const { mj, model, data } = this.#ctx;
    const init = sampleSo101Episode(this.#task, seed);
    this.#setJoints(init.q);
    const L = this.#L;
    const placeCube = (c: { x: number; y: number; yaw: number }, adr: number): void =>
      (data.qpos as Float64Array).set([c.x, c.y, SO101_SPEC.cubeHalf, Math.cos(c.yaw / 2), 0, 0, Math.sin(c.yaw / 2)], adr);
    if (init.multi && L.multi) {
      const e = setUpMultiPush(init.multi, this.#ctx.instruction, L.multi, data.mocap_pos as Float64Array, placeCube);
      [this.#goal, this.#instruction, L.cubeQpos, L.cubeBody, L.targetMocap] = [e.goal, e.instruction, e.cubeQpos, e.cubeBody, e.targetMocap];
      L.cubeGeom = L.multi.cubeGeom[e.goal.color];
    } else {
      if (init.cube && L.cubeQpos >= 0) placeCube(init.cube, L.cubeQpos);
      (data.mocap_pos as Float64Array).set(init.target, 3 * L.targetMocap);
    }
    mj.mj_forward(model, data);
    this.#initialDistance = Math.max(this.#distance(), 1e-6);
  }

  /** Joint positions and the matching actuator targets, so the arm starts at rest where it stands. */
  #setJoints(q: readonly number[]): void {
    const m = toModelAngles(q);
    const qpos = this.#ctx.data.qpos as Float64Array;
    this.#L.qpos.forEach((a, i) => (qpos[a] = m[i]));
    this.command(q);
  }

  setState(state: SimStateOverride): void {
    const { mj, model, data } = this.#ctx;
    this.#setJoints(state.q);
    const L = this.#L;
    if (state.object && L.cubeQpos >= 0) (data.qpos as Float64Array).set(state.object, L.cubeQpos);
    if (state.target) (data.mocap_pos as Float64Array).set(state.target, 3 * L.targetMocap);
    (data.qvel as Float64Array).fill(0);
    mj.mj_forward(model, data);
    this.#initialDistance = Math.max(this.#distance(), 1e-6);
  }

  command(q: readonly number[]): void {
    const ctrl = this.#ctx.data.ctrl as Float64Array;
    const m = toModelAngles(q);
    this.#L.actuators.forEach((a, i) => (ctrl[a] = m[i]));
  }

  jointState(): { position: number[]; velocity: number[]; effort: number[] } {
    const { data } = this.#ctx;
    const qpos = data.qpos as Float64Array;
    const qvel = data.qvel as Float64Array;
    const force = data.actuator_force as Float64Array;
    const L = this.#L;
    return {
      position: fromModelAngles(L.qpos.map((a) => qpos[a])),
      velocity: L.dof.map((a, i) => MODEL_SIGN[i] * qvel[a]),
      // N·m at the joint (a real STS3215 reports load as a fraction of stall torque; the sim keeps SI units).
      effort: L.actuators.map((a, i) => MODEL_SIGN[i] * force[a]),
    };
  }

  eePosition(): [number, number, number] {
    return vec3(this.#ctx.data.site_xpos, this.#L.eeSite);
  }

  targetPosition(): [number, number, number] {
    return vec3(this.#ctx.data.mocap_pos, this.#L.targetMocap);
  }

  cubePosition(): [number, number, number] {
    const c = this.#L.cubeQpos;
    if (c < 0) return [NaN, NaN, NaN];
    const q = this.#ctx.data.qpos as Float64Array;
    return [q[c], q[c + 1], q[c + 2]];
  }

  pegPosition(): [number, number, number] {
    return [NaN, NaN, NaN];
  }

  /** The cube's yaw about the vertical, folded into [−π/4, π/4) by its 90° symmetry. */
  cubeYaw(): number {
    const c = this.#L.cubeQpos;
    if (c < 0) return NaN;
    const q = this.#ctx.data.qpos as Float64Array;
    const [w, x, y, z] = [q[c + 3], q[c + 4], q[c + 5], q[c + 6]];
    const yaw = Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
    const quarter = Math.PI / 2;
    return yaw - quarter * Math.floor((yaw + quarter / 2) / quarter);
  }

  observation(): { names: string[]; values: number[] } {
    const q = this.jointState().position;
    const ee = this.eePosition();
    const t = this.targetPosition();
    const c = this.cubePosition();
    let values: number[];
    switch (this.#task) {
      case "reach":
        values = [...q, ...ee, ...t];
        break;
      case "push_cube":
        values = [...q, ...ee, c[0], c[1], t[0], t[1]];
        break;
      case "pick_place":
        values = [...q, ...ee, ...c, this.cubeYaw(), t[0], t[1]];
        break;
      case "multi_push": {
        const M = this.#L.multi!;
        const qp = this.#ctx.data.qpos as Float64Array;
        const mp = this.#ctx.data.mocap_pos as Float64Array;
        const xy = (adr: number): number[] => [qp[adr], qp[adr + 1]];
        const txy = (m: number): number[] => [mp[3 * m], mp[3 * m + 1]];
        values = [...q, ...ee, c[0], c[1], t[0], t[1], ...xy(M.cubeQpos.red), ...xy(M.cubeQpos.blue), ...txy(M.targetMocap.left), ...txy(M.targetMocap.right)];
        break;
      }
    }
    return { names: [...this.#ctx.task.observationNames], values };
  }

  status(): SimStatus {
    const d = this.#distance();
    let failed = !Number.isFinite(d);
    const L = this.#L;
    const qpos = this.#ctx.data.qpos as Float64Array;
    // Off the table, or sunk through it after a blow-up: the episode cannot be won any more (either cube for multi_push).
    for (const c of L.multi ? [L.multi.cubeQpos.red, L.multi.cubeQpos.blue] : L.cubeQpos >= 0 ? [L.cubeQpos] : []) {
      const [x, y, z] = [qpos[c], qpos[c + 1], qpos[c + 2]];
      const t = SO101_SPEC.table;
      failed ||= z < 0 || x < t.xMin || x > t.xMax || Math.abs(y) > t.yHalf;
    }
    let reached = d < this.#ctx.task.successRadius;
    // pick_place: put down (resting on the table, not held up) and let go (no part of the arm touches the cube).
    if (this.#task === "pick_place") reached &&= this.cubePosition()[2] < SO101_SPEC.cubeHalf + RESTING && !this.#robotTouchesCube();
    const success = !failed && reached;
    const progress = success ? 1 : failed ? 0 : Math.min(1, Math.max(0, 1 - d / this.#initialDistance));
    return { success, failed, progress };
  }

  /** Task distance: ee→target (reach), cube→target on the table (push_cube, multi_push: the instructed pair), cube→resting on the target (pick_place). */
  #distance(): number {
    const t = this.targetPosition();
    if (this.#task === "reach") {
      const e = this.eePosition();
      return Math.hypot(e[0] - t[0], e[1] - t[1], e[2] - t[2]);
    }
    const c = this.cubePosition();
    const xy = Math.hypot(c[0] - t[0], c[1] - t[1]);
    return this.#task === "pick_place" ? Math.hypot(xy, Math.max(0, c[2] - SO101_SPEC.cubeHalf - RESTING)) : xy;
  }

  /** True when a contact joins the cube and any body of the arm. */
  #robotTouchesCube(): boolean {
    const { model: m, data } = this.#ctx;
    const L = this.#L;
    const bodyOf = m.geom_bodyid as Int32Array;
    const root = m.body_rootid as Int32Array;
    const contacts = data.contact;
    try {
      for (let i = 0; i < data.ncon; i++) {
        const c = contacts.get(i);
        if (!c) continue;
        const [g1, g2] = [c.geom1, c.geom2];
        c.delete();
        const other = g1 === L.cubeGeom ? g2 : g2 === L.cubeGeom ? g1 : -1;
        if (other >= 0 && root[bodyOf[other]] === L.robotRoot) return true;
      }
      return false;
    } finally {
      contacts.delete();
    }
  }
}
