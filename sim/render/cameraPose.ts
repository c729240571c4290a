/**
 * Where a sim camera is: a pose parent ← optical frame, fixed to a MuJoCo body (or the world), and its intrinsics.
 * The optical frame is OpenCV's / ROS's (x right, y down, z forward), the frame the hand-eye calibration reports;
 * MuJoCo's own cameras look along −z with y up, so R_optical = R_mujoco · diag(1, −1, −1).
 */
import type { MainModule, MjData, MjModel } from "mujoco-js";
import type { CameraModel } from "../../calibration/CameraModel.ts";
import type { Pose } from "../../calibration/rotation.ts";

/** One simulated camera, as its calibration files describe it. */
export interface SimCameraSpec {
  /** Camera name: frames go to /camera/<name>/image. */
  name: string;
  /** Intrinsics of the frames it renders (plumb_bob; distortion is rendered too). */
  model: CameraModel;
  /** MuJoCo body the camera is fixed to; "world" for a fixed camera. */
  parentBody: string;
  /** parent body ← camera optical frame. */
  pose: Pose;
}

/** A camera pose in the world as flat arrays: world ← optical, R row-major. */
export interface WorldPose {
  R: Float64Array;
  t: Float64Array;
}

/** The MuJoCo → optical flip: MuJoCo cameras look along −z with +y up. */
export const MUJOCO_TO_OPTICAL = [
  [1, 0, 0],
  [0, -1, 0],
  [0, 0, -1],
];

/** Resolves a spec's parent body to its MuJoCo id once; throws naming the camera when the model lacks the body. */
export function parentBodyId(mj: MainModule, model: MjModel, spec: SimCameraSpec): number {
  if (spec.parentBody === "world") return 0;
  const id = mj.mj_name2id(model, mj.mjtObj.mjOBJ_BODY.value, spec.parentBody);
  if (id < 0) {
    throw new Error(`camera ${spec.name}: its hand-eye file puts it on body "${spec.parentBody}", which this scene does not have — set parent_frame to one of the scene's bodies (e.g. "world" or the gripper body)`);
  }
  return id;
}

/** world ← optical for the current data (body poses as of the last mj_forward / mj_step), written into `out`. */
export function cameraWorldPose(data: MjData, body: number, pose: Pose, out: WorldPose): WorldPose {
  const xp = data.xpos as Float64Array;
  const xm = data.xmat as Float64Array;
  const B = xm.subarray(9 * body, 9 * body + 9);
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) out.R[3 * i + j] = B[3 * i] * pose.R[0][j] + B[3 * i + 1] * pose.R[1][j] + B[3 * i + 2] * pose.R[2][j];
    out.t[i] = xp[3 * body + i] + B[3 * i] * pose.t[0] + B[3 * i + 1] * pose.t[1] + B[3 * i + 2] * pose.t[2];
  }
  return out;
}

/** A fresh WorldPose. */
export function createWorldPose(): WorldPose {
  return { R: new Float64Array(9), t: new Float64Array(3) };
}
