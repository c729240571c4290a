/**
 * MuJoCo's own renderer as the reference for rlft's sim cameras: runs mujoco_reference.py (the `mujoco` Python
 * package from the learner's `peers` extra, headless through OSMesa) on the same scene, poses and cameras, and returns
 * its RGB, segmentation and depth images.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { findPython } from "../../app/python.ts";
import { matMul } from "../../calibration/linalg.ts";
import { quaternionFromMatrix } from "../../calibration/rotation.ts";
import { MUJOCO_TO_OPTICAL, type SimCameraSpec } from "./cameraPose.ts";

const SCRIPT = fileURLToPath(new URL("./mujoco_reference.py", import.meta.url));

/** A state to render: the whole qpos, and the mocap bodies' poses when the scene has any. */
export interface ReferencePose {
  qpos: number[];
  mocap_pos?: number[];
  mocap_quat?: number[];
}

/** One camera image from MuJoCo. */
export interface ReferenceFrame {
  width: number;
  height: number;
  rgb: Uint8Array;
  segmentation: Int32Array;
  depth: Float32Array;
}

/** Why MuJoCo's renderer cannot run headless here (no OSMesa), or null when it can. Throws when `mujoco` is missing. */
export function mujocoGlUnavailable(): string | null {
  const py = findPython();
  const probe = "import os; os.environ.setdefault('MUJOCO_GL','osmesa'); import mujoco; mujoco.Renderer(mujoco.MjModel.from_xml_string('<mujoco/>'), 8, 8)";
  const r = spawnSync(py, ["-c", probe], { encoding: "utf8", env: { ...process.env, MUJOCO_GL: process.env.MUJOCO_GL ?? "osmesa" } });
  if (r.status === 0) return null;
  const err = `${r.stderr}`;
  if (/No module named 'mujoco'/.test(err)) throw new Error(`the mujoco Python package is missing from ${py}: run node scripts/setup-python.mjs (it installs the learner's peers extra)`);
  const last = err.trim().split("\n").pop() ?? "";
  return `MuJoCo cannot render headless here (MUJOCO_GL=${process.env.MUJOCO_GL ?? "osmesa"}: ${last}); install OSMesa (apt-get install libosmesa6) or set MUJOCO_GL=egl`;
}

/**
 * Renders `specs` at every state of `poses` with MuJoCo. `xml` is compiled beside the files of `assetDir` (linked into a
 * temporary folder) when given. Returns frames[pose][camera] and the MuJoCo version that drew them.
 */
export function renderWithMujoco(xml: string, assetDir: string | null, poses: readonly ReferencePose[], specs: readonly SimCameraSpec[]): { version: string; frames: ReferenceFrame[][] } {
  const dir = mkdtempSync(join(tmpdir(), "rlft-mjref-"));
  try {
    if (assetDir) for (const entry of readdirSync(assetDir)) symlinkSync(join(assetDir, entry), join(dir, entry));
    const xmlPath = join(dir, "__reference_scene.xml");
    writeFileSync(xmlPath, xml);
    const cameras = specs.map((s) => ({ name: s.name, body: s.parentBody, ...mujocoCamera(s), width: s.model.width, height: s.model.height }));
    const req = { xml: xmlPath, out: dir, poses, cameras };
    const r = spawnSync(findPython(), [SCRIPT], { input: JSON.stringify(req), encoding: "utf8", env: { ...process.env, MUJOCO_GL: process.env.MUJOCO_GL ?? "osmesa" } });
    if (r.status !== 0) throw new Error(`mujoco_reference.py failed (exit ${r.status}):\n${r.stderr}`);
    const version = (JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}") as { mujoco?: string }).mujoco ?? "?";
    const frames = poses.map((_, i) =>
      specs.map((s) => {
        const base = join(dir, `${i}_${s.name}`);
        const buf = (ext: string) => {
          const b = readFileSync(`${base}.${ext}`);
          return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
        };
        return { width: s.model.width, height: s.model.height, rgb: new Uint8Array(buf("rgb")), segmentation: new Int32Array(buf("seg")), depth: new Float32Array(buf("depth")) };
      }),
    );
    return { version, frames };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The MJCF camera (pose in the parent body, MuJoCo convention; fovy) that sees what `spec` sees. */
export function mujocoCamera(spec: SimCameraSpec): { pos: number[]; quat: number[]; fovy: number } {
  const m = spec.model;
  if (Math.abs(m.fx - m.fy) > 1e-6 * m.fx || Math.abs(m.cx - (m.width - 1) / 2) > 1e-6 || Math.abs(m.cy - (m.height - 1) / 2) > 1e-6 || m.k1 || m.k2 || m.p1 || m.p2) {
    throw new Error(`camera ${spec.name}: MuJoCo's fovy camera needs square pixels, a centred principal point and no distortion`);
  }
  const [x, y, z, w] = quaternionFromMatrix(matMul(spec.pose.R, MUJOCO_TO_OPTICAL));
  return { pos: [...spec.pose.t], quat: [w, x, y, z], fovy: (2 * Math.atan(m.height / 2 / m.fy) * 180) / Math.PI };
}

/** The state of `data` as a ReferencePose. */
export function referencePose(data: { qpos: unknown; mocap_pos: unknown; mocap_quat: unknown }): ReferencePose {
  return { qpos: Array.from(data.qpos as Float64Array), mocap_pos: Array.from(data.mocap_pos as Float64Array), mocap_quat: Array.from(data.mocap_quat as Float64Array) };
}

/** How two renderings of the same camera agree: share of pixels with the same geom, depth error where both see it. */
export function compareFrames(a: { segmentation: Int32Array; depth: Float32Array }, b: { segmentation: Int32Array; depth: Float32Array }): { segmentationAgreement: number; depthMedianM: number; depthP95M: number } {
  const n = a.segmentation.length;
  let same = 0;
  const err: number[] = [];
  for (let p = 0; p < n; p++) {
    if (a.segmentation[p] !== b.segmentation[p]) continue;
    same++;
    if (a.segmentation[p] >= 0) err.push(Math.abs(a.depth[p] - b.depth[p]));
  }
  err.sort((x, y) => x - y);
  const q = (f: number) => (err.length ? err[Math.min(err.length - 1, Math.floor(f * err.length))] : 0);
  return { segmentationAgreement: same / n, depthMedianM: q(0.5), depthP95M: q(0.95) };
}
