/**
 * One small interface for every teleoperation device (keyboard, gamepad, SpaceMouse, leader arm), after
 * LeRobot's `teleoperators/`: the device is opened and closed with its lifecycle, and each control tick
 * `poll(dt)` returns what the operator did since the last poll. Mapping that to the robot's action space
 * is TeleopMapper's job, deciding who is in control is TakeoverGesture's, so drivers stay small.
 */

import type { OperatorCommand } from "../../contracts/operator.ts";

/** What the operator did during one control period. */
export interface TeleopSample {
  /** End-effector translation this period, base frame, metres (twist devices). */
  linear: [number, number, number];
  /** Rotation this period (roll, pitch, yaw), radians (twist devices). */
  angular: [number, number, number];
  /** Absolute joint targets (leader arm), command order; null for twist devices. */
  joints: number[] | null;
  /** Gripper target in [0, 1] (0 closed, 1 open), or null to keep the current one. */
  gripper: number | null;
  /** Raw takeover input: true while the operator's gesture asks for control (see TakeoverGesture). */
  takeover: boolean;
  /** True when the device saw any motion above its deadzone this period. */
  moving: boolean;
  /** Episode commands given on the device since the last poll, oldest first. */
  commands: OperatorCommand[];
}

/** A teleop device. `open` fails with a TeleopDeviceError naming the path and the fix. */
export interface TeleopDevice {
  /** Recorded as the intervention `source`, e.g. "gamepad", "spacemouse", "leader_arm", "keyboard". */
  readonly source: string;
  /** Device path or description, for messages. */
  readonly path: string;
  /** How this device takes control: "hold" (deadman), "toggle" (button) or "motion" (moving takes over). */
  readonly takeoverMode: "hold" | "toggle" | "motion";
  open(): Promise<void>;
  /** What happened in the last `dtSec`; never throws (a failed device reports through `error`). */
  poll(dtSec: number): TeleopSample;
  /** Set once the device has failed (unplugged, read error): the operator node pauses the episode. */
  readonly error: string | null;
  close(): Promise<void>;
}

/** An empty sample (no motion, no takeover). */
export function idleSample(): TeleopSample {
  return { linear: [0, 0, 0], angular: [0, 0, 0], joints: null, gripper: null, takeover: false, moving: false, commands: [] };
}

/** A device that could not be opened or stopped working; the message names the device and the fix. */
export class TeleopDeviceError extends Error {
  readonly code = "RLFT_TELEOP_DEVICE";
  constructor(
    readonly path: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "TeleopDeviceError";
  }
}

/** Turns an open/read error of a device node into a message with the permission/udev fix. */
export function deviceErrorMessage(what: string, path: string, err: NodeJS.ErrnoException, fix: { group: string; udevHint: string }): string {
  if (err.code === "EACCES" || err.code === "EPERM") {
    return `Cannot open ${what} at ${path}: permission denied — add your user to the '${fix.group}' group (sudo usermod -aG ${fix.group} $USER, then log in again) or install a udev rule: ${fix.udevHint}`;
  }
  if (err.code === "ENOENT" || err.code === "ENODEV") {
    return `Cannot open ${what} at ${path}: no such device — is it plugged in? (check with: ls ${path.replace(/\d+$/, "*")})`;
  }
  return `${what} at ${path} failed: ${err.message}`;
}
