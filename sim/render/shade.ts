/**
 * G-buffer → RGB: OpenGL fixed-function lighting (the model MuJoCo's classic renderer uses, lighting.ts) evaluated per
 * pixel in the camera's optical frame, with optional shadow factors per light.
 */
import type { GBuffer } from "./gbuffer.ts";
import type { WorldPose } from "./cameraPose.ts";
import type { Light } from "./lighting.ts";

/** Surface terms per MuJoCo geom id (ngeom entries; geoms never drawn may hold anything). */
export interface GeomLooks {
  /** RGB in [0, 1], 3 per geom. */
  rgb: Float32Array;
  specular: Float32Array;
  /** OpenGL exponent. */
  shininess: Float32Array;
  emission: Float32Array;
}

/** Fraction of a light reaching a world point (1 = lit, 0 = in shadow); null = no shadows for that light. */
export type ShadowTest = ((x: number, y: number, z: number) => number) | null;

/** What shading needs besides the G-buffer. */
export interface ShadeInputs {
  cam: WorldPose;
  /** Normalised image coordinates (x/z, y/z) of every pixel's ray, 2 per pixel (pixelRays()). */
  xy: Float32Array;
  lights: readonly Light[];
  /** One entry per light (same order), or empty for no shadows. */
  shadows: readonly ShadowTest[];
  looks: GeomLooks;
  /** Colour of pixels that see nothing, RGB in [0, 1] (MuJoCo clears to black). */
  background: readonly [number, number, number];
  /** Global ambient (MuJoCo: 0 with lights, 0.3 without). */
  globalAmbient: number;
}

// Per-light record in a flat array (the inner loop stays monomorphic): see packLights().
const STRIDE = 20;
// Offsets in a light's record (numeric literals so the hot loop reads constants).
const KIND = 0, PX = 1, PY = 2, PZ = 3, DX = 4, DY = 5, DZ = 6, AR = 7, AG = 8, AB = 9, FR = 10, FG = 11, FB = 12, SR = 13, SG = 14, SB = 15, C0 = 16, C1 = 17, C2 = 18, COSCUT = 19;

/** Lights in the optical frame: positions relative to the camera, directions rotated. */
function packLights(lights: readonly Light[], cam: WorldPose): { f: Float64Array; exponent: Float64Array } {
  const R = cam.R;
  const f = new Float64Array(STRIDE * lights.length);
  const exponent = new Float64Array(lights.length);
  lights.forEach((l, i) => {
    const o = STRIDE * i;
    const p = [l.pos[0] - cam.t[0], l.pos[1] - cam.t[1], l.pos[2] - cam.t[2]];
    f[o + KIND] = l.type === "directional" ? 0 : l.type === "spot" ? 1 : 2;
    for (let k = 0; k < 3; k++) {
      f[o + PX + k] = R[k] * p[0] + R[3 + k] * p[1] + R[6 + k] * p[2];
      f[o + DX + k] = R[k] * l.dir[0] + R[3 + k] * l.dir[1] + R[6 + k] * l.dir[2];
      f[o + AR + k] = l.ambient[k];
      f[o + FR + k] = l.diffuse[k];
      f[o + SR + k] = l.specular[k];
      f[o + C0 + k] = l.attenuation[k];
    }
    f[o + COSCUT] = Math.cos((l.cutoffDeg * Math.PI) / 180);
    exponent[i] = l.exponent;
  });
  return { f, exponent };
}

/** Shades `g` into `out` (3 bytes per pixel, row-major). */
export function shade(g: GBuffer, s: ShadeInputs, out: Uint8Array): void {
  const { cam, xy, looks } = s;
  const R = cam.R;
  const { f: LF, exponent: LE } = packLights(s.lights, cam);
  const nl = s.lights.length;
  const bg = s.background.map((c) => Math.round(255 * Math.min(1, Math.max(0, c))));
  const n = g.width * g.height;
  const ga = s.globalAmbient;
  const GEO = g.geom, DEP = g.depth, NRM = g.normal, RGB = looks.rgb, EM = looks.emission, SPEC = looks.specular, SHIN = looks.shininess;
  const shadows = Array.from({ length: nl }, (_, i) => s.shadows[i] ?? null);
  // Per geom, the n·h below which its highlight adds under 1/1024 (a quarter grey level): the pow is skipped there.
  const minNdh = SHIN.map((e) => (e > 0 ? Math.pow(1 / 1024, 1 / e) : 0));
  for (let p = 0; p < n; p++) {
    const id = GEO[p];
    if (id < 0) {
      out[3 * p] = bg[0];
      out[3 * p + 1] = bg[1];
      out[3 * p + 2] = bg[2];
      continue;
    }
    const z = DEP[p];
    const px = xy[2 * p] * z;
    const py = xy[2 * p + 1] * z;
    const pz = z;
    const nx = NRM[3 * p], ny = NRM[3 * p + 1], nz = NRM[3 * p + 2];
    // Unit vector to the eye: −(x, y, 1)/|(x, y, 1)|, the same for every depth along the pixel's ray.
    const xr = xy[2 * p], yr = xy[2 * p + 1];
    const iv = -1 / Math.sqrt(xr * xr + yr * yr + 1);
    const vx = xr * iv, vy = yr * iv, vz = iv;
    const r0 = RGB[3 * id], g0 = RGB[3 * id + 1], b0 = RGB[3 * id + 2];
    const em = EM[id];
    const spec = SPEC[id];
    const shin = SHIN[id];
    const ndhMin = minNdh[id];
    let cr = (em + ga) * r0;
    let cg = (em + ga) * g0;
    let cb = (em + ga) * b0;
    let worldDone = false;
    let wx = 0, wy = 0, wz = 0;
    for (let i = 0; i < nl; i++) {
      const o = STRIDE * i;
      const kind = LF[o + KIND];
      let lx: number, ly: number, lz: number;
      let att = 1;
      if (kind === 0) {
        lx = -LF[o + DX];
        ly = -LF[o + DY];
        lz = -LF[o + DZ];
      } else {
        lx = LF[o + PX] - px;
        ly = LF[o + PY] - py;
        lz = LF[o + PZ] - pz;
        const dist = Math.sqrt(lx * lx + ly * ly + lz * lz) || 1;
        lx /= dist;
        ly /= dist;
        lz /= dist;
        att = 1 / (LF[o + C0] + LF[o + C1] * dist + LF[o + C2] * dist * dist);
        if (kind === 1) {
          const c = -(lx * LF[o + DX] + ly * LF[o + DY] + lz * LF[o + DZ]);
          const e = LE[i];
          att *= c < LF[o + COSCUT] ? 0 : e === 0 ? 1 : e === 1 ? c : Math.pow(c, e);
        }
      }
      if (att <= 0) continue;
      const test = shadows[i];
      if (test) {
        if (!worldDone) {
          wx = cam.t[0] + R[0] * px + R[1] * py + R[2] * pz;
          wy = cam.t[1] + R[3] * px + R[4] * py + R[5] * pz;
          wz = cam.t[2] + R[6] * px + R[7] * py + R[8] * pz;
          worldDone = true;
        }
        att *= test(wx, wy, wz);
        if (att <= 0) continue;
      }
      const ndl = nx * lx + ny * ly + nz * lz;
      const dif = ndl > 0 ? ndl : 0;
      cr += att * (LF[o + AR] + LF[o + FR] * dif) * r0;
      cg += att * (LF[o + AG] + LF[o + FG] * dif) * g0;
      cb += att * (LF[o + AB] + LF[o + FB] * dif) * b0;
      if (ndl > 0 && spec > 0) {
        let hx = lx + vx, hy = ly + vy, hz = lz + vz;
        const hl = Math.sqrt(hx * hx + hy * hy + hz * hz) || 1;
        hx /= hl;
        hy /= hl;
        hz /= hl;
        const ndh = nx * hx + ny * hy + nz * hz;
        if (ndh > ndhMin) {
          const sp = att * spec * Math.pow(ndh, shin);
          cr += sp * LF[o + SR];
          cg += sp * LF[o + SG];
          cb += sp * LF[o + SB];
        }
      }
    }
    out[3 * p] = cr >= 1 ? 255 : cr <= 0 ? 0 : Math.round(255 * cr);
    out[3 * p + 1] = cg >= 1 ? 255 : cg <= 0 ? 0 : Math.round(255 * cg);
    out[3 * p + 2] = cb >= 1 ? 255 : cb <= 0 ? 0 : Math.round(255 * cb);
  }
}
