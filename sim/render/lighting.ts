/**
 * Lights of a sim scene, read from the MuJoCo model every frame (data.light_xpos / light_xdir follow bodies), plus
 * MuJoCo's headlight, and the per-pixel shading MuJoCo's classic renderer computes with OpenGL's fixed-function
 * lighting (render_gl3.c: colour material = ambient and diffuse, specular = mat_specular, exponent = shininess·128,
 * local viewer; no global ambient when the scene has lights, 0.3 when it has none; emission·rgba added). Shading is
 * done per pixel, where OpenGL interpolates per-vertex colours: at 84 px the difference is in highlights only.
 */
import type { MjData, MjModel } from "mujoco-js";
import type { WorldPose } from "./cameraPose.ts";

/** mjtLightType (MuJoCo ≥ 3.3). */
export const LIGHT_TYPE = { spot: 0, directional: 1, point: 2, image: 3 } as const;

/** One light in world coordinates. */
export interface Light {
  type: "spot" | "directional" | "point";
  pos: [number, number, number];
  /** Unit direction the light shines along. */
  dir: [number, number, number];
  ambient: [number, number, number];
  diffuse: [number, number, number];
  specular: [number, number, number];
  /** Constant, linear, quadratic attenuation with distance (spot and point). */
  attenuation: [number, number, number];
  /** Spot cone half-angle (degrees) and exponent. */
  cutoffDeg: number;
  exponent: number;
  castShadow: boolean;
}

/** The scene's lights for the current data, in MuJoCo's order; inactive lights are left out. */
export function modelLights(model: MjModel, data: MjData): Light[] {
  const out: Light[] = [];
  const v3 = (a: ArrayLike<number>, i: number): [number, number, number] => [a[3 * i], a[3 * i + 1], a[3 * i + 2]];
  const type = model.light_type as Int32Array;
  const active = model.light_active as Uint8Array;
  const xpos = data.light_xpos as Float64Array;
  const xdir = data.light_xdir as Float64Array;
  for (let i = 0; i < model.nlight; i++) {
    if (!active[i]) continue;
    const t = type[i];
    // Image-based lights have no direct term in the classic renderer either.
    if (t === LIGHT_TYPE.image) continue;
    out.push({
      type: t === LIGHT_TYPE.directional ? "directional" : t === LIGHT_TYPE.point ? "point" : "spot",
      pos: v3(xpos, i),
      dir: v3(xdir, i),
      ambient: v3(model.light_ambient as Float32Array, i),
      diffuse: v3(model.light_diffuse as Float32Array, i),
      specular: v3(model.light_specular as Float32Array, i),
      attenuation: v3(model.light_attenuation as Float32Array, i),
      cutoffDeg: (model.light_cutoff as Float32Array)[i],
      exponent: (model.light_exponent as Float32Array)[i],
      castShadow: !!(model.light_castshadow as Uint8Array)[i],
    });
  }
  return out;
}

/** MuJoCo's headlight (visual/headlight): a directional light from the camera along its axis, when active. */
export function headlight(model: MjModel, cam: WorldPose, scale = 1): Light | null {
  const h = model.vis.headlight;
  if (!h.active) return null;
  const f: [number, number, number] = [cam.R[2], cam.R[5], cam.R[8]];
  const c = (a: ArrayLike<number>): [number, number, number] => [a[0] * scale, a[1] * scale, a[2] * scale];
  return { type: "directional", pos: [cam.t[0], cam.t[1], cam.t[2]], dir: f, ambient: c(h.ambient), diffuse: c(h.diffuse), specular: c(h.specular), attenuation: [1, 0, 0], cutoffDeg: 180, exponent: 0, castShadow: false };
}
