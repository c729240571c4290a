/**
 * The `camera` section of a launch file. Without `cameras:` it describes one camera, "front" (as before: the sim's
 * default view, a V4L2 device or a ROS image topic). With `cameras:` every entry is a named camera, publishing on
 * /camera/<name>/image, each set up by its calibration files — a sim camera exactly as a calibrated real one:
 * `intrinsics` (rlft calibrate intrinsics) and `hand_eye` (rlft calibrate hand-eye; eye_to_hand on `world` for a
 * fixed camera, eye_in_hand on the gripper body for a wrist camera).
 */
import { z } from "zod";

const kind = z.enum(["sim", "v4l2", "topic"]);
const size = z.number().int().min(8).max(4096);

/** One named camera. Fields left out come from the section (kind, rate, device settings) or the calibration (size). */
export const CameraEntrySchema = z
  .object({
    /** Topic /camera/<name>/image; LeRobot export: observation.images.<name>. */
    name: z.string().regex(/^[a-z][a-z0-9_]*$/, "lower-case letters, digits and _ (it becomes a topic and a LeRobot key)"),
    kind: kind.optional(),
    /** Frame size; sim default: the intrinsics file's (a size of the same aspect ratio scales the intrinsics). */
    width: size.optional(),
    height: size.optional(),
    /** Camera intrinsics file (rlft calibrate intrinsics); required for sim cameras, recorded for all. */
    intrinsics: z.string().optional(),
    /** Camera pose file (rlft calibrate hand-eye); required for sim cameras, recorded for all. */
    hand_eye: z.string().optional(),
    /** v4l2: the device; topic: the image topic. */
    device: z.string().optional(),
    topic: z.string().optional(),
    input_format: z.enum(["mjpeg", "raw"]).optional(),
    capture_fps: z.number().positive().max(240).optional(),
  })
  .strict();

/** A named camera entry. */
export type CameraEntry = z.infer<typeof CameraEntrySchema>;

/** Domain randomisation of the sim cameras (sim/render/DomainRandomizer.ts), drawn per episode from its seed. */
export const RandomizeSchema = z.preprocess(
  (v) => (typeof v === "boolean" ? { enabled: v } : v),
  z
    .object({
      /** The switch: off by default; on for policies meant to go to a real arm. */
      enabled: z.boolean().default(false),
      /** Scene objects' and the table's colours: hue shift (fraction of the colour wheel), saturation and value ± fractions. */
      color_hue: z.number().min(0).max(0.5).default(0.05),
      color_saturation: z.number().min(0).max(1).default(0.25),
      color_value: z.number().min(0).max(1).default(0.25),
      /** Lights: each light's direction turned by up to this angle, intensity scaled within [min, max]. */
      light_direction_deg: z.number().min(0).max(90).default(20),
      light_intensity: z.tuple([z.number().positive(), z.number().positive()]).default([0.6, 1.4]),
      /** Camera pose jitter (mounting tolerance): translation up to this far, rotation up to this angle. */
      camera_position_m: z.number().min(0).max(0.1).default(0.01),
      camera_rotation_deg: z.number().min(0).max(20).default(2),
    })
    .strict(),
);

/** Parsed randomisation settings. */
export type RandomizeConfig = z.infer<typeof RandomizeSchema>;

export const RANDOMIZE_DEFAULTS: RandomizeConfig = { enabled: false, color_hue: 0.05, color_saturation: 0.25, color_value: 0.25, light_direction_deg: 20, light_intensity: [0.6, 1.4], camera_position_m: 0.01, camera_rotation_deg: 2 };

/** Schema of the `camera` section. */
export const CameraSchema = z
  .object({
    enabled: z.boolean().default(true),
    /** Frames per second per camera (sim time). A frame every control tick: set it to control_hz. */
    rate_hz: z.number().positive().max(120).default(2),
    /** Size of the single "front" camera, and the default of v4l2 / topic entries. */
    width: size.default(64),
    height: size.default(64),
    /** sim: rendered from the MuJoCo scene. v4l2: a USB camera through ffmpeg. topic: a ROS 2 sensor_msgs/Image topic. */
    kind: kind.default("sim"),
    /** topic: the image topic of a camera driver (rgb8, bgr8 or mono8). */
    topic: z.string().default("/camera/image_raw"),
    /** v4l2: the device (prefer /dev/v4l/by-id/...), or lavfi:<graph> to try without a camera. */
    device: z.string().default("/dev/video0"),
    /** v4l2: what the camera sends; mjpeg gets most USB cameras to 30 fps at 640×480. */
    input_format: z.enum(["mjpeg", "raw"]).default("mjpeg"),
    /** v4l2: capture rate asked of the camera (rate_hz is what gets published). */
    capture_fps: z.number().positive().max(240).default(30),
    /** sim: raster (z-buffer rasteriser, fast on meshes) or ray (mj_multiRay); docs/sim.md has both measured. */
    renderer: z.enum(["raster", "ray"]).default("raster"),
    /** sim: shadows of the scene's shadow-casting lights (shadow maps; raster only; costs a few ms per tick). */
    shadows: z.boolean().default(false),
    /** sim: also publish /camera/<name>/depth (32FC1, metres). */
    depth: z.boolean().default(true),
    /** sim: domain randomisation; `randomize: true` turns it on with the defaults. */
    randomize: RandomizeSchema.default(RANDOMIZE_DEFAULTS),
    /** Named cameras (see the file comment); absent: the single camera "front" described by the fields above. */
    cameras: z.array(CameraEntrySchema).min(1).optional(),
  })
  .strict();

/** A parsed `camera` section. */
export type CameraConfig = z.infer<typeof CameraSchema>;

export const CAMERA_DEFAULTS: CameraConfig = {
  enabled: true,
  rate_hz: 2,
  width: 64,
  height: 64,
  kind: "sim",
  topic: "/camera/image_raw",
  device: "/dev/video0",
  input_format: "mjpeg",
  capture_fps: 30,
  renderer: "raster",
  shadows: false,
  depth: true,
  randomize: RANDOMIZE_DEFAULTS,
};

/** One camera the stack runs, with every default filled in. */
export interface CameraPlan {
  name: string;
  kind: "sim" | "v4l2" | "topic";
  /** Undefined for a sim camera sized by its intrinsics file. */
  width?: number;
  height?: number;
  /** The launch file gave this camera's size itself (a topic camera's frames are then checked against it). */
  sizeGiven: boolean;
  rateHz: number;
  device: string;
  topic: string;
  inputFormat: "mjpeg" | "raw";
  captureFps: number;
  intrinsics?: string;
  handEye?: string;
}

/** The cameras a `camera` section asks for (none when disabled); names are unique (a repeated one is an error). */
export function cameraPlans(c: CameraConfig): CameraPlan[] {
  if (!c.enabled) return [];
  const base = { rateHz: c.rate_hz, device: c.device, topic: c.topic, inputFormat: c.input_format, captureFps: c.capture_fps };
  if (!c.cameras) return [{ name: "front", kind: c.kind, width: c.width, height: c.height, sizeGiven: false, ...base }];
  const seen = new Set<string>();
  return c.cameras.map((e) => {
    if (seen.has(e.name)) throw new Error(`camera.cameras: camera ${e.name} is listed twice — give each camera its own name`);
    seen.add(e.name);
    const k = e.kind ?? c.kind;
    if (k === "sim" && (!e.intrinsics || !e.hand_eye)) {
      throw new Error(`camera ${e.name}: a sim camera is set up by its calibration files — give it intrinsics: and hand_eye: (e.g. launch/cameras/so101_${e.name}.intrinsics.json and .hand_eye.json)`);
    }
    // Sizes: as given, else v4l2/topic take the section's, a sim camera its calibration's.
    const width = e.width ?? (k === "sim" ? undefined : c.width);
    const height = e.height ?? (k === "sim" ? undefined : c.height);
    if ((e.width === undefined) !== (e.height === undefined)) throw new Error(`camera ${e.name}: give both width and height, or neither`);
    return {
      name: e.name,
      kind: k,
      width,
      height,
      sizeGiven: e.width !== undefined,
      ...base,
      device: e.device ?? c.device,
      topic: e.topic ?? c.topic,
      inputFormat: e.input_format ?? c.input_format,
      captureFps: e.capture_fps ?? c.capture_fps,
      intrinsics: e.intrinsics,
      handEye: e.hand_eye,
    };
  });
}
