/**
 * The operator contract: commands as they arrive (web UI, MQTT, keyboard, gamepad), their results, and the status the
 * operator console publishes to the UI and MQTT (nodes/OperatorConsoleNode.ts assembles it).
 */

/** Every operator command. */
export const OPERATOR_COMMANDS = ["start", "pause", "resume", "success", "failure", "abort", "reset", "estop", "release_estop"] as const;
/** One operator command. */
export type OperatorCommand = (typeof OPERATOR_COMMANDS)[number];

/** One finished episode in the console's history (charts). */
export interface ConsoleEpisode {
  episode: number;
  outcome: string;
  steps: number;
  interventionSteps: number;
  durationSec: number;
}

/** The status the UI and MQTT show. */
export interface OperatorStatus {
  robot: string;
  task: string;
  online: boolean;
  state: "idle" | "running" | "paused";
  estop: boolean;
  episode: number;
  seed: number;
  step: number;
  maxSteps: number;
  elapsedSec: number;
  controlHz: number;
  policyVersion: string;
  /** Who acts now: "policy", or the operator's device. */
  inControl: string;
  joints: { names: string[]; position: number[] };
  lastOutcome: string;
  lastDetail: string;
  history: ConsoleEpisode[];
  /** Over the last `window` episodes. */
  rollingSuccess: number;
  rollingIntervention: number;
  window: number;
  learner: Record<string, string | number>;
  teleop: { device: string; error: string | null };
  rejected: { malformed: number; otherRobot: number; refused: number };
  message: string;
}

/** A command as it arrives from a UI, MQTT or a device. */
export interface CommandRequest {
  cmd: string;
  /** The robot it is meant for; absent = this one (keyboard, devices). */
  robot?: string;
  /** Where it came from: "web_ui", "mqtt", "keyboard", "gamepad", ... (recorded as the reward source). */
  from: string;
}

/** Result of a command. */
export type CommandResult = { ok: true } | { ok: false; ignored?: boolean; error: string };
