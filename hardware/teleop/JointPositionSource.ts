/**
 * What the leader arm needs from a servo bus: present positions of its joints, in radians, in the
 * follower's command order. The Feetech/Dynamixel bus drivers (issue 6) implement it over their
 * "read Present_Position" sync-read; tests use testing/ScriptedJointSource.ts.
 */
export interface JointPositionSource {
  /** Joint names in the order `read` returns them. */
  readonly jointNames: readonly string[];
  /** Device path or description (serial port), for messages. */
  readonly path: string;
  /** Present positions (rad; gripper in the follower's units after calibration). Rejects on a bus error. */
  read(): Promise<number[]>;
  close(): Promise<void>;
}
