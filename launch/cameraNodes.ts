/**
 * The camera nodes of a launch file's `camera` section (hardware/camera/CameraConfig.ts): sim cameras rendered from
 * the MuJoCo world and set up by their calibration files, V4L2 cameras through ffmpeg, ROS image topics. One
 * CameraNode per camera, publishing /camera/<name>/image. Also returns the episode metadata the cameras add (each
 * camera's calibration files, whole with sha256 and path; a V4L2 camera's clock offset).
 */
import type { Runtime } from "../runtime/Runtime.ts";
import type { LaunchConfig } from "./LaunchConfig.ts";
import { cameraPlans, type CameraPlan, type RandomizeConfig } from "../hardware/camera/CameraConfig.ts";
import type { RandomizationRanges } from "../sim/render/DomainRandomizer.ts";
import { FfmpegCamera } from "../hardware/camera/FfmpegCamera.ts";
import { TopicCamera } from "../hardware/camera/TopicCamera.ts";
import { CameraNode } from "../nodes/CameraNode.ts";
import { calibrationMetadata } from "../calibration/CalibrationFiles.ts";
import { simCameraFromFiles } from "../sim/render/cameraCalibration.ts";
import { lookAtPose, pinholeModel } from "../sim/render/mujocoCamera.ts";
import { SimCameraSources, type MujocoWorld } from "../sim/render/SimCameraSources.ts";
import type { SimCameraSpec } from "../sim/render/cameraPose.ts";
import type { GymArmDriver } from "../hardware/gym/GymArmDriver.ts";

/** The cameras of a stack, before they start. */
export interface CameraSet {
  nodes: CameraNode[];
  /** Camera names, in launch-file order (what a policy may ask for). */
  names: string[];
  /** Episode metadata: filled by start(), and kept current by V4L2 cameras (clock offset, dropped frames). */
  metadata: Record<string, string>;
  /** Starts the real cameras (resolves on each one's first frame); throws naming the camera that failed. */
  start(): Promise<void>;
  /** Stops real cameras and frees the renderer. */
  stop(): void;
}

/** The single camera of a launch file without `camera.cameras` in the sim: the front view of rlft_arm5's workspace. */
export function defaultFrontCamera(width: number, height: number): SimCameraSpec {
  return { name: "front", model: pinholeModel(width, height, 45), parentBody: "world", pose: lookAtPose([0.62, 0, 0.45], [0.14, 0, 0]) };
}

/** The launch file's randomisation settings as the renderer's ranges. */
export function randomizationRanges(r: RandomizeConfig): RandomizationRanges {
  return { colorHue: r.color_hue, colorSaturation: r.color_saturation, colorValue: r.color_value, lightDirectionDeg: r.light_direction_deg, lightIntensity: r.light_intensity, cameraPositionM: r.camera_position_m, cameraRotationDeg: r.camera_rotation_deg };
}

/**
 * Builds (does not start) the camera nodes of `config`; `world` is the sim (null on a real arm); `gym` a Gymnasium
 * driver, whose image keys (driver.cameras) are cameras too, at camera.rate_hz.
 */
export function createCameraNodes(runtime: Runtime, config: LaunchConfig, world: MujocoWorld | null, log: { info(m: string): void; warn(m: string): void }, gym: GymArmDriver | null = null): CameraSet {
  const cc = config.camera;
  const named = !!cc.cameras;
  const plans = cameraPlans(cc);
  const metadata: Record<string, string> = {};
  const nodes: CameraNode[] = [];
  const ffmpeg: { name: string; cam: FfmpegCamera }[] = [];
  const sims = plans.filter((p) => p.kind === "sim");
  if (sims.length && !world && !(gym && !named)) {
    // The default single camera is the sim's; a real arm simply has none unless the launch file names one.
    if (named) throw new Error(`camera ${sims[0].name}: kind sim renders the simulator, but driver.kind is ${config.driver.kind} — give the camera kind v4l2 or topic`);
    log.warn("camera: the default sim camera needs driver.kind sim; no camera runs (set camera.enabled: false, or camera.kind v4l2 / topic)");
  }
  const specs = world ? sims.map((p) => (p.intrinsics && p.handEye ? simCameraFromFiles({ name: p.name, intrinsics: p.intrinsics, handEye: p.handEye, width: p.width, height: p.height }) : defaultFrontCamera(p.width ?? cc.width, p.height ?? cc.height))) : [];
  const r = cc.randomize;
  const sources = specs.length
    ? new SimCameraSources(world!, specs, {
        renderer: cc.renderer,
        shadows: cc.shadows,
        randomize: r.enabled ? randomizationRanges(r) : undefined,
      })
    : null;
  const nodeName = (p: CameraPlan) => (named ? `camera_${p.name}` : "camera");
  for (const p of plans) {
    const opts = { rateHz: p.rateHz, name: p.name, depth: cc.depth };
    if (p.kind === "sim") {
      if (!sources) continue;
      const spec = sources.cameras.spec(p.name);
      nodes.push(new CameraNode(runtime.createNode(nodeName(p)), sources.source(p.name), { ...opts, width: spec.model.width, height: spec.model.height }));
      metadata[`camera.${p.name}.model`] = JSON.stringify({ ...spec.model, parent_frame: spec.parentBody });
    } else if (p.kind === "v4l2") {
      const cam = new FfmpegCamera({ device: p.device, width: p.width!, height: p.height!, fps: p.captureFps, inputFormat: p.inputFormat, logger: log });
      ffmpeg.push({ name: p.name, cam });
      nodes.push(new CameraNode(runtime.createNode(nodeName(p)), cam, { ...opts, width: p.width, height: p.height }));
    } else {
      const size = p.sizeGiven ? { width: p.width, height: p.height } : {};
      nodes.push(new CameraNode(runtime.createNode(nodeName(p)), new TopicCamera(runtime.createNode(named ? `camera_in_${p.name}` : "camera_in"), p.topic, p.name), { ...opts, ...size }));
    }
    metadata[`camera.${p.name}.kind`] = p.kind;
    // Each camera's calibration goes into every episode, as calibration.camera / hand_eye do for one camera.
    for (const [k, v] of Object.entries(calibrationMetadata({ camera: p.intrinsics, hand_eye: p.handEye }))) metadata[k.replace(/^calibration_(camera|hand_eye)/, `calibration_$1_${p.name}`)] = v;
  }
  if (gym && cc.enabled) {
    for (const name of Object.keys(gym.config.cameras)) {
      if (nodes.some((n) => n.name === name)) throw new Error(`camera ${name} is named both in camera.cameras and in driver.cameras — give each camera its own name`);
      nodes.push(new CameraNode(runtime.createNode(`camera_${name}`), gym.camera(name), { rateHz: cc.rate_hz, name, depth: false }));
      metadata[`camera.${name}.kind`] = "gym";
      metadata[`camera.${name}.gym_key`] = gym.config.cameras[name];
    }
  }
  if (sources) {
    metadata["camera.renderer"] = cc.renderer;
    if (r.enabled) metadata["camera.randomize"] = JSON.stringify(r);
  }
  return {
    nodes,
    names: nodes.map((n) => n.name),
    metadata,
    async start() {
      for (const { name, cam } of ffmpeg) {
        try {
          await cam.start();
        } catch (e) {
          throw new Error(`camera ${name}: ${(e as Error).message}`);
        }
        // start() resolved on the first frame, so the offset is known now; later frames refine it for later episodes.
        const note = () => {
          metadata[`camera.${name}.time_offset_sec`] = cam.stats.offsetSec.toFixed(6);
          metadata[`camera.${name}.dropped_frames`] = String(cam.stats.dropped);
        };
        note();
        cam.onFrame(note);
      }
    },
    stop() {
      for (const { cam } of ffmpeg) cam.stop();
      sources?.close();
    },
  };
}
