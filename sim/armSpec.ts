/**
 * Dimensions and limits of the sim arm `rlft_arm5`, shared by the MJCF generator,
 * the kinematics and the scripted expert so the three can never disagree.
 */

/** Geometry (metres), joint names and limits (rad / m) of `rlft_arm5`. */
export const ARM_SPEC = {
  /** Command and state order, from docs/contracts.md. */
  jointNames: ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "gripper"] as const,
  /** Lower limits; the gripper entry is the finger opening in metres. */
  jointLower: [-2.0, -1.6, -2.8, -2.2, 0.0] as const,
  /** Upper limits; 8 cm opening fits the 4.5 cm cube with room to spare. */
  jointUpper: [2.0, 1.6, 2.8, 2.2, 0.08] as const,
  /** Height of the shoulder_lift axis above the table top (the base sits on the table at the origin). */
  shoulderHeight: 0.1,
  /** shoulder_lift axis → elbow_flex axis. */
  upperArm: 0.18,
  /** elbow_flex axis → wrist_flex axis. */
  forearm: 0.18,
  /** wrist_flex axis → `ee` site (between the finger tips). */
  tool: 0.1,
  /** Half edge of the pushed cube (4.5 cm cube). */
  cubeHalf: 0.0225,
  /** Half thickness of the closed finger pair along the push direction (the pushing face). */
  fingerHalf: 0.012,
  /** Radius of the green target disc; success = cube centre inside it. */
  targetRadius: 0.035,
  /** Table top extent (x from, x to, half width in y); the cube falling past it is a failure. */
  table: { xMin: -0.12, xMax: 0.5, yHalf: 0.35 },
} as const;
