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
  /**
   * peg_insert: a square peg held between the fingers and a fixture with a square hole, in the spirit of
   * robomimic Square (Mandlekar et al. 2021, arXiv 2108.03298): the difficulty is the tight clearance.
   */
  peg: {
    /** Half side of the square peg section (3 cm peg). */
    half: 0.015,
    /** Half length: 8 cm peg, its centre at the fingertips, so 4 cm sit between the fingers and 4 cm stick out below. */
    halfLength: 0.04,
    mass: 0.05,
    /** Gap between peg and hole on each side (hole side = peg side + 2 × clearance = 3.4 cm). */
    clearance: 0.002,
    /** Fixture wall thickness around the hole. */
    wall: 0.014,
    /** Fixture height above the table (the hole goes down to the table). */
    height: 0.035,
    /** Success: the peg's bottom face at least this far below the fixture top, inside the hole. */
    insertDepth: 0.02,
    /** Gripper command that holds the peg: fully closed, so the servo squeezes the 3 cm peg with its full stiffness. */
    grip: 0.0,
  },
  /** Table top extent (x from, x to, half width in y); the cube falling past it is a failure. */
  table: { xMin: -0.12, xMax: 0.5, yHalf: 0.35 },
} as const;
