/**
 * What the servo-arm calibration needs from a motor bus: names, encoder resolution, raw positions and
 * (optionally) torque off so a person can move the arm by hand. The Feetech and Dynamixel buses implement
 * it; tests and `rlft calibrate arm --source sim` use SimServoArm.
 */
export interface JointPositionSource {
  /** Motor (joint) names in bus order. */
  readonly motors: readonly string[];
  /** Encoder ticks per revolution of each motor (4096 for STS3215 and XL330/XL430). */
  readonly resolution: readonly number[];
  /** Present positions in raw encoder ticks, one per motor, with any homing offset on the servo cleared. */
  readPositions(): Promise<number[]>;
  /** Torque off on every motor, so the arm can be moved by hand. */
  disableTorque?(): Promise<void>;
  /** Releases the port. */
  close?(): Promise<void>;
}
