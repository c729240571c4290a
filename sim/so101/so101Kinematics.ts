/**
 * Forward kinematics, geometric Jacobian and damped-least-squares IK of the SO-101, computed from the kinematic
 * chain in Menagerie's so101.xml (read once, sim/so101/mjcfChain.ts), in rlft's joint convention (so101Spec.ts).
 * Pure TypeScript: the scripted expert, the operator and safety checks on a real arm need no MuJoCo instance.
 * A test holds it to MuJoCo's own Python bindings on the same XML to 1e-6.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { chainTo, parseMjcfTree, type MjcfJoint } from "./mjcfChain.ts";
import { MODEL_SIGN, SO101_ASSET_DIR, SO101_SPEC, toModelAngles } from "./so101Spec.ts";
import { matrixFromQuaternion, rotationVector } from "../../calibration/rotation.ts";
import { cross, matMul, solve, transpose, type Mat, type Vec } from "../../calibration/linalg.ts";

/** The arm joints on the chain to the end-effector site (the gripper jaw is on a side branch). */
export const SO101_ARM_JOINTS = 5;

/** An end-effector pose in the base (= world) frame; R is row-major, its columns the site's axes. */
export interface EePose {
  pos: Vec;
  R: Mat;
}

/** FK with what the Jacobian needs: every arm joint's world axis and origin. */
interface FkFrames extends EePose {
  axes: Vec[];
  origins: Vec[];
}

/** One link of the chain: fixed offset from the previous frame, then (maybe) a hinge. */
interface Link {
  pos: Vec;
  R: Mat;
  joint: MjcfJoint | null;
}

/** Options of {@link So101Kinematics.ik}. */
export interface IkOptions {
  /** Desired orientation of the site (row-major, columns = site axes); absent: position only. */
  R?: Mat;
  /** Metres of position error one radian of orientation error is worth (default 0.1). */
  orientationWeight?: number;
  /** Which of the 5 arm joints may move (default all); the others stay at q0. */
  free?: readonly boolean[];
  /** Iteration cap (default 60). */
  iterations?: number;
  /** Damping λ of the least squares (default 0.02). */
  damping?: number;
}

/** The result of an IK solve. */
export interface IkResult {
  /** The 5 arm joints (rlft convention), within the command limits. */
  q: number[];
  /** Remaining position error (m) and orientation error (rad, 0 when position only). */
  posError: number;
  rotError: number;
  /** Position within 2 mm and orientation within ~1.5° of the goal. */
  reachable: boolean;
}

const quatMatrix = (q: readonly number[]): Mat => matrixFromQuaternion([q[1], q[2], q[3], q[0]]);

let shared: So101Kinematics | undefined;

/** Kinematics of the SO-101 arm up to the `gripperframe` site. */
export class So101Kinematics {
  readonly #links: Link[];
  readonly #site: { pos: Vec; R: Mat };

  private constructor(xml: string) {
    const tree = parseMjcfTree(xml);
    const site = tree.sites.get(SO101_SPEC.eeSite);
    if (!site) throw new Error(`so101.xml has no site "${SO101_SPEC.eeSite}"`);
    this.#links = chainTo(tree, site.body).map((b) => {
      if (b.joints.length > 1) throw new Error(`so101.xml body ${b.name}: ${b.joints.length} joints; one hinge per body expected`);
      return { pos: b.pos, R: quatMatrix(b.quat), joint: b.joints[0] ?? null };
    });
    const names = this.#links.filter((l) => l.joint).map((l) => l.joint!.name);
    const want = SO101_SPEC.jointNames.slice(0, SO101_ARM_JOINTS);
    if (names.join() !== want.join()) throw new Error(`so101.xml chain to ${site.body} has joints ${names.join(", ")}; expected ${want.join(", ")}`);
    this.#site = { pos: site.pos, R: quatMatrix(site.quat) };
  }

  /** The kinematics of the repository's so101.xml (parsed once per process). */
  static shared(): So101Kinematics {
    shared ??= new So101Kinematics(readFileSync(join(SO101_ASSET_DIR, "so101.xml"), "utf8"));
    return shared;
  }

  /** Kinematics of another copy of the model's XML (tests). */
  static fromXml(xml: string): So101Kinematics {
    return new So101Kinematics(xml);
  }

  /** Site pose for the arm joints q (rlft convention; entries past the 5th, the gripper, are ignored). */
  fk(q: ArrayLike<number>): EePose {
    const f = this.#frames(q);
    return { pos: f.pos, R: f.R };
  }

  /** Site position only. */
  position(q: ArrayLike<number>): [number, number, number] {
    const p = this.#frames(q).pos;
    return [p[0], p[1], p[2]];
  }

  #frames(q: ArrayLike<number>): FkFrames {
    if (q.length < SO101_ARM_JOINTS) throw new Error(`So101Kinematics: expected at least ${SO101_ARM_JOINTS} joint angles, got ${q.length}`);
    const m = toModelAngles(Array.from(q).slice(0, SO101_ARM_JOINTS));
    // Hot path of the expert's IK (called every iteration): small unrolled 3×3 products instead of the generic ones.
    let R: Mat = [
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ];
    let p: Vec = [0, 0, 0];
    const axes: Vec[] = [];
    const origins: Vec[] = [];
    let j = 0;
    for (const link of this.#links) {
      const off = mul3v(R, link.pos);
      p = [p[0] + off[0], p[1] + off[1], p[2] + off[2]];
      R = mul3(R, link.R);
      if (link.joint) {
        const a = link.joint.axis;
        // The Jacobian is in rlft's angles: d(model)/d(driver) flips the axis where the directions differ.
        const w = mul3v(R, a);
        axes.push([w[0] * MODEL_SIGN[j], w[1] * MODEL_SIGN[j], w[2] * MODEL_SIGN[j]]);
        origins.push(p);
        R = mul3(R, axisAngle(a, m[j]));
        j++;
      }
    }
    const s = mul3v(R, this.#site.pos);
    return { pos: [p[0] + s[0], p[1] + s[1], p[2] + s[2]], R: mul3(R, this.#site.R), axes, origins };
  }

  /** 6×5 geometric Jacobian of the site (rows: linear x, y, z, then angular x, y, z) in rlft's joint angles. */
  jacobian(q: ArrayLike<number>): Mat {
    const f = this.#frames(q);
    return jacobianRows(f);
  }

  /**
   * Damped least squares (Wampler 1986; Buss, "Introduction to inverse kinematics", 2004, §5) from q0 to the site
   * pose `pos` (and `opts.R`), clamped to the command limits at every step.
   */
  ik(pos: readonly number[], q0: ArrayLike<number>, opts: IkOptions = {}): IkResult {
    const w = opts.orientationWeight ?? 0.1;
    const lambda2 = (opts.damping ?? 0.02) ** 2;
    const free = opts.free ?? [true, true, true, true, true];
    const lo = SO101_SPEC.jointLower;
    const hi = SO101_SPEC.jointUpper;
    const q = Array.from({ length: SO101_ARM_JOINTS }, (_, i) => Math.min(hi[i], Math.max(lo[i], q0[i])));
    let posError = Infinity;
    let rotError = 0;
    for (let it = 0, n = opts.iterations ?? 60; it <= n; it++) {
      const f = this.#frames(q);
      const ep = [pos[0] - f.pos[0], pos[1] - f.pos[1], pos[2] - f.pos[2]];
      const eo = opts.R ? rotationVector(matMul(opts.R, transpose(f.R))) : [];
      posError = Math.hypot(ep[0], ep[1], ep[2]);
      rotError = opts.R ? Math.hypot(eo[0], eo[1], eo[2]) : 0;
      if (it === n || (posError < 1e-5 && rotError < 1e-4)) break;
      const J = jacobianRows(f)
        .slice(0, opts.R ? 6 : 3)
        .map((row, r) => row.map((v, c) => (free[c] ? (r >= 3 ? w * v : v) : 0)));
      const e = [...ep, ...eo.map((v) => w * v)];
      // dq = Jᵀ (J Jᵀ + λ² I)⁻¹ e
      const JJt = matMul(J, transpose(J)).map((row, r) => row.map((v, c) => v + (r === c ? lambda2 : 0)));
      const y = solve(JJt, e);
      const dq = transpose(J).map((col) => col.reduce((s, v, r) => s + v * y[r], 0));
      // Small steps keep the linearisation honest; 0.3 rad caps one iteration.
      const big = Math.max(...dq.map(Math.abs));
      // Converged to the best compromise (an unreachable goal, or an orientation traded against position).
      if (big < 1e-6) break;
      const k = big > 0.3 ? 0.3 / big : 1;
      for (let i = 0; i < SO101_ARM_JOINTS; i++) q[i] = Math.min(hi[i], Math.max(lo[i], q[i] + k * dq[i]));
    }
    return { q, posError, rotError, reachable: posError < 0.002 && rotError < 0.025 };
  }
}

/** A·B for 3×3 matrices. */
function mul3(A: Mat, B: Mat): Mat {
  const out: Mat = [[0, 0, 0], [0, 0, 0], [0, 0, 0]];
  for (let r = 0; r < 3; r++) {
    const a = A[r];
    for (let c = 0; c < 3; c++) out[r][c] = a[0] * B[0][c] + a[1] * B[1][c] + a[2] * B[2][c];
  }
  return out;
}

/** A·v for a 3×3 matrix. */
function mul3v(A: Mat, v: readonly number[]): Vec {
  return [A[0][0] * v[0] + A[0][1] * v[1] + A[0][2] * v[2], A[1][0] * v[0] + A[1][1] * v[1] + A[1][2] * v[2], A[2][0] * v[0] + A[2][1] * v[1] + A[2][2] * v[2]];
}

/** Rotation by `angle` about the unit `axis` (Rodrigues). */
function axisAngle(axis: readonly number[], angle: number): Mat {
  const [x, y, z] = axis;
  const c = Math.cos(angle);
  const s = Math.sin(angle);
  const t = 1 - c;
  return [
    [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
    [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
    [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
  ];
}

function jacobianRows(f: FkFrames): Mat {
  const cols = f.axes.map((z, i) => {
    const r = [f.pos[0] - f.origins[i][0], f.pos[1] - f.origins[i][1], f.pos[2] - f.origins[i][2]];
    return [...cross(z, r), ...z];
  });
  return [0, 1, 2, 3, 4, 5].map((r) => cols.map((c) => c[r]));
}

/**
 * The site orientation of a top-down grasp: the tool axis (site x) points down, the jaws close along site z,
 * which lies horizontal at `yaw` (rad, from world +x).
 */
export function topDownRotation(yaw: number): Mat {
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  // Columns: x = (0, 0, −1), y = z × x = (−s, c, 0), z = (c, s, 0).
  return [
    [0, -s, c],
    [0, c, s],
    [-1, 0, 0],
  ];
}
