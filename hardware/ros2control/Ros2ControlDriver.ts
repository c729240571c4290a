/**
 * A bridge to any arm that already has a ros2_control driver (UR, Franka, Kinova, xArm): state from the
 * joint_state_broadcaster (`/joint_states`, sensor_msgs/JointState), commands to either a
 * forward_command_controller (position interface; std_msgs/Float64MultiArray in the controller's joint order)
 * or a joint_trajectory_controller (a single-point trajectory_msgs/JointTrajectory reaching the target in
 * `time_from_start`). It talks only through the runtime's topics, so it runs on rclnodejs against a real
 * controller_manager and on the embedded runtime against a test double.
 */
import type { ArmDriver, DriverStatus, JointReading } from "../ArmDriver.ts";
import type { NodeHandle, Publisher, Subscription } from "../../runtime/Runtime.ts";

/** Options of the bridge. */
export interface Ros2ControlDriverOptions {
  node: NodeHandle;
  joints: readonly string[];
  lower: readonly number[];
  upper: readonly number[];
  command: "forward" | "trajectory";
  /** Default: /forward_position_controller/commands or /joint_trajectory_controller/joint_trajectory. */
  commandTopic?: string;
  stateTopic?: string;
  /** Trajectory mode: time to reach each target (s). */
  timeFromStart?: number;
  /** No joint state for this long → read() fails. */
  staleSec?: number;
  /** configure() waits this long for the first joint state. */
  waitSec?: number;
}

interface JointStateIn {
  name: string[];
  position: ArrayLike<number>;
  velocity: ArrayLike<number>;
  effort: ArrayLike<number>;
}

/** ArmDriver over ros2_control topics. */
export class Ros2ControlDriver implements ArmDriver {
  readonly jointNames: readonly string[];
  readonly jointLower: readonly number[];
  readonly jointUpper: readonly number[];
  readonly commandTopic: string;
  readonly stateTopic: string;
  #o: Ros2ControlDriverOptions;
  #state: ArmDriver["state"] = "unconfigured";
  #pub: Publisher<unknown> | null = null;
  #sub: Subscription | null = null;
  #reading: JointReading | null = null;
  #readAt = -Infinity;
  #missing = "";

  constructor(opts: Ros2ControlDriverOptions) {
    const n = opts.joints.length;
    if (opts.lower.length !== n || opts.upper.length !== n) throw new Error(`ros2_control driver: lower and upper need ${n} entries (one per joint), got ${opts.lower.length} and ${opts.upper.length}`);
    this.#o = opts;
    this.jointNames = opts.joints;
    this.jointLower = opts.lower;
    this.jointUpper = opts.upper;
    this.stateTopic = opts.stateTopic ?? "/joint_states";
    this.commandTopic = opts.commandTopic ?? (opts.command === "forward" ? "/forward_position_controller/commands" : "/joint_trajectory_controller/joint_trajectory");
  }

  get state(): ArmDriver["state"] {
    return this.#state;
  }

  async configure(): Promise<void> {
    if (this.#state !== "unconfigured") return;
    const node = this.#o.node;
    this.#sub = node.createSubscription<JointStateIn>("sensor_msgs/msg/JointState", this.stateTopic, (m) => this.#onState(m));
    this.#pub =
      this.#o.command === "forward"
        ? node.createPublisher("std_msgs/msg/Float64MultiArray", this.commandTopic)
        : node.createPublisher("trajectory_msgs/msg/JointTrajectory", this.commandTopic);
    const waitMs = 1000 * (this.#o.waitSec ?? 3);
    const end = Date.now() + waitMs;
    while (!this.#reading && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    if (!this.#reading) {
      this.#release();
      const why = this.#missing ? `the joint states on ${this.stateTopic} lack ${this.#missing} — check driver.joints against the robot description` : `no sensor_msgs/JointState on ${this.stateTopic} in ${waitMs / 1000} s — is the robot's ros2_control launch running with joint_state_broadcaster active (ros2 control list_controllers)?`;
      throw new Error(`ros2_control driver: ${why}`);
    }
    this.#state = "inactive";
  }

  async activate(): Promise<void> {
    if (this.#state === "unconfigured") throw new Error("Ros2ControlDriver.activate: configure() first");
    this.#state = "active";
  }

  async deactivate(): Promise<void> {
    if (this.#state !== "active") return;
    // Last command: where the arm is, so a forward controller holds instead of finishing an old target.
    if (this.#reading) this.#publish(this.#reading.position);
    this.#state = "inactive";
  }

  async close(): Promise<void> {
    await this.deactivate();
    this.#release();
    this.#state = "unconfigured";
  }

  read(): { status: DriverStatus; reading?: JointReading } {
    if (!this.#reading) return { status: { ok: false, error: "ros2_control driver not configured" } };
    const age = this.#o.node.clock.now() - this.#readAt;
    const limit = this.#o.staleSec ?? 0.5;
    if (age > limit) return { status: { ok: false, error: `no joint state on ${this.stateTopic} for ${age.toFixed(2)} s (limit ${limit} s) — is the ros2_control node alive?` }, reading: this.#reading };
    return { status: { ok: true }, reading: this.#reading };
  }

  write(positions: readonly number[]): DriverStatus {
    if (this.#state !== "active") return { ok: false, error: `ros2_control driver is ${this.#state}: commands are not taken` };
    const n = this.jointNames.length;
    if (positions.length !== n) return { ok: false, error: `expected ${n} joint targets (${this.jointNames.join(", ")}), got ${positions.length}` };
    const bad = positions.findIndex((q) => !Number.isFinite(q));
    if (bad >= 0) return { ok: false, error: `non-finite target for ${this.jointNames[bad]}; not sent` };
    this.#publish(positions.map((q, i) => Math.min(this.jointUpper[i], Math.max(this.jointLower[i], q))));
    return { ok: true };
  }

  #publish(q: readonly number[]): void {
    if (this.#o.command === "forward") {
      // forward_command_controller: data in the order of its `joints` parameter.
      this.#pub?.publish({ layout: { dim: [], data_offset: 0 }, data: [...q] });
      return;
    }
    const t = this.#o.timeFromStart ?? 0.1;
    const sec = Math.floor(t);
    this.#pub?.publish({
      // A zero stamp means "start now" to joint_trajectory_controller.
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: "" },
      joint_names: [...this.jointNames],
      points: [{ positions: [...q], velocities: [], accelerations: [], effort: [], time_from_start: { sec, nanosec: Math.round((t - sec) * 1e9) } }],
    });
  }

  #onState(m: JointStateIn): void {
    // The broadcaster publishes every joint of the robot (grippers too) in its own order: pick ours by name.
    const idx = this.jointNames.map((n) => m.name.indexOf(n));
    const missing = this.jointNames.filter((_, i) => idx[i] < 0);
    if (missing.length) {
      this.#missing = missing.join(", ");
      return;
    }
    const pick = (a: ArrayLike<number>) => idx.map((i) => (i < a.length ? a[i] : 0));
    this.#reading = { position: pick(m.position), velocity: pick(m.velocity), effort: pick(m.effort) };
    this.#readAt = this.#o.node.clock.now();
  }

  #release(): void {
    this.#sub?.unsubscribe();
    this.#sub = null;
    this.#pub = null;
  }
}
