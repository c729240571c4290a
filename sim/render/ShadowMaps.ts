/**
 * Shadows as MuJoCo's classic renderer makes them: one depth map per shadow-casting light, drawn from the light,
 * and a point is lit by that light when it is not farther from the light than the map's surface. Where MuJoCo spends
 * a 4096² map on the light's whole cone (spot: min(2·cutoff·shadowscale, 160)°; directional: ±shadowclip), each
 * camera here gets maps fitted to what it sees — a cone from the light around the bounding sphere of the camera's
 * visible points, which holds every caster between the light and those points — so a small map stays sharp in a wrist
 * camera's close-up. Maps are redrawn only when the state or the focus changes. Point lights cast no shadows
 * (MuJoCo's classic renderer does not draw them either).
 */
import type { MjData, MjModel } from "mujoco-js";
import type { DrawGeom } from "./sceneGeometry.ts";
import { Rasterizer, type Pinhole } from "./Rasterizer.ts";
import { createWorldPose, type WorldPose } from "./cameraPose.ts";
import type { Light } from "./lighting.ts";
import type { ShadowTest } from "./shade.ts";

/** A world-space sphere. */
export interface Sphere {
  c: readonly number[];
  r: number;
}

interface ShadowMap {
  cam: WorldPose;
  k: Pinhole;
  /** z-depth seen from the light, 0 = nothing. */
  depth: Float32Array;
}

/** The shadow maps of a scene's lights, redrawn when the state changes. */
export class ShadowMaps {
  readonly size: number;
  readonly #raster: Rasterizer;
  readonly #model: MjModel;
  #key = NaN;
  #tests: ShadowTest[] = [];

  constructor(draw: readonly DrawGeom[], model: MjModel, size = 128) {
    this.size = size;
    this.#raster = new Rasterizer(draw);
    this.#model = model;
  }

  /**
   * One test per light (null for lights that cast no shadow), for the current data, sharp around `focus` (a world
   * sphere: what the camera sees); without a focus, the light's whole cone as MuJoCo draws it.
   */
  tests(data: MjData, lights: readonly Light[], focus?: Sphere): ShadowTest[] {
    const key = stateKey(data, lights) + (focus ? focus.c[0] * 19 + focus.c[1] * 23 + focus.c[2] * 29 + focus.r * 31 : 0);
    if (key === this.#key && this.#tests.length === lights.length) return this.#tests;
    this.#key = key;
    this.#tests = lights.map((l) => {
      if (!l.castShadow || l.type === "point") return null;
      const map = this.#draw(data, l, focus);
      return (x, y, z) => lit(map, x, y, z);
    });
    return this.#tests;
  }

  #draw(data: MjData, l: Light, focus: Sphere | undefined): ShadowMap {
    const m = this.#model;
    const extent = m.stat.extent;
    const S = this.size;
    const cam = createWorldPose();
    let f: number;
    let near: number;
    let axis: readonly number[] = l.dir;
    if (l.type === "spot") {
      // MuJoCo's cone, narrowed to the focus sphere when the light is outside it.
      let half = (Math.min(2 * l.cutoffDeg * m.vis.map.shadowscale, 160) * Math.PI) / 360;
      cam.t.set(l.pos);
      if (focus) {
        const d = [focus.c[0] - l.pos[0], focus.c[1] - l.pos[1], focus.c[2] - l.pos[2]];
        const dist = Math.hypot(d[0], d[1], d[2]);
        if (dist > focus.r * 1.05) {
          axis = d.map((v) => v / dist);
          half = Math.min(half, Math.asin(focus.r / dist) * 1.02);
        }
      }
      f = S / 2 / Math.tan(half);
      near = m.vis.map.znear * extent;
    } else {
      // Directional: from far away along −dir, around the focus (else ±shadowclip around the model's centre).
      const D = 20 * extent;
      const half = focus ? focus.r * 1.02 : m.vis.map.shadowclip * extent;
      const c = focus ? focus.c : (m.stat.center as ArrayLike<number>);
      cam.t.set([c[0] - D * l.dir[0], c[1] - D * l.dir[1], c[2] - D * l.dir[2]]);
      f = ((S / 2) * D) / half;
      near = D - 3 * extent;
    }
    lookAlong(axis, cam);
    const k: Pinhole = { width: S, height: S, fx: f, fy: f, cx: (S - 1) / 2, cy: (S - 1) / 2, near };
    const iz = this.#raster.renderInverseDepth(data, cam, k);
    const depth = new Float32Array(S * S);
    for (let p = 0; p < depth.length; p++) depth[p] = iz[p] > 0 ? 1 / iz[p] : 0;
    return { cam, k, depth };
  }
}

/** Fraction of the 2×2 nearest map texels that see (x, y, z) (percentage-closer filtering). */
function lit(map: ShadowMap, x: number, y: number, z: number): number {
  const { R, t } = map.cam;
  const dx = x - t[0], dy = y - t[1], dz = z - t[2];
  const qx = R[0] * dx + R[3] * dy + R[6] * dz;
  const qy = R[1] * dx + R[4] * dy + R[7] * dz;
  const qz = R[2] * dx + R[5] * dy + R[8] * dz;
  const k = map.k;
  if (qz <= k.near) return 1;
  const u = (k.fx * qx) / qz + k.cx;
  const v = (k.fy * qy) / qz + k.cy;
  const u0 = Math.floor(u), v0 = Math.floor(v);
  // Depth bias against self-shadowing ("acne"): a few mm plus a share of the distance for grazing surfaces.
  const bias = 0.004 + 0.01 * qz;
  let sum = 0;
  for (let j = 0; j < 2; j++) {
    for (let i = 0; i < 2; i++) {
      const uu = u0 + i, vv = v0 + j;
      if (uu < 0 || vv < 0 || uu >= k.width || vv >= k.height) {
        sum++;
        continue;
      }
      const d = map.depth[vv * k.width + uu];
      if (d === 0 || qz <= d + bias) sum++;
    }
  }
  return sum / 4;
}

/** Sets cam.R to a frame whose z axis is `dir` (x, y any orthonormal completion). */
function lookAlong(dir: readonly number[], cam: WorldPose): void {
  const l = Math.hypot(dir[0], dir[1], dir[2]) || 1;
  const z = [dir[0] / l, dir[1] / l, dir[2] / l];
  const a = Math.abs(z[0]) < 0.9 ? [1, 0, 0] : [0, 1, 0];
  const y0 = [z[1] * a[2] - z[2] * a[1], z[2] * a[0] - z[0] * a[2], z[0] * a[1] - z[1] * a[0]];
  const yl = Math.hypot(y0[0], y0[1], y0[2]);
  const y = y0.map((c) => c / yl);
  const x = [y[1] * z[2] - y[2] * z[1], y[2] * z[0] - y[0] * z[2], y[0] * z[1] - y[1] * z[0]];
  // Columns x, y, z: world ← light.
  cam.R.set([x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2]]);
}

/** A cheap fingerprint of the state the maps depend on: body poses and lights. */
function stateKey(data: MjData, lights: readonly Light[]): number {
  const xp = data.xpos as Float64Array;
  const xq = data.xquat as Float64Array;
  let h = data.time;
  for (let i = 0; i < xp.length; i++) h = h * 1.000001 + xp[i] * (i + 1);
  for (let i = 0; i < xq.length; i++) h = h * 1.000001 + xq[i] * (i + 7);
  for (const l of lights) h += l.pos[0] * 3 + l.pos[1] * 5 + l.pos[2] * 7 + l.dir[0] * 11 + l.dir[1] * 13 + l.dir[2] * 17 + l.diffuse[0];
  return h;
}
