/** The tasks the sim arm can run, with the observation layout each one publishes (docs/contracts.md). */

/** Name of a sim task. */
export type TaskName = "reach" | "push_cube" | "peg_insert" | "multi_push";

/** What a task is: limits, rates and the observation/action layout that the rest of rlft codes against. */
export interface TaskSpec {
  readonly name: TaskName;
  /** Episode limit in control ticks. */
  readonly maxSteps: number;
  /** Control (observation/action) rate in Hz. */
  readonly controlHz: number;
  /** Observation names in order, exactly as in docs/contracts.md. */
  readonly observationNames: readonly string[];
  /** Action names in order (absolute joint targets). */
  readonly actionNames: readonly string[];
  /** Success distance in metres (cube centre to target centre, ee to target point, or peg axis to hole centre). */
  readonly successRadius: number;
  /** One line for people. */
  readonly description: string;
}

const joints = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "gripper"] as const;
const q = joints.map((j) => `q.${j}`);

/** The built-in tasks at the contract's default 10 Hz control rate. */
export const TASKS: Readonly<Record<TaskName, TaskSpec>> = {
  reach: {
    name: "reach",
    // 10 s at 10 Hz: a scripted reach takes ~2 s, so there is room for a slow policy.
    maxSteps: 100,
    controlHz: 10,
    observationNames: [...q, "ee.x", "ee.y", "ee.z", "target.x", "target.y", "target.z"],
    actionNames: joints,
    successRadius: 0.02,
    description: "move the end effector within 2 cm of a random point in the workspace",
  },
  push_cube: {
    name: "push_cube",
    // 15 s at 10 Hz: the quality-1 expert needs ~4–6 s, slow or re-approaching demos up to ~12 s.
    maxSteps: 150,
    controlHz: 10,
    observationNames: [...q, "ee.x", "ee.y", "ee.z", "cube.x", "cube.y", "target.x", "target.y"],
    actionNames: joints,
    // Target disc radius: the cube centre must lie inside the green 7 cm disc.
    successRadius: 0.035,
    description: "push the red cube until its centre lies inside the green target disc",
  },
  peg_insert: {
    name: "peg_insert",
    // 10 s at 10 Hz: the quality-1 expert inserts in ~2–3 s, a retry after a jam costs ~1 s more.
    maxSteps: 100,
    controlHz: 10,
    observationNames: [...q, "ee.x", "ee.y", "ee.z", "peg.x", "peg.y", "peg.z", "hole.x", "hole.y"],
    actionNames: joints,
    // Peg axis within 1 cm of the hole centre: inside the 3.4 cm hole (a peg beside the fixture is ≥ 4.6 cm away);
    // ArmSim.status also asks for the peg's bottom face ARM_SPEC.peg.insertDepth below the fixture top.
    successRadius: 0.01,
    description: "insert the held square peg at least 2 cm deep into the square hole of the fixture (2 mm clearance per side)",
  },
  multi_push: {
    name: "multi_push",
    // Same pushing as push_cube, plus finding the right cube; the clean expert needs ~4–7 s.
    maxSteps: 150,
    controlHz: 10,
    // cube/target: the instructed pair (privileged: for the scripted expert and operator, never a VLA's state);
    // then every object, so a state-based policy could also solve it.
    observationNames: [...q, "ee.x", "ee.y", "ee.z", "cube.x", "cube.y", "target.x", "target.y", "red.x", "red.y", "blue.x", "blue.y", "left.x", "left.y", "right.x", "right.y"],
    actionNames: joints,
    successRadius: 0.035,
    description: "push the red or blue cube to the left or right target, as the episode's instruction says (sim/multiPush.ts)",
  },
};
