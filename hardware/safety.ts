/**
 * Safety limits as pure functions, applied before a command reaches a driver (LeRobot's
 * `ensure_safe_goal_position` idea, extended). Each returns the command it allows plus what it changed,
 * so the supervisor can log and publish every intervention.
 */

/** Per-joint limits of one robot. */
export interface JointLimits {
  names: readonly string[];
  lower: readonly number[];
  upper: readonly number[];
  /** Largest change of a joint target per control tick (rad or m); the velocity clamp. */
  maxStep: readonly number[];
}

/** What a safety function changed. */
export interface SafetyChange {
  kind: "nan_guard" | "joint_limit" | "velocity_clamp" | "length_mismatch" | "acceleration_clamp" | "workspace";
  detail: string;
  joints: string[];
}

/** Result of applying the limits to one command. */
export interface SafeCommand {
  /** The command that may be sent. */
  positions: number[];
  /** Empty when the request was already safe. */
  changes: SafetyChange[];
  /** True when the request was unusable and the output holds the measured position. */
  held: boolean;
}

/**
 * Makes a joint-position request safe: NaN/Inf or a wrong length → hold the measured position;
 * otherwise clamp to the joint limits, then limit the step from the measured position.
 */
export function safeJointCommand(requested: readonly number[], measured: readonly number[], limits: JointLimits): SafeCommand {
  const n = limits.names.length;
  if (requested.length !== n) {
    return {
      positions: [...measured],
      held: true,
      changes: [{ kind: "length_mismatch", detail: `expected ${n} joint targets (${limits.names.join(", ")}), got ${requested.length}; holding`, joints: [...limits.names] }],
    };
  }
  const bad = limits.names.filter((_, i) => !Number.isFinite(requested[i]));
  if (bad.length > 0) {
    return {
      positions: [...measured],
      held: true,
      changes: [{ kind: "nan_guard", detail: `non-finite target for ${bad.join(", ")}; holding the measured position`, joints: bad }],
    };
  }
  const changes: SafetyChange[] = [];
  const out = new Array<number>(n);
  const limited: string[] = [];
  const clamped: string[] = [];
  for (let i = 0; i < n; i++) {
    let q = requested[i];
    if (q < limits.lower[i] || q > limits.upper[i]) {
      q = Math.min(limits.upper[i], Math.max(limits.lower[i], q));
      limited.push(limits.names[i]);
    }
    const from = Number.isFinite(measured[i]) ? measured[i] : q;
    const step = q - from;
    if (Math.abs(step) > limits.maxStep[i]) {
      q = from + Math.sign(step) * limits.maxStep[i];
      clamped.push(limits.names[i]);
    }
    out[i] = q;
  }
  if (limited.length) changes.push({ kind: "joint_limit", detail: `clamped to joint limits: ${limited.join(", ")}`, joints: limited });
  if (clamped.length) changes.push({ kind: "velocity_clamp", detail: `step limited: ${clamped.join(", ")}`, joints: clamped });
  return { positions: out, changes, held: false };
}
