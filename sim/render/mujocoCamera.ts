/**
 * Sim camera specs from things a scene author has at hand: an MJCF `<camera>` (pose relative to a body, fovy or the
 * physical sensorsize/focal/resolution of MuJoCo ≥ 3.0), or a position and a point to look at. These produce the
 * calibration files rlft ships for its sim cameras (launch/cameras/); at run time cameras come from those files.
 */
import type { MainModule, MjData, MjModel } from "mujoco-js";
import type { CameraModel } from "../../calibration/CameraModel.ts";
import { compose, invert, type Pose } from "../../calibration/rotation.ts";
import { MUJOCO_TO_OPTICAL, type SimCameraSpec } from "./cameraPose.ts";

/** An undistorted pinhole of width × height with vertical field of view `fovyDeg`, principal point at the centre. */
export function pinholeModel(width: number, height: number, fovyDeg: number): CameraModel {
  const f = height / 2 / Math.tan((fovyDeg * Math.PI) / 360);
  return { width, height, fx: f, fy: f, cx: (width - 1) / 2, cy: (height - 1) / 2, k1: 0, k2: 0, p1: 0, p2: 0 };
}

/** world ← optical for a camera at `position` looking at `target`, image x axis horizontal (world z up). */
export function lookAtPose(position: readonly number[], target: readonly number[]): Pose {
  const f = [0, 1, 2].map((i) => target[i] - position[i]);
  const fl = Math.hypot(f[0], f[1], f[2]);
  const z = f.map((v) => v / fl);
  // x = z × up (right), y = z × x (down).
  const x0 = [z[1], -z[0], 0];
  const xl = Math.hypot(x0[0], x0[1]);
  if (xl < 1e-9) throw new Error("lookAtPose: the camera looks straight up or down; give the target a horizontal offset");
  const x = x0.map((v) => v / xl);
  const y = [z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0]];
  return {
    R: [
      [x[0], y[0], z[0]],
      [x[1], y[1], z[1]],
      [x[2], y[2], z[2]],
    ],
    t: [...position],
  };
}

/**
 * Camera `camera` of the MJCF as a spec on body `parentBody` (a body the camera's body is fixed to, e.g. the gripper
 * for a camera on a mount), rendering width × height. Intrinsics: from fovy, or from the physical sensor
 * (focal / sensorsize / resolution) centre-cropped to the frame's aspect ratio. `data` must be forwarded.
 */
export function specFromMujocoCamera(mj: MainModule, model: MjModel, data: MjData, camera: string, o: { name: string; parentBody: string; width: number; height: number }): SimCameraSpec {
  const id = mj.mj_name2id(model, mj.mjtObj.mjOBJ_CAMERA.value, camera);
  if (id < 0) throw new Error(`the scene has no camera "${camera}"`);
  const body = o.parentBody === "world" ? 0 : mj.mj_name2id(model, mj.mjtObj.mjOBJ_BODY.value, o.parentBody);
  if (body < 0) throw new Error(`the scene has no body "${o.parentBody}"`);
  const rows = (a: ArrayLike<number>, i: number): number[][] => [0, 1, 2].map((r) => [a[9 * i + 3 * r], a[9 * i + 3 * r + 1], a[9 * i + 3 * r + 2]]);
  const v3 = (a: ArrayLike<number>, i: number): number[] => [a[3 * i], a[3 * i + 1], a[3 * i + 2]];
  const worldCam: Pose = { R: rows(data.cam_xmat as Float64Array, id), t: v3(data.cam_xpos as Float64Array, id) };
  const worldBody: Pose = { R: rows(data.xmat as Float64Array, body), t: v3(data.xpos as Float64Array, body) };
  const optical = compose(compose(invert(worldBody), worldCam), { R: MUJOCO_TO_OPTICAL, t: [0, 0, 0] });
  const sensor = Array.from((model.cam_sensorsize as Float32Array).subarray(2 * id, 2 * id + 2));
  let model_: CameraModel;
  if (sensor[0] > 0 && sensor[1] > 0) {
    const focal = Array.from((model.cam_intrinsic as Float32Array).subarray(4 * id, 4 * id + 2));
    // The largest centred crop of the sensor with the frame's aspect ratio, resampled to width × height.
    const cropH = Math.min(sensor[1], (sensor[0] * o.height) / o.width);
    const cropW = (cropH * o.width) / o.height;
    const fx = (focal[0] / cropW) * o.width;
    const fy = (focal[1] / cropH) * o.height;
    model_ = { width: o.width, height: o.height, fx, fy, cx: (o.width - 1) / 2, cy: (o.height - 1) / 2, k1: 0, k2: 0, p1: 0, p2: 0 };
  } else {
    model_ = pinholeModel(o.width, o.height, (model.cam_fovy as Float64Array)[id]);
  }
  return { name: o.name, model: model_, parentBody: o.parentBody, pose: optical };
}
