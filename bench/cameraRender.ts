/**
 * Camera render rows of `npm run bench`: ms per frame of the SO-101's front and wrist cameras (the calibration files
 * in launch/cameras/) for each renderer, at their calibrated size (84 × 84) and 128/84 of it, on sim/render's SO-101 scene, and what one 30 Hz control tick costs
 * with both cameras (physics + both frames) as a real-time factor. Every frame is of a new arm pose, so nothing is
 * reused between frames except what a real tick shares (shadow maps between the two cameras of one tick).
 * Times: wall and CPU (process.cpuUsage) per frame, median over batches; on a busy machine CPU time is the steadier.
 */
import { loadSo101RenderScene } from "../sim/render/so101RenderScene.ts";
import { SimCameras, type RendererKind } from "../sim/render/SimCameras.ts";
import { so101CameraFromFiles } from "../sim/render/so101Cameras.ts";

/** One measured configuration. */
export interface CameraRenderRow {
  renderer: RendererKind;
  shadows: boolean;
  /** Frame size: the camera's calibrated size times `scale`. */
  scale: number;
  width: number;
  height: number;
  camera: string;
  wallMs: number;
  cpuMs: number;
}

/** The whole camera section's result. */
export interface CameraRenderResult {
  rows: CameraRenderRow[];
  /** One control tick at 30 Hz: physics steps for 1/30 s, then both cameras at their calibrated sizes (raster, no shadows / shadows). */
  tick: { physicsMs: number; bothCamerasMs: number; bothCamerasShadowsMs: number; realtimeFactor: number; realtimeFactorShadows: number };
  loadAverage: number[];
}

// Arm poses the frames cycle through (shoulder_pan … gripper, rad).
const POSES = [
  [0, -1.0, 1.0, 1.1, 0, 0.3],
  [0.4, -0.6, 0.8, 1.3, -0.5, 0.8],
  [-0.5, -1.3, 1.4, 0.9, 0.7, 0.1],
  [0.2, -0.2, 0.4, 1.5, 1.2, 1.0],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Measures every row; `frames` per batch, `batches` batches. */
export async function benchCameraRender(o: { frames?: number; batches?: number; cameraDir?: string } = {}): Promise<CameraRenderResult> {
  const frames = o.frames ?? 40;
  const batches = o.batches ?? 5;
  const dir = o.cameraDir ?? "launch/cameras";
  const s = await loadSo101RenderScene();
  const { mj, model, data } = s;
  let k = 0;
  const nextPose = () => {
    // A fresh view each time: views into WASM memory detach when it grows.
    (data.qpos as Float64Array).set(POSES[k++ % POSES.length], 0);
    // Positions only (what rendering reads): the physics of a tick is measured on its own below.
    mj.mj_kinematics(model, data);
    mj.mj_camlight(model, data);
  };
  /** Median wall and CPU ms of one call of `fn` (after a warm-up). */
  const time = (fn: () => void): { wallMs: number; cpuMs: number } => {
    for (let i = 0; i < 10; i++) fn();
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let b = 0; b < batches; b++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < frames; i++) fn();
      const c = process.cpuUsage(c0);
      wall.push((performance.now() - t0) / frames);
      cpu.push((c.user + c.system) / 1000 / frames);
    }
    return { wallMs: median(wall), cpuMs: median(cpu) };
  };
  const rows: CameraRenderRow[] = [];
  const rig = (renderer: RendererKind, shadows: boolean, scale: number) =>
    SimCameras.create(mj, model, data, ["front", "wrist"].map((name) => so101CameraFromFiles(dir, name, scale)), { renderer, shadows });
  try {
    for (const [renderer, shadows] of [["raster", false], ["raster", true], ["ray", false]] as const) {
      for (const scale of [1, 128 / 84]) {
        const cams = rig(renderer, shadows, scale);
        for (const camera of ["front", "wrist"]) {
          const { width, height } = cams.spec(camera).model;
          rows.push({ renderer, shadows, scale, width, height, camera, ...time(() => {
            nextPose();
            cams.render(camera);
          }) });
        }
        cams.close();
      }
    }
    // One control tick of the SO-101 at 30 Hz: the model's own timestep, as many steps as 1/30 s holds.
    const steps = Math.max(1, Math.round(1 / 30 / model.opt.timestep));
    const physics = time(() => {
      for (let i = 0; i < steps; i++) mj.mj_step(model, data);
    });
    const both = (shadows: boolean) => {
      const cams = rig("raster", shadows, 1);
      const t = time(() => {
        nextPose();
        cams.render("front");
        cams.render("wrist");
      });
      cams.close();
      return t;
    };
    const plain = both(false);
    const shadowed = both(true);
    const factor = (cameras: number) => 1000 / 30 / (physics.cpuMs + cameras);
    return {
      rows,
      tick: { physicsMs: physics.cpuMs, bothCamerasMs: plain.cpuMs, bothCamerasShadowsMs: shadowed.cpuMs, realtimeFactor: factor(plain.cpuMs), realtimeFactorShadows: factor(shadowed.cpuMs) },
      loadAverage: (await import("node:os")).loadavg(),
    };
  } finally {
    s.close();
  }
}

/** The rows as the table docs/sim.md shows. */
export function formatCameraRender(r: CameraRenderResult): string {
  const lines = ["camera render, SO-101 scene (launch/cameras/so101_*.json), ms per frame    wall ms    CPU ms"];
  for (const x of r.rows) lines.push(`  ${`${x.renderer}${x.shadows ? " + shadows" : ""}`.padEnd(17)} ${`${x.width}×${x.height}`.padEnd(8)} ${x.camera.padEnd(6)}                            ${x.wallMs.toFixed(2).padStart(7)}   ${x.cpuMs.toFixed(2).padStart(7)}`);
  const t = r.tick;
  lines.push(`  one 30 Hz tick (CPU ms): physics ${t.physicsMs.toFixed(2)} + both cameras raster ${t.bothCamerasMs.toFixed(2)} → ${t.realtimeFactor.toFixed(1)}× real time; with shadows ${t.bothCamerasShadowsMs.toFixed(2)} → ${t.realtimeFactorShadows.toFixed(1)}×`);
  lines.push(`  (load average ${r.loadAverage.map((x) => x.toFixed(1)).join(" ")}; CPU time is the steadier number on a busy machine)`);
  return lines.join("\n");
}
