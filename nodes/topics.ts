/** The topics of the stack and their ROS 2 types, in one table so nodes, recorder and replay agree. */
export const TOPICS = {
  jointStates: { topic: "/joint_states", type: "sensor_msgs/msg/JointState" },
  /** What the driver executes (after the safety supervisor): the recorded action. */
  jointCommand: { topic: "/joint_command", type: "sensor_msgs/msg/JointState" },
  /** What the actor (policy or expert) proposes, before safety. */
  proposedCommand: { topic: "/policy/joint_command", type: "sensor_msgs/msg/JointState" },
  observation: { topic: "/observation", type: "rlft_interfaces/msg/Observation" },
  actionChunk: { topic: "/policy/action_chunk", type: "rlft_interfaces/msg/ActionChunk" },
  policyStatus: { topic: "/policy/status", type: "rlft_interfaces/msg/PolicyStatus" },
  reward: { topic: "/reward", type: "rlft_interfaces/msg/Reward" },
  episodeEvent: { topic: "/episode/event", type: "rlft_interfaces/msg/EpisodeEvent" },
  safetyEvent: { topic: "/safety/events", type: "rlft_interfaces/msg/SafetyEvent" },
  image: { topic: "/camera/front/image", type: "sensor_msgs/msg/Image" },
  depth: { topic: "/camera/front/depth", type: "sensor_msgs/msg/Image" },
} as const;

/** Topics the recorder writes by default: everything. */
export const RECORDED = Object.values(TOPICS);
