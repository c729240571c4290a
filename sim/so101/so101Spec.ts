/**
 * The SO-101 as rlft drives it: joint names, order, units and limits of rlft's Feetech driver convention
 * (launch/so100.yaml, hardware/servo/ServoArmDriver.ts), so a policy package cannot tell the simulated arm
 * from the real one, and the one place where that convention meets MuJoCo Menagerie's model (`so101.xml`).
 */
import { fileURLToPath } from "node:url";

/** Where Menagerie's robotstudio_so101 lives in the repository (so101.xml + assets/, unchanged; SOURCE.md). */
export const SO101_ASSET_DIR = fileURLToPath(new URL("../assets/so101/", import.meta.url));

/**
 * rlft's Feetech convention: q = direction · (raw ticks − zero_ticks) · 2π / 4096 rad, every joint in rad (the
 * gripper too: its servo angle), and `rlft calibrate arm` puts q = 0 at the middle of each joint's range
 * (LeRobot's half-turn homing, calibration/ArmCalibration.ts).
 *
 * Menagerie's so101.xml derives from TheRobotStudio's `so101_new_calib` model (README.menagerie.md), whose
 * README defines each joint's zero as "the middle of its joint range" — the same zero. Its joint directions are
 * the servos' own with LeRobot's follower calibration (drive_mode 0 on every joint): LeRobot's SO-101
 * end-effector control feeds the motors' degrees (MotorNormMode.DEGREES, 0 at mid-range) straight into
 * so101_new_calib.urdf as its joint angles (lerobot `RobotKinematics`, target frame `gripper_frame_link`, the
 * `gripperframe` site here). So the mapping is the identity: model angle = SIGN · driver angle + OFFSET with
 * SIGN = +1 and OFFSET = 0. The gripper's 0 is the closed jaw in the model (range −10°…100°); on a real arm it is
 * wherever the jaw stood in the calibration's middle pose, which is why `rlft calibrate arm` asks for the gripper
 * closed there (calibration/runArmCalibration.ts, docs/real-robot.md).
 * If an arm is assembled or calibrated differently, change these two rows and nothing else.
 */
const SIGN = [1, 1, 1, 1, 1, 1] as const;
const OFFSET = [0, 0, 0, 0, 0, 0] as const;

/** rlft joint angles (driver convention, jointNames order) → Menagerie model angles. */
export function toModelAngles(q: ArrayLike<number>): number[] {
  return Array.from({ length: q.length }, (_, i) => SIGN[i] * q[i] + OFFSET[i]);
}

/** Menagerie model angles → rlft joint angles (driver convention). */
export function fromModelAngles(m: ArrayLike<number>): number[] {
  return Array.from({ length: m.length }, (_, i) => SIGN[i] * (m[i] - OFFSET[i]));
}

/** d(model angle)/d(driver angle) per joint: the Jacobian columns of the model scale by it. */
export const MODEL_SIGN: readonly number[] = SIGN;

/** Geometry, joints and limits of the simulated SO-101 scene. */
export const SO101_SPEC = {
  /** Command and state order: the Feetech ids 1–6 of launch/so100.yaml. */
  jointNames: ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"] as const,
  /**
   * Command limits (rad), identical to launch/so100.yaml's joints block (a test holds them equal): the model's
   * joint ranges (Menagerie so101.xml, the SO-101's mechanical ranges), rounded inwards to the millirad, and the
   * pan and gripper-open limits narrowed to so100.yaml's ±1.9 and 1.7.
   */
  jointLower: [-1.9, -1.745, -1.69, -1.658, -2.743, -0.174] as const,
  jointUpper: [1.9, 1.745, 1.69, 1.658, 2.743, 1.7] as const,
  /** Unit of every joint (position commands and readings). */
  units: ["rad", "rad", "rad", "rad", "rad", "rad"] as const,
  /** End-effector site of the model: between the jaw tips (LeRobot's `gripper_frame_link`). */
  eeSite: "gripperframe",
  /** Half edge of the cube of push_cube and pick_place (3 cm: fits the jaws, which span ~6.5 cm open). */
  cubeHalf: 0.015,
  /** Radius of the target disc: push_cube and pick_place succeed with the cube centre inside it. */
  targetRadius: 0.03,
  /** Table top (z = 0, the arm's base plate on it at the origin, facing +x): x from, x to, half width in y. */
  table: { xMin: -0.15, xMax: 0.5, yHalf: 0.35 },
} as const;
