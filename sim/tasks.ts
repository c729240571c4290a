/** The tasks the sim arms can run, with the observation layout each one publishes (docs/contracts.md). */

/** A simulated robot: the made-up 5-joint `rlft_arm5` (fast unit tests, benches) or the SO-101 (Menagerie's model). */
export type SimRobotName = "rlft_arm5" | "so101";

/** Every simulated robot, in the order error messages list them. */
export const SIM_ROBOTS: readonly SimRobotName[] = ["rlft_arm5", "so101"];

/** Name of a sim task of `rlft_arm5`. */
export type Arm5TaskName = "reach" | "push_cube" | "peg_insert" | "multi_push";

/** Name of a sim task of the SO-101. */
export type So101TaskName = "reach" | "push_cube" | "pick_place" | "multi_push";

/** Name of a sim task (of either robot; {@link taskSpec} says which robot has it). */
export type TaskName = Arm5TaskName | So101TaskName;

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
  /** The robot the layout belongs to. */
  readonly robot: SimRobotName;
  /**
   * Observation names only the simulator knows (object poses, targets, and the end-effector position the sim
   * computes): a real arm's observation has none of them. The scripted expert/operator and offline analysis may
   * read them; a policy meant for a robot must not. What remains, in order, is `observation.state`.
   */
  readonly privileged: readonly string[];
  /** Episode length in seconds: when set, the step limit at a control rate f is round(episodeSec · f) (maxSteps: at 10 Hz). */
  readonly episodeSec?: number;
}

/** `observation.state` of a task (LeRobot's name): its observation without the sim-only names, in order. */
export function stateNames(spec: Pick<TaskSpec, "observationNames" | "privileged">): string[] {
  return spec.observationNames.filter((n) => !spec.privileged.includes(n));
}

/** A task whose sim-only names are everything but the joint positions `q.*`. */
const spec = (s: Omit<TaskSpec, "privileged">): TaskSpec => ({ ...s, privileged: s.observationNames.filter((n) => !n.startsWith("q.")) });

const joints = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "gripper"] as const;
const q = joints.map((j) => `q.${j}`);

/** The built-in tasks of `rlft_arm5` at the contract's default 10 Hz control rate. */
export const TASKS: Readonly<Record<Arm5TaskName, TaskSpec>> = {
  reach: spec({
    name: "reach",
    // 10 s at 10 Hz: a scripted reach takes ~2 s, so there is room for a slow policy.
    maxSteps: 100,
    controlHz: 10,
    observationNames: [...q, "ee.x", "ee.y", "ee.z", "target.x", "target.y", "target.z"],
    actionNames: joints,
    successRadius: 0.02,
    description: "move the end effector within 2 cm of a random point in the workspace",
    robot: "rlft_arm5",
  }),
  push_cube: spec({
    name: "push_cube",
    // 15 s at 10 Hz: the quality-1 expert needs ~4–6 s, slow or re-approaching demos up to ~12 s.
    maxSteps: 150,
    controlHz: 10,
    observationNames: [...q, "ee.x", "ee.y", "ee.z", "cube.x", "cube.y", "target.x", "target.y"],
    actionNames: joints,
    // Target disc radius: the cube centre must lie inside the green 7 cm disc.
    successRadius: 0.035,
    description: "push the red cube until its centre lies inside the green target disc",
    robot: "rlft_arm5",
  }),
  peg_insert: spec({
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
    robot: "rlft_arm5",
  }),
  multi_push: spec({
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
    robot: "rlft_arm5",
  }),
};

const so101Joints = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"] as const;
const so101Q = so101Joints.map((j) => `q.${j}`);
const so101Ee = ["ee.x", "ee.y", "ee.z"];

/**
 * The SO-101 tasks. `observation.state` is the six joint positions (rad, the gripper's servo angle too), exactly
 * what `joint_observation` publishes for the real arm of launch/so100.yaml; everything after it is sim-only.
 * Limits are in seconds (episodeSec) so 10 Hz and 30 Hz launch files give the same time; maxSteps is at 10 Hz.
 */
export const SO101_TASKS: Readonly<Record<So101TaskName, TaskSpec>> = {
  reach: spec({
    name: "reach",
    // 8 s: the quality-1 expert arrives in ~2 s.
    maxSteps: 80,
    episodeSec: 8,
    controlHz: 10,
    observationNames: [...so101Q, ...so101Ee, "target.x", "target.y", "target.z"],
    actionNames: so101Joints,
    successRadius: 0.02,
    description: "move the SO-101's gripper tip within 2 cm of a random point above the table",
    robot: "so101",
  }),
  push_cube: spec({
    name: "push_cube",
    // 15 s: the quality-1 expert needs ~5–8 s, re-approaching demos more.
    maxSteps: 150,
    episodeSec: 15,
    controlHz: 10,
    observationNames: [...so101Q, ...so101Ee, "cube.x", "cube.y", "target.x", "target.y"],
    actionNames: so101Joints,
    successRadius: 0.03,
    description: "push the red cube with the closed gripper until its centre lies inside the green target disc",
    robot: "so101",
  }),
  pick_place: spec({
    name: "pick_place",
    // 20 s: the quality-1 expert grasps, carries and releases in ~8–10 s.
    maxSteps: 200,
    episodeSec: 20,
    controlHz: 10,
    observationNames: [...so101Q, ...so101Ee, "cube.x", "cube.y", "cube.z", "cube.yaw", "target.x", "target.y"],
    actionNames: so101Joints,
    // The cube's centre inside the 6 cm disc, resting on the table, the jaws off it (ArmSim.status).
    successRadius: 0.03,
    description: "pick up the red cube and put it down on the green target disc, then let go",
    robot: "so101",
  }),
  multi_push: spec({
    name: "multi_push",
    // 18 s: finding the instructed cube, then push_cube's push; the quality-1 expert needs ~6–10 s.
    maxSteps: 180,
    episodeSec: 18,
    controlHz: 10,
    // As rlft_arm5's multi_push: cube/target are the instructed pair, then every object (all sim-only).
    observationNames: [...so101Q, ...so101Ee, "cube.x", "cube.y", "target.x", "target.y", "red.x", "red.y", "blue.x", "blue.y", "left.x", "left.y", "right.x", "right.y"],
    actionNames: so101Joints,
    successRadius: 0.03,
    description: "push the red or blue cube with the closed gripper onto the left or right target disc, as the episode's instruction says (sim/multiPush.ts)",
    robot: "so101",
  }),
};

/** The tasks of each simulated robot. */
export const ROBOT_TASKS: Readonly<Record<SimRobotName, Readonly<Partial<Record<TaskName, TaskSpec>>>>> = { rlft_arm5: TASKS, so101: SO101_TASKS };

/** Every task name some simulated robot has (the launch file's `task:` and every ROS 2 executable's `task` parameter). */
export const TASK_NAMES = [...new Set(Object.values(ROBOT_TASKS).flatMap((t) => Object.keys(t)))] as [TaskName, ...TaskName[]];

/**
 * A task name that is not the simulator's (driver.kind gym: the env's own task) is a plain identifier: it is recorded
 * into every episode, sent to the learner, put into package versions (policy caches are named after them) and written
 * into dataset exports, so no path separators, spaces, control characters or unbounded length.
 */
export const TASK_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** A task's episode length in control ticks at `controlHz` (tasks timed in seconds scale with the rate). */
export function episodeSteps(spec: Pick<TaskSpec, "episodeSec" | "maxSteps">, controlHz: number): number {
  return spec.episodeSec === undefined ? spec.maxSteps : Math.round(spec.episodeSec * controlHz);
}

/** The task spec of `task` on `robot` (default rlft_arm5); one clear error names what exists instead. */
export function taskSpec(robot: string | undefined, task: string): TaskSpec {
  const r = (robot ?? "rlft_arm5") as SimRobotName;
  const tasks = ROBOT_TASKS[r];
  if (!tasks || !Object.hasOwn(ROBOT_TASKS, r)) throw new Error(`robot ${JSON.stringify(String(robot).slice(0, 40))} is not simulated: the simulator has ${SIM_ROBOTS.join(", ")} (set \`robot:\` in the launch file)`);
  // Own keys only ("constructor" is no task); the name is shown escaped and cut (it may come from a hostile file).
  const spec = Object.hasOwn(tasks, task) ? tasks[task as TaskName] : undefined;
  const shown = JSON.stringify(String(task).length > 40 ? `${String(task).slice(0, 40)}...` : String(task));
  if (!spec) throw new Error(`robot ${r} has no task ${shown}; its tasks are ${Object.keys(tasks).join(", ")}`);
  return spec;
}

/** Every observation name only a simulator knows, over all sim robots and tasks (the union of their `privileged`). */
export function simOnlySignals(): ReadonlySet<string> {
  const out = new Set<string>();
  for (const tasks of Object.values(ROBOT_TASKS)) for (const t of Object.values(tasks)) for (const n of t?.privileged ?? []) out.add(n);
  return out;
}
