/**
 * Domain randomisation of what the sim cameras see (Tobin et al. 2017, "Domain Randomization for Transferring Deep
 * Neural Networks from Simulation to the Real World"): per episode, from the episode's seed alone (reproducible),
 * the colours of the scene's objects and table, the direction and intensity of every light, and each camera's pose
 * (its mounting tolerance). The robot keeps its colours and the physics is untouched. Colours are jittered around
 * the scene's own (hue, saturation, value) rather than drawn at random, so a task that names colours ("the red
 * cube") keeps its meaning.
 */
import type { MainModule, MjModel } from "mujoco-js";
import { createRng, type Rng } from "../rng.ts";
import { rodrigues, type Pose } from "../../calibration/rotation.ts";
import type { Light } from "./lighting.ts";
import type { LookOverrides } from "./SimCameras.ts";

/** How much varies (the launch file's camera.randomize, hardware/camera/CameraConfig.ts). */
export interface RandomizationRanges {
  /** Hue shift, fraction of the colour wheel (±). */
  colorHue: number;
  /** Saturation and value, relative (±). */
  colorSaturation: number;
  colorValue: number;
  /** Largest turn of a light's direction (degrees). */
  lightDirectionDeg: number;
  /** Intensity scale range. */
  lightIntensity: readonly [number, number];
  /** Largest camera displacement (m) and rotation (degrees). */
  cameraPositionM: number;
  cameraRotationDeg: number;
}

/** Draws per-episode look overrides for one scene. */
export class DomainRandomizer {
  readonly #ranges: RandomizationRanges;
  readonly #nominal: Map<number, [number, number, number]>;
  readonly #cameras: readonly string[];
  readonly #centre: [number, number, number];

  /** `nominalRgb`: the scene's colour of every drawn geom (SimCameras.nominalColors()). */
  constructor(mj: MainModule, model: MjModel, nominalRgb: ReadonlyMap<number, readonly [number, number, number]>, cameras: readonly string[], ranges: RandomizationRanges) {
    this.#ranges = ranges;
    this.#cameras = cameras;
    const scene = sceneGeoms(mj, model);
    this.#nominal = new Map([...nominalRgb].filter(([g]) => scene.has(g)).map(([g, c]) => [g, [c[0], c[1], c[2]]]));
    const c = model.stat.center as ArrayLike<number>;
    this.#centre = [c[0], c[1], c[2]];
  }

  /** Geoms whose colour varies (scene objects and the table; not the robot). */
  get randomizedGeoms(): number[] {
    return [...this.#nominal.keys()];
  }

  /** The overrides of the episode with this seed. */
  sample(seed: number): LookOverrides {
    // A stream of its own: the same seed also drives the episode's start state, which must not change with DR on.
    const rng = createRng((Math.imul(seed >>> 0, 2654435761) ^ 0x5bd1e995) >>> 0);
    const r = this.#ranges;
    const colors = new Map<number, readonly [number, number, number]>();
    for (const [g, c] of this.#nominal) {
      const [h, s, v] = rgbToHsv(c);
      colors.set(g, hsvToRgb((h + rng.uniform(-r.colorHue, r.colorHue) + 1) % 1, clamp01(s * (1 + rng.uniform(-r.colorSaturation, r.colorSaturation))), clamp01(v * (1 + rng.uniform(-r.colorValue, r.colorValue)))));
    }
    // Enough draws for any number of lights, fixed per seed; lights take them in order.
    const lightDraws = Array.from({ length: 16 }, () => ({ turn: randomRotation(rng, r.lightDirectionDeg), scale: rng.uniform(r.lightIntensity[0], r.lightIntensity[1]) }));
    const centre = this.#centre;
    const lights = (nominal: readonly Light[]): Light[] =>
      nominal.map((l, i) => {
        const d = lightDraws[i % lightDraws.length];
        const turn = (v: readonly number[]) => mul(d.turn, v);
        const scale = (c: readonly number[]): [number, number, number] => [c[0] * d.scale, c[1] * d.scale, c[2] * d.scale];
        // The light swings about the scene's centre, so a spot light keeps aiming at the scene.
        const rel = [l.pos[0] - centre[0], l.pos[1] - centre[1], l.pos[2] - centre[2]];
        const p = turn(rel);
        return { ...l, pos: [centre[0] + p[0], centre[1] + p[1], centre[2] + p[2]], dir: turn(l.dir) as [number, number, number], ambient: scale(l.ambient), diffuse: scale(l.diffuse), specular: scale(l.specular) };
      });
    const headlightScale = rng.uniform(r.lightIntensity[0], r.lightIntensity[1]);
    const cameraJitter = new Map<string, Pose>();
    for (const name of this.#cameras) {
      const R = randomRotation(rng, r.cameraRotationDeg);
      const t = randomInBall(rng, r.cameraPositionM);
      cameraJitter.set(name, { R, t });
    }
    return { colors, lights, headlightScale, cameraJitter };
  }
}

/**
 * Geoms of the scene rather than the robot. The robot is every body under a top-level body (a child of the world)
 * whose subtree holds a hinge, slide or ball joint — the arm's fixed base included; free-floating objects, mocap
 * targets, static fixtures and the world's own geoms are the scene.
 */
function sceneGeoms(mj: MainModule, model: MjModel): Set<number> {
  const parent = model.body_parentid as Int32Array;
  const jntnum = model.body_jntnum as Int32Array;
  const jntadr = model.body_jntadr as Int32Array;
  const jtype = model.jnt_type as Int32Array;
  const FREE = mj.mjtJoint.mjJNT_FREE.value;
  // Top-level ancestor of every body (bodies are stored parents first).
  const top = new Int32Array(model.nbody);
  for (let b = 1; b < model.nbody; b++) top[b] = parent[b] === 0 ? b : top[parent[b]];
  const robotRoots = new Set<number>();
  for (let b = 1; b < model.nbody; b++) {
    for (let j = 0; j < jntnum[b]; j++) if (jtype[jntadr[b] + j] !== FREE) robotRoots.add(top[b]);
  }
  const body = model.geom_bodyid as Int32Array;
  const out = new Set<number>();
  for (let g = 0; g < model.ngeom; g++) if (body[g] === 0 || !robotRoots.has(top[body[g]])) out.add(g);
  return out;
}

/** A rotation by a uniform angle in [0, maxDeg] about a uniformly random axis. */
function randomRotation(rng: Rng, maxDeg: number): number[][] {
  const axis = randomUnit(rng);
  const angle = (rng.uniform(0, maxDeg) * Math.PI) / 180;
  return rodrigues(axis.map((a) => a * angle));
}

function randomUnit(rng: Rng): number[] {
  for (;;) {
    const v = [rng.normal(), rng.normal(), rng.normal()];
    const l = Math.hypot(v[0], v[1], v[2]);
    if (l > 1e-9) return v.map((x) => x / l);
  }
}

/** Uniform in a ball of radius r. */
function randomInBall(rng: Rng, r: number): number[] {
  const u = randomUnit(rng);
  const d = r * Math.cbrt(rng.next());
  return u.map((x) => x * d);
}

function mul(R: number[][], v: readonly number[]): number[] {
  return R.map((row) => row[0] * v[0] + row[1] * v[1] + row[2] * v[2]);
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}

function rgbToHsv([r, g, b]: readonly number[]): [number, number, number] {
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const d = max - min;
  let h = 0;
  if (d > 0) {
    if (max === r) h = ((g - b) / d + 6) % 6;
    else if (max === g) h = (b - r) / d + 2;
    else h = (r - g) / d + 4;
    h /= 6;
  }
  return [h, max > 0 ? d / max : 0, max];
}

function hsvToRgb(h: number, s: number, v: number): [number, number, number] {
  const i = Math.floor(h * 6);
  const f = h * 6 - i;
  const p = v * (1 - s);
  const q = v * (1 - f * s);
  const t = v * (1 - (1 - f) * s);
  const table: [number, number, number][] = [
    [v, t, p],
    [q, v, p],
    [p, v, t],
    [p, q, v],
    [t, p, v],
    [v, p, q],
  ];
  return table[((i % 6) + 6) % 6];
}
