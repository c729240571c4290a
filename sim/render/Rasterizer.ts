/**
 * A z-buffer triangle rasteriser over MuJoCo's geometry (sceneGeometry.ts), in plain TypeScript: every visible geom's
 * triangles are posed from data.geom_xpos / geom_xmat, projected through the pinhole intrinsics, clipped at the near
 * plane and scan-converted at pixel centres with perspective-correct interpolation. The pass writes a visibility
 * buffer (geom, triangle, barycentrics) and then resolves normals only for the pixels that stayed visible, so the
 * cost of the many sub-pixel mesh triangles is a bounding-box test each.
 */
import type { MjData } from "mujoco-js";
import type { CameraModel } from "../../calibration/CameraModel.ts";
import type { DrawGeom } from "./sceneGeometry.ts";
import type { GBuffer } from "./gbuffer.ts";
import type { WorldPose } from "./cameraPose.ts";

/**
 * Pinhole projection of the visibility pass (distortion is applied afterwards by a remap): a camera model's size and
 * focal lengths, principal point in OpenCV's convention (pixel (0, 0)'s centre at (0, 0)), and the near clipping
 * distance along the optical axis (m).
 */
export type Pinhole = Pick<CameraModel, "width" | "height" | "fx" | "fy" | "cx" | "cy"> & { near: number };

/** Reusable scratch space of the rasteriser, sized for the largest mesh. */
export class Rasterizer {
  readonly #draw: readonly DrawGeom[];
  // Camera-frame vertices of the geom being drawn, and their projections.
  #X: Float64Array;
  #Y: Float64Array;
  #Z: Float64Array;
  #U: Float64Array;
  #V: Float64Array;
  // Visibility buffer.
  #iz = new Float64Array(0);
  #item = new Int32Array(0);
  #tri = new Int32Array(0);
  #b1 = new Float32Array(0);
  #b2 = new Float32Array(0);
  /** camera ← geom rotation of every drawn geom in the last pass (9 per geom), for the normals. */
  #rot: Float64Array;
  // Current target (set per pass, read by #raster).
  #W = 0;
  #H = 0;
  #cur = 0;
  #curTri = 0;
  /** Triangles that reached scan conversion in the last pass (a measure for the bench). */
  trianglesDrawn = 0;

  constructor(draw: readonly DrawGeom[]) {
    this.#draw = draw;
    const maxV = Math.max(3, ...draw.map((d) => d.mesh.pos.length / 3));
    this.#X = new Float64Array(maxV);
    this.#Y = new Float64Array(maxV);
    this.#Z = new Float64Array(maxV);
    this.#U = new Float64Array(maxV);
    this.#V = new Float64Array(maxV);
    this.#rot = new Float64Array(9 * draw.length);
  }

  /** Renders the geoms as seen from `cam` (world ← optical) into `out`. */
  render(data: MjData, cam: WorldPose, k: Pinhole, out: GBuffer): void {
    this.#visibility(data, cam, k);
    this.#resolve(k, out);
  }

  /**
   * Depth only (shadow maps): 1/z per pixel, 0 where nothing was drawn. The array is this rasteriser's own and is
   * overwritten by its next pass.
   */
  renderInverseDepth(data: MjData, cam: WorldPose, k: Pinhole): Float64Array {
    this.#visibility(data, cam, k);
    return this.#iz;
  }

  #visibility(data: MjData, cam: WorldPose, k: Pinhole): void {
    const W = (this.#W = k.width);
    const H = (this.#H = k.height);
    const n = W * H;
    if (this.#iz.length !== n) {
      this.#iz = new Float64Array(n);
      this.#item = new Int32Array(n);
      this.#tri = new Int32Array(n);
      this.#b1 = new Float32Array(n);
      this.#b2 = new Float32Array(n);
    }
    this.#iz.fill(0);
    this.#item.fill(-1);
    this.trianglesDrawn = 0;
    const gx = data.geom_xpos as Float64Array;
    const gm = data.geom_xmat as Float64Array;
    const Rw = cam.R;
    const tw = cam.t;
    const { fx, fy, cx, cy, near } = k;
    // Frustum side planes through the optical centre (unit normals pointing inwards), for sphere culling.
    const planes = frustumPlanes(k);
    const X = this.#X;
    const Y = this.#Y;
    const Z = this.#Z;
    const U = this.#U;
    const V = this.#V;
    const rot = this.#rot;
    for (let d = 0; d < this.#draw.length; d++) {
      const dg = this.#draw[d];
      const g = dg.geom;
      // camera ← geom: R = Rwᵀ·xmat, t = Rwᵀ·(xpos − tw).
      const px = gx[3 * g] - tw[0];
      const py = gx[3 * g + 1] - tw[1];
      const pz = gx[3 * g + 2] - tw[2];
      const t0 = Rw[0] * px + Rw[3] * py + Rw[6] * pz;
      const t1 = Rw[1] * px + Rw[4] * py + Rw[7] * pz;
      const t2 = Rw[2] * px + Rw[5] * py + Rw[8] * pz;
      const o = 9 * d;
      for (let i = 0; i < 3; i++) {
        for (let j = 0; j < 3; j++) rot[o + 3 * i + j] = Rw[i] * gm[9 * g + j] + Rw[3 + i] * gm[9 * g + 3 + j] + Rw[6 + i] * gm[9 * g + 6 + j];
      }
      const r = dg.radius;
      if (r !== Infinity) {
        if (t2 + r < near) continue;
        let outside = false;
        for (let p = 0; p < 4 && !outside; p++) outside = planes[3 * p] * t0 + planes[3 * p + 1] * t1 + planes[3 * p + 2] * t2 < -r;
        if (outside) continue;
      }
      const R00 = rot[o], R01 = rot[o + 1], R02 = rot[o + 2];
      const R10 = rot[o + 3], R11 = rot[o + 4], R12 = rot[o + 5];
      const R20 = rot[o + 6], R21 = rot[o + 7], R22 = rot[o + 8];
      const pos = dg.mesh.pos;
      const nv = pos.length / 3;
      for (let i = 0; i < nv; i++) {
        const a = pos[3 * i], b = pos[3 * i + 1], c = pos[3 * i + 2];
        const x = R00 * a + R01 * b + R02 * c + t0;
        const y = R10 * a + R11 * b + R12 * c + t1;
        const z = R20 * a + R21 * b + R22 * c + t2;
        X[i] = x;
        Y[i] = y;
        Z[i] = z;
        if (z > near) {
          U[i] = (fx * x) / z + cx;
          V[i] = (fy * y) / z + cy;
        }
      }
      this.#cur = d;
      const idx = dg.mesh.idx;
      const nt = idx.length / 3;
      for (let t = 0; t < nt; t++) {
        const i0 = idx[3 * t], i1 = idx[3 * t + 1], i2 = idx[3 * t + 2];
        const z0 = Z[i0], z1 = Z[i1], z2 = Z[i2];
        if (z0 > near && z1 > near && z2 > near) {
          // Quick reject of triangles that cover no pixel centre (most mesh triangles at 84 × 84).
          const u0 = U[i0], u1 = U[i1], u2 = U[i2];
          const minU = Math.ceil(u0 < u1 ? (u0 < u2 ? u0 : u2) : u1 < u2 ? u1 : u2);
          const maxU = Math.floor(u0 > u1 ? (u0 > u2 ? u0 : u2) : u1 > u2 ? u1 : u2);
          if (minU > maxU || maxU < 0 || minU >= W) continue;
          const v0 = V[i0], v1 = V[i1], v2 = V[i2];
          const minV = Math.ceil(v0 < v1 ? (v0 < v2 ? v0 : v2) : v1 < v2 ? v1 : v2);
          const maxV = Math.floor(v0 > v1 ? (v0 > v2 ? v0 : v2) : v1 > v2 ? v1 : v2);
          if (minV > maxV || maxV < 0 || minV >= H) continue;
          this.#curTri = t;
          this.#raster(u0, v0, 1 / z0, 0, 0, u1, v1, 1 / z1, 1, 0, u2, v2, 1 / z2, 0, 1);
        } else if (z0 > near || z1 > near || z2 > near) {
          this.#curTri = t;
          this.#clipAndRaster(i0, i1, i2, k);
        }
      }
    }
  }

  /** Clips triangle (i0, i1, i2) at z = near (Sutherland–Hodgman, one plane) and draws the 1–2 pieces. */
  #clipAndRaster(i0: number, i1: number, i2: number, k: Pinhole): void {
    const X = this.#X, Y = this.#Y, Z = this.#Z;
    const ids = [i0, i1, i2];
    const bary = [
      [0, 0],
      [1, 0],
      [0, 1],
    ];
    const poly: number[][] = []; // [x, y, z, a1, a2]
    for (let e = 0; e < 3; e++) {
      const a = ids[e], b = ids[(e + 1) % 3];
      const ina = Z[a] > k.near, inb = Z[b] > k.near;
      if (ina) poly.push([X[a], Y[a], Z[a], bary[e][0], bary[e][1]]);
      if (ina !== inb) {
        const s = (k.near - Z[a]) / (Z[b] - Z[a]);
        const nb = bary[(e + 1) % 3];
        poly.push([X[a] + s * (X[b] - X[a]), Y[a] + s * (Y[b] - Y[a]), k.near, bary[e][0] + s * (nb[0] - bary[e][0]), bary[e][1] + s * (nb[1] - bary[e][1])]);
      }
    }
    const p = poly.map(([x, y, z, a1, a2]) => [(k.fx * x) / z + k.cx, (k.fy * y) / z + k.cy, 1 / z, a1, a2]);
    for (let j = 1; j + 1 < p.length; j++) {
      const [A, B, C] = [p[0], p[j], p[j + 1]];
      this.#raster(A[0], A[1], A[2], A[3], A[4], B[0], B[1], B[2], B[3], B[4], C[0], C[1], C[2], C[3], C[4]);
    }
  }

  /**
   * Scan-converts one projected triangle: vertices (u, v) in pixels, w = 1/z, (a, b) = the vertex's barycentric
   * coordinates of the original triangle's vertices 1 and 2 (they differ from the corners only for clipped pieces).
   */
  #raster(u0: number, v0: number, w0: number, a0: number, b0: number, u1: number, v1: number, w1: number, a1: number, b1: number, u2: number, v2: number, w2: number, a2: number, b2: number): void {
    let area = (u1 - u0) * (v2 - v0) - (u2 - u0) * (v1 - v0);
    if (area === 0 || !Number.isFinite(area)) return;
    if (area < 0) {
      // Make the winding positive (no back-face culling: decimated meshes are not reliably oriented).
      let t = u1; u1 = u2; u2 = t;
      t = v1; v1 = v2; v2 = t;
      t = w1; w1 = w2; w2 = t;
      t = a1; a1 = a2; a2 = t;
      t = b1; b1 = b2; b2 = t;
      area = -area;
    }
    const W = this.#W, H = this.#H;
    let minU = Math.ceil(u0 < u1 ? (u0 < u2 ? u0 : u2) : u1 < u2 ? u1 : u2);
    let maxU = Math.floor(u0 > u1 ? (u0 > u2 ? u0 : u2) : u1 > u2 ? u1 : u2);
    let minV = Math.ceil(v0 < v1 ? (v0 < v2 ? v0 : v2) : v1 < v2 ? v1 : v2);
    let maxV = Math.floor(v0 > v1 ? (v0 > v2 ? v0 : v2) : v1 > v2 ? v1 : v2);
    if (minU < 0) minU = 0;
    if (minV < 0) minV = 0;
    if (maxU > W - 1) maxU = W - 1;
    if (maxV > H - 1) maxV = H - 1;
    if (minU > maxU || minV > maxV) return;
    this.trianglesDrawn++;
    const inv = 1 / area;
    // Edge functions at the first pixel centre, and their steps along u and v.
    const e0du = -(v2 - v1) * inv, e0dv = (u2 - u1) * inv;
    const e1du = -(v0 - v2) * inv, e1dv = (u0 - u2) * inv;
    const e2du = -(v1 - v0) * inv, e2dv = (u1 - u0) * inv;
    let e0row = ((u2 - u1) * (minV - v1) - (v2 - v1) * (minU - u1)) * inv;
    let e1row = ((u0 - u2) * (minV - v2) - (v0 - v2) * (minU - u2)) * inv;
    let e2row = ((u1 - u0) * (minV - v0) - (v1 - v0) * (minU - u0)) * inv;
    const iz = this.#iz, item = this.#item, tri = this.#tri, B1 = this.#b1, B2 = this.#b2;
    const cur = this.#cur, curTri = this.#curTri;
    // A small tolerance keeps shared edges watertight against rounding.
    const eps = -1e-9;
    for (let py = minV; py <= maxV; py++) {
      let e0 = e0row, e1 = e1row, e2 = e2row;
      let p = py * W + minU;
      for (let px = minU; px <= maxU; px++, p++, e0 += e0du, e1 += e1du, e2 += e2du) {
        if (e0 < eps || e1 < eps || e2 < eps) continue;
        const w = e0 * w0 + e1 * w1 + e2 * w2;
        if (w <= iz[p]) continue;
        iz[p] = w;
        item[p] = cur;
        tri[p] = curTri;
        // Perspective-correct weights of the three vertices, then the original triangle's barycentrics.
        const q0 = (e0 * w0) / w, q1 = (e1 * w1) / w, q2 = (e2 * w2) / w;
        B1[p] = q0 * a0 + q1 * a1 + q2 * a2;
        B2[p] = q0 * b0 + q1 * b1 + q2 * b2;
      }
      e0row += e0dv;
      e1row += e1dv;
      e2row += e2dv;
    }
  }

  /** Visibility buffer → G-buffer: geom ids, z-depth, and interpolated normals turned into the optical frame. */
  #resolve(k: Pinhole, out: GBuffer): void {
    const n = k.width * k.height;
    const iz = this.#iz, item = this.#item, tri = this.#tri, B1 = this.#b1, B2 = this.#b2, rot = this.#rot;
    const N = out.normal;
    for (let p = 0; p < n; p++) {
      const d = item[p];
      if (d < 0) {
        out.geom[p] = -1;
        out.depth[p] = Infinity;
        continue;
      }
      const dg = this.#draw[d];
      out.geom[p] = dg.geom;
      out.depth[p] = 1 / iz[p];
      const idx = dg.mesh.idx, nrm = dg.mesh.nrm;
      const t = tri[p];
      const i0 = 3 * idx[3 * t], i1 = 3 * idx[3 * t + 1], i2 = 3 * idx[3 * t + 2];
      const b1 = B1[p], b2 = B2[p], b0 = 1 - b1 - b2;
      const a = b0 * nrm[i0] + b1 * nrm[i1] + b2 * nrm[i2];
      const b = b0 * nrm[i0 + 1] + b1 * nrm[i1 + 1] + b2 * nrm[i2 + 1];
      const c = b0 * nrm[i0 + 2] + b1 * nrm[i1 + 2] + b2 * nrm[i2 + 2];
      const o = 9 * d;
      let nx = rot[o] * a + rot[o + 1] * b + rot[o + 2] * c;
      let ny = rot[o + 3] * a + rot[o + 4] * b + rot[o + 5] * c;
      let nz = rot[o + 6] * a + rot[o + 7] * b + rot[o + 8] * c;
      const l = Math.sqrt(nx * nx + ny * ny + nz * nz) || 1;
      // Face the camera: the pixel's ray is (x/z, y/z, 1) up to scale.
      const rx = (p % k.width - k.cx) / k.fx, ry = (((p / k.width) | 0) - k.cy) / k.fy;
      const s = nx * rx + ny * ry + nz > 0 ? -1 / l : 1 / l;
      nx *= s;
      ny *= s;
      nz *= s;
      N[3 * p] = nx;
      N[3 * p + 1] = ny;
      N[3 * p + 2] = nz;
    }
  }
}

/** Inward unit normals of the four side planes of a pinhole frustum (through the optical centre), 3 per plane. */
function frustumPlanes(k: Pinhole): Float64Array {
  // Image borders in normalised coordinates, half a pixel outside the outermost centres.
  const xl = (-0.5 - k.cx) / k.fx, xr = (k.width - 0.5 - k.cx) / k.fx;
  const yt = (-0.5 - k.cy) / k.fy, yb = (k.height - 0.5 - k.cy) / k.fy;
  const out = new Float64Array(12);
  const set = (i: number, a: number, b: number, c: number) => {
    const l = Math.hypot(a, b, c);
    out.set([a / l, b / l, c / l], 3 * i);
  };
  set(0, 1, 0, -xl); // x ≥ xl·z
  set(1, -1, 0, xr); // x ≤ xr·z
  set(2, 0, 1, -yt);
  set(3, 0, -1, yb);
  return out;
}
