/**
 * Camera frames for the experience-link benches: the SO-101's front and wrist cameras (launch/cameras/ calibration,
 * raster renderer, at their calibrated sizes as launch/sim_so101.yaml renders them) rendered along a smooth arm motion, so the learner compresses what
 * a session sends rather than noise or a flat colour. The wire carries raw bytes, so its cost does not depend on them.
 */
import { loadSo101RenderScene } from "../sim/render/so101RenderScene.ts";
import { SimCameras } from "../sim/render/SimCameras.ts";
import { so101CameraFromFiles } from "../sim/render/so101Cameras.ts";
import type { Transition, TransitionFrame } from "../contracts/Transition.ts";

export const LINK_CAMERAS = ["front", "wrist"] as const;

// Arm poses the motion passes through (shoulder_pan … gripper, rad), as in bench/cameraRender.ts.
const POSES = [
  [0, -1.0, 1.0, 1.1, 0, 0.3],
  [0.4, -0.6, 0.8, 1.3, -0.5, 0.8],
  [-0.5, -1.3, 1.4, 0.9, 0.7, 0.1],
  [0.2, -0.2, 0.4, 1.5, 1.2, 1.0],
];

/** `count` consecutive frames per camera of an arm moving through POSES (one pose every count/4 frames). */
export async function renderLinkFrames(count = 64): Promise<Record<string, TransitionFrame[]>> {
  const s = await loadSo101RenderScene();
  const { mj, model, data } = s;
  const cams = SimCameras.create(mj, model, data, LINK_CAMERAS.map((name) => so101CameraFromFiles("launch/cameras", name)), { renderer: "raster", shadows: false });
  const out: Record<string, TransitionFrame[]> = Object.fromEntries(LINK_CAMERAS.map((c) => [c, []]));
  try {
    for (let i = 0; i < count; i++) {
      const u = (i / count) * POSES.length;
      const [a, b] = [POSES[Math.floor(u) % POSES.length], POSES[(Math.floor(u) + 1) % POSES.length]];
      const q = a.map((x, j) => x + (b[j] - x) * (u - Math.floor(u)));
      (data.qpos as Float64Array).set(q, 0);
      mj.mj_kinematics(model, data);
      mj.mj_camlight(model, data);
      for (const c of LINK_CAMERAS) {
        const f = cams.render(c);
        out[c].push({ width: f.width, height: f.height, rgb: Uint8Array.from(f.rgb) });
      }
    }
  } finally {
    cams.close();
    s.close();
  }
  return out;
}

/** `t` with the frames of step `k` and `k + 1` (cyclic) of `frames`. */
export function withFrames(t: Transition, frames: Record<string, TransitionFrame[]>, k: number): Transition {
  const at = (j: number) => Object.fromEntries(Object.entries(frames).map(([c, list]) => [c, list[j % list.length]]));
  return { ...t, images: at(k), nextImages: at(k + 1) };
}
