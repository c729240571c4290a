/** The camera contract: what a camera driver (sim renderer, V4L2/ffmpeg, a ROS topic) hands the camera node. */
import type { Time } from "./msgs.generated.ts";

/** One captured frame. */
export interface CameraFrame {
  width: number;
  height: number;
  rgb: Uint8Array;
  depth?: Float32Array;
  /** Capture time on the robot clock when the source knows it (real cameras); else the node stamps it now. */
  stamp?: Time;
}

/** Anything that yields frames: the sim renderer, a V4L2 reader, a ROS topic. */
export interface CameraSource {
  /** The newest frame; null while a real camera has not delivered one yet. */
  capture(): CameraFrame | null;
  /** A problem with the frames since the last call (e.g. a frame in an encoding rlft cannot use), once; else null. */
  takeFault?(): string | null;
  /** A new episode with this seed begins (sim: per-episode domain randomisation). */
  reset?(seed: number): void;
}
