/**
 * What a robot-side actor is: something that turns the tick's observation (and camera frames) into joint targets.
 * Learned policies (PolicyActor, VlaActor) and the scripted expert implement it; nodes/ActorNode.ts runs one on the
 * control tick.
 */
import type { Time } from "../../runtime/Runtime.ts";

/** The latest frame of one camera (sensor_msgs/Image, rgb8), as an actor receives it. */
export interface CameraImage {
  width: number;
  height: number;
  encoding: string;
  /** Row-major pixels, `step` bytes per row. */
  data: Uint8Array;
  step: number;
  stamp: Time;
}

/** What an actor sees on a tick: the observation vector, and the latest frame of each camera it asked for. */
export interface ActorInput {
  names: string[];
  values: number[];
  /** The tick's time (the observation's stamp). */
  stamp?: Time;
  /**
   * camera name → its latest frame stamped at or before the tick (never a frame from the tick's future, as in the
   * training data: data/lerobot/LeRobotExport.ts, app/vlaDataset.ts); a camera without one is absent.
   */
  images?: Record<string, CameraImage>;
}

/** What an actor implements. */
export interface Actor {
  readonly jointNames: readonly string[];
  /** Cameras the actor reads (VLA policies): ActorNode subscribes to /camera/<name>/image for each. */
  readonly cameras?: readonly string[];
  /** Episode start (seeded, so runs are reproducible). */
  reset(seed: number): void;
  /** The language instruction of the coming episode (from /task/instruction, published before the reset event). */
  setInstruction?(text: string): void;
  /** The joint targets for this observation. */
  act(obs: ActorInput): number[] | Promise<number[]>;
  /** For learned policies: what the last `act` was made of, in normalised action space (published on /policy/action). */
  lastAction?(): ActionInfo | null;
  /** Why the last `act` held the arm instead of running the policy (a missing or stale camera frame), else null. */
  holdReason?(): string | null;
}

/** Base, residual and combined action of one tick, normalised to [-1, 1]. */
export interface ActionInfo {
  version: string;
  base: number[];
  residual: number[];
  action: number[];
}
