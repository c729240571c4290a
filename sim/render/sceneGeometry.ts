/**
 * The drawable geometry of a MuJoCo model, extracted once: one triangle mesh per visible geom in that geom's frame
 * (posed every frame from data.geom_xpos / geom_xmat), with the look MuJoCo's renderer gives it (colour, specular,
 * shininess, emission). Meshes come from the model's own mesh_vert / mesh_face / mesh_normal / mesh_facenormal
 * arrays (after MuJoCo's compiler has centred and aligned them to the geom frame); primitives are tessellated by
 * primitives.ts.
 */
import type { MainModule, MjModel } from "mujoco-js";
import { boxMesh, capsuleMesh, cylinderMesh, ellipsoidMesh, planeMesh, DEFAULT_TESSELLATION, type Tessellation, type TriMesh } from "./primitives.ts";

/** MuJoCo's mjtGeom values (mjmodel.h). */
export const GEOM = { plane: 0, hfield: 1, sphere: 2, capsule: 3, ellipsoid: 4, cylinder: 5, box: 6, mesh: 7, sdf: 8 } as const;

/** One drawable geom. */
export interface DrawGeom {
  /** MuJoCo geom id (what segmentation reports). */
  geom: number;
  type: number;
  mesh: TriMesh;
  /** Radius of a sphere about the geom origin that holds every vertex (frustum culling); Infinity for planes. */
  radius: number;
  /** Linear RGB in [0, 1] and the material terms of MuJoCo's fixed-function lighting. */
  rgb: [number, number, number];
  specular: number;
  /** OpenGL exponent (MuJoCo: shininess · 128). */
  shininess: number;
  emission: number;
}

/** Options of {@link sceneGeometry}. */
export interface SceneGeometryOptions {
  /**
   * Geom groups drawn; MuJoCo's default visualisation shows groups 0, 1 and 2 (mjvOption.geomgroup), which is where
   * models put visual geoms (Menagerie: visual = group 2, collision = group 3).
   */
  groups?: readonly number[];
  tessellation?: Tessellation;
}

/** MuJoCo's default geom rgba: a geom that kept it shows its material's colour instead (engine_vis_visualize.c). */
const DEFAULT_RGBA = [0.5, 0.5, 0.5, 1];

/** Builds the drawable geoms of `model`; geoms that are invisible (alpha 0, hidden group) are left out. */
export function sceneGeometry(mj: MainModule, model: MjModel, opts: SceneGeometryOptions = {}): DrawGeom[] {
  const groups = new Set(opts.groups ?? [0, 1, 2]);
  const tess = opts.tessellation ?? DEFAULT_TESSELLATION;
  const type = model.geom_type as Int32Array;
  const group = model.geom_group as Int32Array;
  const size = model.geom_size as Float64Array;
  const dataid = model.geom_dataid as Int32Array;
  const matid = model.geom_matid as Int32Array;
  const grgba = model.geom_rgba as Float32Array;
  const mrgba = model.mat_rgba as Float32Array;
  const mspec = model.mat_specular as Float32Array;
  const mshin = model.mat_shininess as Float32Array;
  const memit = model.mat_emission as Float32Array;
  // An infinite plane (size 0) is drawn out to the far clipping distance, as MuJoCo does.
  const far = model.vis.map.zfar * model.stat.extent;
  const meshCache = new Map<number, { mesh: TriMesh; radius: number }>();
  const out: DrawGeom[] = [];
  for (let g = 0; g < model.ngeom; g++) {
    if (!groups.has(group[g])) continue;
    const m = matid[g];
    let rgba = Array.from(grgba.subarray(4 * g, 4 * g + 4));
    if (m >= 0 && rgba.every((v, k) => Math.abs(v - DEFAULT_RGBA[k]) < 1e-6)) rgba = Array.from(mrgba.subarray(4 * m, 4 * m + 4));
    if (rgba[3] <= 0) continue;
    const s = [size[3 * g], size[3 * g + 1], size[3 * g + 2]];
    let mesh: TriMesh;
    let radius: number;
    switch (type[g]) {
      case GEOM.plane:
        mesh = planeMesh(s[0] > 0 ? s[0] : far, s[1] > 0 ? s[1] : far);
        radius = Infinity;
        break;
      case GEOM.sphere:
        mesh = ellipsoidMesh(s[0], s[0], s[0], tess);
        radius = s[0];
        break;
      case GEOM.ellipsoid:
        mesh = ellipsoidMesh(s[0], s[1], s[2], tess);
        radius = Math.max(s[0], s[1], s[2]);
        break;
      case GEOM.capsule:
        mesh = capsuleMesh(s[0], s[1], tess);
        radius = s[0] + s[1];
        break;
      case GEOM.cylinder:
        mesh = cylinderMesh(s[0], s[1], tess);
        radius = Math.hypot(s[0], s[1]);
        break;
      case GEOM.box:
        mesh = boxMesh(s[0], s[1], s[2]);
        radius = Math.hypot(s[0], s[1], s[2]);
        break;
      case GEOM.mesh: {
        const id = dataid[g];
        let cached = meshCache.get(id);
        if (!cached) {
          cached = modelMesh(model, id);
          meshCache.set(id, cached);
        }
        mesh = cached.mesh;
        radius = cached.radius;
        break;
      }
      default:
        // Height fields and SDFs: not drawn (no rlft scene uses them); say so instead of drawing nothing silently.
        throw new Error(`sim renderer: geom ${geomName(mj, model, g)} has type ${type[g]} (height field or SDF), which the renderer does not draw; put it in a hidden group (e.g. group="3") or use a mesh`);
    }
    out.push({
      geom: g,
      type: type[g],
      mesh,
      radius,
      rgb: [rgba[0], rgba[1], rgba[2]],
      specular: m >= 0 ? mspec[m] : 0.5,
      shininess: (m >= 0 ? mshin[m] : 0.5) * 128,
      emission: m >= 0 ? memit[m] : 0,
    });
  }
  return out;
}

/** Mesh `id` of the model as an indexed mesh with one normal per corner (MuJoCo keeps vertex and normal indices apart). */
function modelMesh(model: MjModel, id: number): { mesh: TriMesh; radius: number } {
  const vadr = (model.mesh_vertadr as Int32Array)[id];
  const nadr = (model.mesh_normaladr as Int32Array)[id];
  const fadr = (model.mesh_faceadr as Int32Array)[id];
  const fnum = (model.mesh_facenum as Int32Array)[id];
  const vert = model.mesh_vert as Float32Array;
  const normal = model.mesh_normal as Float32Array;
  const face = model.mesh_face as Int32Array;
  const facenormal = model.mesh_facenormal as Int32Array;
  // Unique (vertex, normal) pairs become the vertices of the drawn mesh.
  const key = new Map<number, number>();
  const pos: number[] = [];
  const nrm: number[] = [];
  const idx = new Uint32Array(3 * fnum);
  const nnum = (model.mesh_normalnum as Int32Array)[id];
  let radius = 0;
  for (let k = 0; k < 3 * fnum; k++) {
    const v = face[3 * fadr + k];
    const n = facenormal[3 * fadr + k];
    const h = v * (nnum + 1) + n;
    let i = key.get(h);
    if (i === undefined) {
      i = pos.length / 3;
      key.set(h, i);
      const p = 3 * (vadr + v);
      pos.push(vert[p], vert[p + 1], vert[p + 2]);
      radius = Math.max(radius, Math.hypot(vert[p], vert[p + 1], vert[p + 2]));
      const q = 3 * (nadr + n);
      nrm.push(normal[q], normal[q + 1], normal[q + 2]);
    }
    idx[k] = i;
  }
  return { mesh: { pos: Float32Array.from(pos), nrm: Float32Array.from(nrm), idx }, radius };
}

/**
 * "name" or "#id" of a geom, for messages. Read from the model's name table: mujoco-js's mj_id2name returns junk
 * instead of null for unnamed objects.
 */
export function geomName(_mj: MainModule, model: MjModel, g: number): string {
  const names = model.names as Uint8Array;
  let end = (model.name_geomadr as Int32Array)[g];
  const start = end;
  while (end < names.length && names[end] !== 0) end++;
  return end > start ? `"${new TextDecoder().decode(names.subarray(start, end))}"` : `#${g}`;
}
