/**
 * The other visibility pass measured for the sim cameras: one ray per pixel, all cast at once with mj_multiRay
 * (MuJoCo's own ray–geom intersection, so geometry is exact), normals computed from the hit: analytically in the geom
 * frame for primitives, from neighbouring hits on the same geom for meshes (mj_multiRay does not report the face).
 * Cheap on scenes of primitives (rlft_arm5); on the SO-101's meshes every ray tests the triangles of every mesh whose
 * bounding box it crosses, which is what the benchmark in docs/sim.md measures.
 */
import type { DoubleBuffer, IntBuffer, MainModule, MjData, MjModel } from "mujoco-js";
import type { GBuffer } from "./gbuffer.ts";
import type { WorldPose } from "./cameraPose.ts";
import { GEOM } from "./sceneGeometry.ts";

/** mj_multiRay over a fixed pixel grid. */
export class RayCaster {
  readonly #mj: MainModule;
  readonly #model: MjModel;
  readonly #groups: Uint8Array;
  readonly #one: IntBuffer;
  /** Normalised image coordinates of each pixel's ray (x/z, y/z), 2 per pixel. */
  readonly #xy: Float32Array;
  readonly #width: number;
  readonly #height: number;
  /** Unit ray directions in the optical frame (3 per pixel), and in the world for the current pose. */
  readonly #dirCam: Float64Array;
  readonly #dirWorld: Float64Array;
  // Output buffers must be WASM buffers: typed arrays are copied in but not back out.
  readonly #geomId: IntBuffer;
  readonly #dist: DoubleBuffer;
  readonly #points: Float64Array;
  // Views into WASM memory, fetched per frame: a view kept across frames detaches when that memory grows.
  #type: Int32Array = new Int32Array(0);
  #size: Float64Array = new Float64Array(0);

  /** `xy`: every pixel's normalised ray (distortion already undone), `groups`: geom groups the rays see. */
  constructor(mj: MainModule, model: MjModel, width: number, height: number, xy: Float32Array, groups: readonly number[]) {
    this.#mj = mj;
    this.#model = model;
    this.#width = width;
    this.#height = height;
    this.#xy = xy;
    this.#groups = Uint8Array.from({ length: 6 }, (_, i) => (groups.includes(i) ? 1 : 0));
    const n = width * height;
    this.#dirCam = new Float64Array(3 * n);
    for (let p = 0; p < n; p++) {
      const x = xy[2 * p], y = xy[2 * p + 1];
      const l = Math.sqrt(x * x + y * y + 1);
      this.#dirCam[3 * p] = x / l;
      this.#dirCam[3 * p + 1] = y / l;
      this.#dirCam[3 * p + 2] = 1 / l;
    }
    this.#dirWorld = new Float64Array(3 * n);
    this.#geomId = new mj.IntBuffer(n);
    this.#one = new mj.IntBuffer(1);
    this.#dist = new mj.DoubleBuffer(n);
    this.#points = new Float64Array(3 * n);
  }

  /** Casts every pixel's ray from `cam` into the current data and fills `out`. */
  render(data: MjData, cam: WorldPose, out: GBuffer): void {
    const n = this.#width * this.#height;
    const R = cam.R;
    const dc = this.#dirCam, dw = this.#dirWorld;
    for (let p = 0; p < n; p++) {
      const a = dc[3 * p], b = dc[3 * p + 1], c = dc[3 * p + 2];
      dw[3 * p] = R[0] * a + R[1] * b + R[2] * c;
      dw[3 * p + 1] = R[3] * a + R[4] * b + R[5] * c;
      dw[3 * p + 2] = R[6] * a + R[7] * b + R[8] * c;
    }
    // The .d.ts says number[] for the ray directions, but only a Float64Array is accepted at run time.
    this.#mj.mj_multiRay(this.#model, data, Array.from(cam.t), dw as unknown as number[], this.#groups, 1, -1, this.#geomId, this.#dist, n, 1e3);
    const ids = this.#geomId.GetView() as Int32Array;
    const dist = this.#dist.GetView() as Float64Array;
    this.#type = this.#model.geom_type as Int32Array;
    this.#size = this.#model.geom_size as Float64Array;
    // mujoco-js 0.0.7's mj_multiRay ignores geomgroup (mj_ray honours it): rays that hit a hidden geom (collision
    // shapes, group 3+) are cast again one by one with mj_ray.
    const group = this.#model.geom_group as Int32Array;
    const origin = Array.from(cam.t);
    for (let p = 0; p < n; p++) {
      const g = ids[p];
      if (g < 0 || this.#groups[group[g]]) continue;
      const d = this.#mj.mj_ray(this.#model, data, origin, [dw[3 * p], dw[3 * p + 1], dw[3 * p + 2]], this.#groups as unknown as number[], 1, -1, this.#one);
      ids[p] = d >= 0 ? (this.#one.GetView() as Int32Array)[0] : -1;
      dist[p] = d;
    }
    const P = this.#points;
    for (let p = 0; p < n; p++) {
      const g = ids[p];
      out.geom[p] = g;
      if (g < 0) {
        out.depth[p] = Infinity;
        continue;
      }
      const t = dist[p];
      out.depth[p] = t * dc[3 * p + 2];
      P[3 * p] = t * dc[3 * p];
      P[3 * p + 1] = t * dc[3 * p + 1];
      P[3 * p + 2] = t * dc[3 * p + 2];
    }
    const gx = data.geom_xpos as Float64Array;
    const gm = data.geom_xmat as Float64Array;
    const nrm = [0, 0, 0];
    for (let p = 0; p < n; p++) {
      const g = ids[p];
      if (g < 0) continue;
      if (this.#type[g] === GEOM.mesh || !this.#primitiveNormal(g, p, cam, gx, gm, nrm)) this.#neighbourNormal(p, ids, nrm);
      // Face the camera.
      const s = nrm[0] * P[3 * p] + nrm[1] * P[3 * p + 1] + nrm[2] * P[3 * p + 2] > 0 ? -1 : 1;
      out.normal[3 * p] = s * nrm[0];
      out.normal[3 * p + 1] = s * nrm[1];
      out.normal[3 * p + 2] = s * nrm[2];
    }
  }

  /** The exact surface normal of a primitive at pixel p's hit, in the optical frame; false for unsupported types. */
  #primitiveNormal(g: number, p: number, cam: WorldPose, gx: Float64Array, gm: Float64Array, out: number[]): boolean {
    const R = cam.R;
    const P = this.#points;
    // Hit in the world, then in the geom frame.
    const wx = cam.t[0] + R[0] * P[3 * p] + R[1] * P[3 * p + 1] + R[2] * P[3 * p + 2] - gx[3 * g];
    const wy = cam.t[1] + R[3] * P[3 * p] + R[4] * P[3 * p + 1] + R[5] * P[3 * p + 2] - gx[3 * g + 1];
    const wz = cam.t[2] + R[6] * P[3 * p] + R[7] * P[3 * p + 1] + R[8] * P[3 * p + 2] - gx[3 * g + 2];
    const M = 9 * g;
    const x = gm[M] * wx + gm[M + 3] * wy + gm[M + 6] * wz;
    const y = gm[M + 1] * wx + gm[M + 4] * wy + gm[M + 7] * wz;
    const z = gm[M + 2] * wx + gm[M + 5] * wy + gm[M + 8] * wz;
    const s = this.#size;
    let a = 0, b = 0, c = 0;
    switch (this.#type[g]) {
      case GEOM.plane:
        c = 1;
        break;
      case GEOM.sphere:
        [a, b, c] = [x, y, z];
        break;
      case GEOM.ellipsoid:
        [a, b, c] = [x / s[3 * g] ** 2, y / s[3 * g + 1] ** 2, z / s[3 * g + 2] ** 2];
        break;
      case GEOM.capsule: {
        const h = s[3 * g + 1];
        [a, b, c] = [x, y, z - Math.max(-h, Math.min(h, z))];
        break;
      }
      case GEOM.cylinder: {
        const r = s[3 * g], h = s[3 * g + 1];
        // On a cap when the hit is nearer the cap plane than the curved side.
        if (h - Math.abs(z) < r - Math.hypot(x, y)) c = Math.sign(z);
        else [a, b] = [x, y];
        break;
      }
      case GEOM.box: {
        const q = [x / s[3 * g], y / s[3 * g + 1], z / s[3 * g + 2]];
        const i = Math.abs(q[0]) >= Math.abs(q[1]) && Math.abs(q[0]) >= Math.abs(q[2]) ? 0 : Math.abs(q[1]) >= Math.abs(q[2]) ? 1 : 2;
        const v = [0, 0, 0];
        v[i] = Math.sign(q[i]);
        [a, b, c] = v;
        break;
      }
      default:
        return false;
    }
    // geom → world → optical.
    const nx = gm[M] * a + gm[M + 1] * b + gm[M + 2] * c;
    const ny = gm[M + 3] * a + gm[M + 4] * b + gm[M + 5] * c;
    const nz = gm[M + 6] * a + gm[M + 7] * b + gm[M + 8] * c;
    const ox = R[0] * nx + R[3] * ny + R[6] * nz;
    const oy = R[1] * nx + R[4] * ny + R[7] * nz;
    const oz = R[2] * nx + R[5] * ny + R[8] * nz;
    const l = Math.sqrt(ox * ox + oy * oy + oz * oz) || 1;
    out[0] = ox / l;
    out[1] = oy / l;
    out[2] = oz / l;
    return true;
  }

  /** Normal from the hits of the neighbouring pixels on the same geom (forward, else backward difference). */
  #neighbourNormal(p: number, ids: Int32Array, out: number[]): void {
    const W = this.#width, H = this.#height;
    const u = p % W, v = (p / W) | 0;
    const dx = this.#tangent(p, u + 1 < W ? p + 1 : -1, u > 0 ? p - 1 : -1, ids);
    const dy = this.#tangent(p, v + 1 < H ? p + W : -1, v > 0 ? p - W : -1, ids);
    if (dx && dy) {
      const c = [dx[1] * dy[2] - dx[2] * dy[1], dx[2] * dy[0] - dx[0] * dy[2], dx[0] * dy[1] - dx[1] * dy[0]];
      const l = Math.hypot(c[0], c[1], c[2]);
      if (l > 0) {
        out[0] = c[0] / l;
        out[1] = c[1] / l;
        out[2] = c[2] / l;
        return;
      }
    }
    // A lone pixel: face the camera.
    const P = this.#points;
    const l = Math.hypot(P[3 * p], P[3 * p + 1], P[3 * p + 2]) || 1;
    out[0] = -P[3 * p] / l;
    out[1] = -P[3 * p + 1] / l;
    out[2] = -P[3 * p + 2] / l;
  }

  #tangent(i: number, next: number, prev: number, ids: Int32Array): number[] | null {
    const g = ids[i];
    const [a, b] = next >= 0 && ids[next] === g ? [next, i] : prev >= 0 && ids[prev] === g ? [i, prev] : [-1, -1];
    if (a < 0) return null;
    const P = this.#points;
    return [P[3 * a] - P[3 * b], P[3 * a + 1] - P[3 * b + 1], P[3 * a + 2] - P[3 * b + 2]];
  }

  /** Frees the WASM-side buffers. */
  close(): void {
    this.#geomId.delete();
    this.#dist.delete();
    this.#one.delete();
  }

  /** Normalised rays of the grid (for shading). */
  get xy(): Float32Array {
    return this.#xy;
  }
}
