/**
 * The simulated cameras of a MuJoCo scene: each configured by its calibration (intrinsics + pose on a body, as
 * cameraPose.ts describes), rendered on demand from the current MjData with shading and lighting. Independent of any
 * particular sim class: it takes the mujoco module, model and data, so every scene (rlft_arm5, the SO-101 tasks)
 * can have cameras.
 *
 * Renderer (docs/sim.md has the measurements): `raster` (default) is the z-buffer rasteriser over the model's meshes
 * and tessellated primitives; `ray` casts one ray per pixel with mj_multiRay. Both feed the same shading.
 */
import type { MainModule, MjData, MjModel } from "mujoco-js";
import { createGBuffer, type GBuffer } from "./gbuffer.ts";
import { cameraWorldPose, createWorldPose, parentBodyId, type SimCameraSpec, type WorldPose } from "./cameraPose.ts";
import { sceneGeometry, type DrawGeom } from "./sceneGeometry.ts";
import { Rasterizer } from "./Rasterizer.ts";
import { RayCaster } from "./RayCaster.ts";
import { pixelGrid, type PixelGrid } from "./pixelGrid.ts";
import { headlight, modelLights, type Light } from "./lighting.ts";
import { shade, type GeomLooks, type ShadowTest } from "./shade.ts";
import { ShadowMaps, type Sphere } from "./ShadowMaps.ts";
import { compose, type Pose } from "../../calibration/rotation.ts";

/** Which visibility pass renders the cameras. */
export type RendererKind = "raster" | "ray";

/** Options of {@link SimCameras.create}. */
export interface SimCamerasOptions {
  renderer?: RendererKind;
  /** Shadows from the scene's shadow-casting lights (shadow maps, raster only); default true. */
  shadows?: boolean;
  /** Geom groups drawn (default 0, 1, 2: MuJoCo's default visual groups). */
  groups?: readonly number[];
  /** Background colour (RGB in [0, 1]); MuJoCo's is black. */
  background?: readonly [number, number, number];
}

/** One rendered frame. */
export interface SimFrame {
  name: string;
  width: number;
  height: number;
  /** H×W×3, row-major, top row first. */
  rgb: Uint8Array;
  /** z-depth along the optical axis (m), H×W; +Infinity where nothing is seen. */
  depth: Float32Array;
  /** MuJoCo geom id per pixel, −1 for background. */
  segmentation: Int32Array;
}

/** Per-episode changes of the look (domain randomisation, DomainRandomizer.ts); absent fields keep the scene's. */
export interface LookOverrides {
  /** geom id → RGB in [0, 1]. */
  colors?: ReadonlyMap<number, readonly [number, number, number]>;
  /** Replaces the model's lights (given in modelLights() order). */
  lights?: (nominal: readonly Light[]) => Light[];
  /** Scales MuJoCo's headlight (ambient, diffuse, specular). */
  headlightScale?: number;
  /** camera name → small pose change applied in the camera's optical frame (pose ← pose·delta). */
  cameraJitter?: ReadonlyMap<string, Pose>;
}

interface CameraState {
  spec: SimCameraSpec;
  body: number;
  grid: PixelGrid;
  gbuf: GBuffer;
  caster: RayCaster | null;
  pose: WorldPose;
  /** The pinhole image's shaded colour (== output when there is no remap). */
  shaded: Uint8Array;
}

/** A set of sim cameras over one model/data pair. */
export class SimCameras {
  readonly names: readonly string[];
  readonly renderer: RendererKind;
  readonly #mj: MainModule;
  readonly #model: MjModel;
  readonly #data: MjData;
  readonly #draw: DrawGeom[];
  readonly #raster: Rasterizer | null;
  readonly #cams = new Map<string, CameraState>();
  readonly #nominal: GeomLooks;
  #looks: GeomLooks;
  #overrides: LookOverrides = {};
  readonly #shadowMaps: ShadowMaps | null;
  readonly #background: readonly [number, number, number];

  private constructor(mj: MainModule, model: MjModel, data: MjData, specs: readonly SimCameraSpec[], opts: SimCamerasOptions) {
    this.#mj = mj;
    this.#model = model;
    this.#data = data;
    this.renderer = opts.renderer ?? "raster";
    this.#background = opts.background ?? [0, 0, 0];
    const groups = opts.groups ?? [0, 1, 2];
    this.#draw = sceneGeometry(mj, model, { groups });
    this.#nominal = looksOf(this.#draw, model.ngeom);
    this.#looks = this.#nominal;
    this.#raster = this.renderer === "raster" ? new Rasterizer(this.#draw) : null;
    this.#shadowMaps = this.renderer === "raster" && (opts.shadows ?? true) ? new ShadowMaps(this.#draw, model) : null;
    // MuJoCo's near clipping distance (visual/map znear × extent), so depth and segmentation match its renderer.
    const near = model.vis.map.znear * model.stat.extent;
    const seen = new Set<string>();
    for (const spec of specs) {
      if (seen.has(spec.name)) throw new Error(`camera ${spec.name} is configured twice: give each camera its own name`);
      seen.add(spec.name);
      const grid = pixelGrid(spec.model, near);
      const body = parentBodyId(mj, model, spec);
      this.#cams.set(spec.name, {
        spec,
        body,
        grid,
        gbuf: createGBuffer(this.renderer === "raster" ? grid.pinhole.width : spec.model.width, this.renderer === "raster" ? grid.pinhole.height : spec.model.height),
        caster: this.renderer === "ray" ? new RayCaster(mj, model, spec.model.width, spec.model.height, grid.rays, groups) : null,
        pose: createWorldPose(),
        shaded: new Uint8Array(3 * (this.renderer === "raster" ? grid.pinhole.width * grid.pinhole.height : spec.model.width * spec.model.height)),
      });
    }
    this.names = specs.map((s) => s.name);
  }

  /** Cameras `specs` over `model`/`data`; throws naming the camera when one cannot be placed in this scene. */
  static create(mj: MainModule, model: MjModel, data: MjData, specs: readonly SimCameraSpec[], opts: SimCamerasOptions = {}): SimCameras {
    return new SimCameras(mj, model, data, specs, opts);
  }

  /** The spec a camera was made from. */
  spec(name: string): SimCameraSpec {
    return this.#camera(name).spec;
  }

  /** The scene's own colour of every drawn geom (geom id → RGB in [0, 1]). */
  nominalColors(): Map<number, [number, number, number]> {
    const rgb = this.#nominal.rgb;
    return new Map(this.#draw.map((d) => [d.geom, [rgb[3 * d.geom], rgb[3 * d.geom + 1], rgb[3 * d.geom + 2]]]));
  }

  /** Sets (or with `{}` clears) the per-episode look changes. */
  setOverrides(o: LookOverrides): void {
    this.#overrides = o;
    if (!o.colors?.size) {
      this.#looks = this.#nominal;
      return;
    }
    const rgb = this.#nominal.rgb.slice();
    for (const [g, c] of o.colors) rgb.set(c, 3 * g);
    this.#looks = { ...this.#nominal, rgb };
  }

  /** The scene's lights now, with the overrides applied. */
  lights(): Light[] {
    const nominal = modelLights(this.#model, this.#data);
    return this.#overrides.lights ? this.#overrides.lights(nominal) : nominal;
  }

  /** Where camera `name` is in the world for the current data (world ← optical). */
  worldPose(name: string): WorldPose {
    const c = this.#camera(name);
    const jitter = this.#overrides.cameraJitter?.get(name);
    const pose = jitter ? compose(c.spec.pose, jitter) : c.spec.pose;
    return cameraWorldPose(this.#data, c.body, pose, c.pose);
  }

  /** Renders camera `name` from the current data (poses as of the last mj_forward / mj_step). */
  render(name: string): SimFrame {
    const c = this.#camera(name);
    const cam = this.worldPose(name);
    const { width, height } = c.spec.model;
    if (c.caster) c.caster.render(this.#data, cam, c.gbuf);
    else this.#raster!.render(this.#data, cam, c.grid.pinhole, c.gbuf);
    const lights = this.lights();
    const shadows: ShadowTest[] = this.#shadowMaps ? this.#shadowMaps.tests(this.#data, lights, visibleSphere(c.gbuf, c.grid.pinholeRays, cam)) : [];
    const head = headlight(this.#model, cam, this.#overrides.headlightScale ?? 1);
    const all = head ? [head, ...lights] : lights;
    const allShadows = head ? [null, ...shadows] : shadows;
    shade(c.gbuf, { cam, xy: c.caster ? c.grid.rays : c.grid.pinholeRays, lights: all, shadows: allShadows, looks: this.#looks, background: this.#background, globalAmbient: lights.length ? 0 : 0.3 }, c.shaded);
    const n = width * height;
    const map = c.caster ? null : c.grid.remap;
    const out: SimFrame = map
      ? { name, width, height, rgb: new Uint8Array(3 * n), depth: new Float32Array(n), segmentation: new Int32Array(n) }
      : { name, width, height, rgb: c.shaded.slice(), depth: c.gbuf.depth.slice(), segmentation: c.gbuf.geom.slice() };
    if (map) {
      for (let p = 0; p < n; p++) {
        const q = map[p];
        out.rgb[3 * p] = c.shaded[3 * q];
        out.rgb[3 * p + 1] = c.shaded[3 * q + 1];
        out.rgb[3 * p + 2] = c.shaded[3 * q + 2];
        out.depth[p] = c.gbuf.depth[q];
        out.segmentation[p] = c.gbuf.geom[q];
      }
    }
    const invalid = c.grid.invalid;
    if (invalid) {
      const bg = this.#background.map((v) => Math.round(255 * Math.min(1, Math.max(0, v))));
      for (let p = 0; p < n; p++) {
        if (!invalid[p]) continue;
        out.rgb.set(bg, 3 * p);
        out.depth[p] = Infinity;
        out.segmentation[p] = -1;
      }
    }
    return out;
  }

  /** Frees WASM-side buffers (ray renderer). */
  close(): void {
    for (const c of this.#cams.values()) c.caster?.close();
  }

  #camera(name: string): CameraState {
    const c = this.#cams.get(name);
    if (!c) throw new Error(`no sim camera named ${name} (cameras: ${this.names.join(", ") || "none"})`);
    return c;
  }

  /** The mujoco module the cameras render with. */
  get mujoco(): MainModule {
    return this.#mj;
  }
}

/** Bounding sphere (world) of the points a camera sees, from every 3rd pixel of its G-buffer; undefined if none. */
function visibleSphere(g: GBuffer, xy: Float32Array, cam: WorldPose): Sphere | undefined {
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  const R = cam.R;
  for (let p = 0; p < g.depth.length; p += 3) {
    const z = g.depth[p];
    if (z === Infinity) continue;
    const x = xy[2 * p] * z, y = xy[2 * p + 1] * z;
    for (let i = 0; i < 3; i++) {
      const w = cam.t[i] + R[3 * i] * x + R[3 * i + 1] * y + R[3 * i + 2] * z;
      if (w < lo[i]) lo[i] = w;
      if (w > hi[i]) hi[i] = w;
    }
  }
  if (lo[0] === Infinity) return undefined;
  const c = [0, 1, 2].map((i) => (lo[i] + hi[i]) / 2);
  return { c, r: Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) / 2 };
}

/** Nominal looks of the drawn geoms, indexed by geom id. */
function looksOf(draw: readonly DrawGeom[], ngeom: number): GeomLooks {
  const looks: GeomLooks = { rgb: new Float32Array(3 * ngeom), specular: new Float32Array(ngeom), shininess: new Float32Array(ngeom), emission: new Float32Array(ngeom) };
  for (const d of draw) {
    looks.rgb.set(d.rgb, 3 * d.geom);
    looks.specular[d.geom] = d.specular;
    looks.shininess[d.geom] = d.shininess;
    looks.emission[d.geom] = d.emission;
  }
  return looks;
}
