/**
 * Diagnosis helper for bench:pixels: how a fixed front camera frames the SO-101 workspace, from geometry alone (no
 * rendering, no arm occlusion). Over the start states of `count` seeds of push_cube and pick_place it projects the
 * cube (8 corners, convex hull area in pixels) and the target disc, and prints the cube's area at t = 0 (median, min),
 * how often the cube / target lie wholly in the frame, and the rows and columns the workspace spans (cube and targets
 * of all seeds).
 *
 * Usage: node --import tsx bench/pixdiag/frontView.ts [count] [x,y,z/tx,ty,tz/fovy[/WxH] ...] (frame 84x84 unless given)
 *   without views: the shipped front camera (SO101_FRONT_VIEW) and the wide one (SO101_FRONT_WIDE_VIEW).
 */
import { project } from "../../calibration/CameraModel.ts";
import { lookAtPose, pinholeModel } from "../../sim/render/mujocoCamera.ts";
import { SO101_FRONT_VIEW, SO101_FRONT_WIDE_VIEW } from "../../sim/render/so101Cameras.ts";
import { sampleSo101Episode } from "../../sim/so101/sampleSo101Episode.ts";
import { SO101_SPEC } from "../../sim/so101/so101Spec.ts";

interface View { position: readonly number[]; target: readonly number[]; fovyDeg: number; width: number; height: number }
const parseView = (s: string): View => {
  const [p = "", t = "", f, size = "84x84"] = s.split("/");
  const [width, height] = size.split("x").map(Number);
  const v = { position: p.split(",").map(Number), target: t.split(",").map(Number), fovyDeg: Number(f), width, height };
  if (v.position.length !== 3 || v.target.length !== 3 || !(v.fovyDeg > 0) || [...v.position, ...v.target].some((x) => !Number.isFinite(x)) || !(width >= 8 && height >= 8)) {
    throw new Error(`view "${s}": write it as x,y,z/tx,ty,tz/fovy[/WxH] (camera position, point it looks at, vertical FOV in degrees, frame size)`);
  }
  return v;
};
const [countArg, ...viewArgs] = process.argv.slice(2);
const count = Number(countArg ?? 300);
const views: View[] = viewArgs.length ? viewArgs.map(parseView) : [SO101_FRONT_VIEW, SO101_FRONT_WIDE_VIEW];

function hullArea(pts: [number, number][]): number {
  const p = [...pts].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cross = (o: number[], a: number[], b: number[]) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const half = (q: [number, number][]) => {
    const h: [number, number][] = [];
    for (const x of q) {
      while (h.length >= 2 && cross(h[h.length - 2], h[h.length - 1], x) <= 0) h.pop();
      h.push(x);
    }
    return h.slice(0, -1);
  };
  const h = [...half(p), ...half([...p].reverse())];
  let a = 0;
  for (let i = 0; i < h.length; i++) a += h[i][0] * h[(i + 1) % h.length][1] - h[(i + 1) % h.length][0] * h[i][1];
  return Math.abs(a) / 2;
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

for (const v of views) {
  const cam = pinholeModel(v.width, v.height, v.fovyDeg);
  const pose = lookAtPose(v.position, v.target);
  const toPixel = (w: number[]): [number, number] => {
    const d = [0, 1, 2].map((i) => w[i] - pose.t[i]);
    const c = [0, 1, 2].map((j) => pose.R[0][j] * d[0] + pose.R[1][j] * d[1] + pose.R[2][j] * d[2]);
    return project(cam, c);
  };
  const inFrame = ([u, r]: [number, number]) => u >= -0.5 && u <= v.width - 0.5 && r >= -0.5 && r <= v.height - 0.5;
  const h = SO101_SPEC.cubeHalf;
  const line: string[] = [];
  for (const task of ["push_cube", "pick_place"] as const) {
    const areas: number[] = [];
    let cubeIn = 0, targetIn = 0;
    const rows = [Infinity, -Infinity], cols = [Infinity, -Infinity];
    for (let s = 0; s < count; s++) {
      const e = sampleSo101Episode(task, s);
      const c = e.cube!;
      const corners: [number, number][] = [];
      for (const dx of [-h, h]) for (const dy of [-h, h]) for (const z of [0, 2 * h]) {
        const cy = Math.cos(c.yaw), sy = Math.sin(c.yaw);
        corners.push(toPixel([c.x + cy * dx - sy * dy, c.y + sy * dx + cy * dy, z]));
      }
      areas.push(hullArea(corners));
      if (corners.every(inFrame)) cubeIn++;
      const disc = Array.from({ length: 16 }, (_, k) => toPixel([e.target[0] + SO101_SPEC.targetRadius * Math.cos((k * Math.PI) / 8), e.target[1] + SO101_SPEC.targetRadius * Math.sin((k * Math.PI) / 8), 0]));
      if (disc.every(inFrame)) targetIn++;
      for (const [u, r] of [...corners, ...disc]) {
        rows[0] = Math.min(rows[0], r); rows[1] = Math.max(rows[1], r);
        cols[0] = Math.min(cols[0], u); cols[1] = Math.max(cols[1], u);
      }
    }
    line.push(`${task}: cube ${median(areas).toFixed(0)} px (min ${Math.min(...areas).toFixed(0)}), cube in frame ${cubeIn}/${count}, target ${targetIn}/${count}, rows ${rows[0].toFixed(0)}..${rows[1].toFixed(0)}, cols ${cols[0].toFixed(0)}..${cols[1].toFixed(0)}`);
  }
  console.log(`${v.position.join(",")}/${v.target.join(",")}/${v.fovyDeg}/${v.width}x${v.height}\n  ${line.join("\n  ")}`);
}
