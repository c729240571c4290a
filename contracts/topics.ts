/** The topics of the stack and their ROS 2 types, in one table so nodes, recorder and replay agree. */
export const TOPICS = {
  jointStates: { topic: "/joint_states", type: "sensor_msgs/msg/JointState" },
  /** What the driver executes (after the safety supervisor): the recorded action. */
  jointCommand: { topic: "/joint_command", type: "sensor_msgs/msg/JointState" },
  /** What the actor (policy or expert) proposes, before safety. */
  proposedCommand: { topic: "/policy/joint_command", type: "sensor_msgs/msg/JointState" },
  observation: { topic: "/observation", type: "rlft_interfaces/msg/Observation" },
  /** Per tick: base, residual and combined action in normalised space (what transitions are built from). */
  policyAction: { topic: "/policy/action", type: "rlft_interfaces/msg/PolicyAction" },
  /** The (scripted or human) operator's takeover state and action. */
  operatorIntervention: { topic: "/operator/intervention", type: "rlft_interfaces/msg/Intervention" },
  /** The arbiter's output: the operator's or the policy's command, on to safety. */
  arbiterCommand: { topic: "/arbiter/joint_command", type: "sensor_msgs/msg/JointState" },
  /** Who acted this tick. */
  arbiterIntervention: { topic: "/arbiter/intervention", type: "rlft_interfaces/msg/Intervention" },
  actionChunk: { topic: "/policy/action_chunk", type: "rlft_interfaces/msg/ActionChunk" },
  policyStatus: { topic: "/policy/status", type: "rlft_interfaces/msg/PolicyStatus" },
  reward: { topic: "/reward", type: "rlft_interfaces/msg/Reward" },
  episodeEvent: { topic: "/episode/event", type: "rlft_interfaces/msg/EpisodeEvent" },
  safetyEvent: { topic: "/safety/events", type: "rlft_interfaces/msg/SafetyEvent" },
  /** Software e-stop, latched: true holds the arm until false (operator UI, MQTT, keyboard). */
  estop: { topic: "/safety/estop", type: "std_msgs/msg/Bool" },
  image: { topic: "/camera/front/image", type: "sensor_msgs/msg/Image" },
  depth: { topic: "/camera/front/depth", type: "sensor_msgs/msg/Image" },
  /** The episode's language instruction (multi_push), published at reset, latched; VLA policies condition on it. */
  instruction: { topic: "/task/instruction", type: "std_msgs/msg/String" },
} as const;

/** Topics the recorder writes by default: everything. */
export const RECORDED = Object.values(TOPICS);
