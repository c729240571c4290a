/**
 * The human side of a stack: the operator console node, the teleop device node (ui/keyboard/gamepad/
 * spacemouse/leader), the web UI server and the MQTT link (with an in-process broker when no URL is set).
 * Stack.create builds it from the launch file; its nodes join the stack's lifecycle, its servers start
 * after activation and stop first at shutdown.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import type { Runtime } from "../runtime/Runtime.ts";
import type { LaunchConfig } from "./LaunchConfig.ts";
import type { EpisodeManagerNode } from "../nodes/EpisodeManagerNode.ts";
import { OperatorConsoleNode, type EpisodeControl } from "../nodes/OperatorConsoleNode.ts";
import { TeleopNode } from "../nodes/TeleopNode.ts";
import type { TeleopDevice } from "../hardware/teleop/TeleopDevice.ts";
import { KeyboardTeleop, type KeyInput } from "../hardware/teleop/KeyboardTeleop.ts";
import { GamepadTeleop } from "../hardware/teleop/GamepadTeleop.ts";
import { SpaceMouseTeleop } from "../hardware/teleop/SpaceMouseTeleop.ts";
import { LeaderArmTeleop } from "../hardware/teleop/LeaderArmTeleop.ts";
import type { JointPositionSource } from "../hardware/teleop/JointPositionSource.ts";
import { TeleopMapper } from "../hardware/teleop/TeleopMapper.ts";
import { ARM5_KINEMATICS } from "../hardware/teleop/arm5Kinematics.ts";
import { OperatorUiServer } from "../web/OperatorUiServer.ts";
import { MqttOperatorLink } from "../telemetry/mqtt/MqttOperatorLink.ts";
import { EmbeddedBroker } from "../telemetry/mqtt/EmbeddedBroker.ts";

/** Parts of the stack the station needs. */
export interface OperatorStationParts {
  manager: EpisodeManagerNode;
  control: EpisodeControl;
  policyVersion: () => string;
  jointNames: readonly string[];
  jointLower: readonly number[];
  jointUpper: readonly number[];
  /** Terminal input for --operator keyboard (default process.stdin). */
  keyInput?: KeyInput;
  /** The leader arm's servo bus (hardware/servo/openLeaderArm.ts: a ServoJointSource, torque off). */
  leaderSource?: JointPositionSource;
}

/** Builds the teleop device the launch file asks for. */
export function createTeleopDevice(config: LaunchConfig, parts: OperatorStationParts): TeleopDevice | null {
  const t = config.teleop;
  switch (config.operator.kind) {
    case "scripted":
      return null;
    case "ui":
      return new KeyboardTeleop({ config: t, source: "web_keyboard" });
    case "keyboard":
      return new KeyboardTeleop({ config: t, input: parts.keyInput ?? (process.stdin as unknown as KeyInput) });
    case "gamepad":
      return new GamepadTeleop({ config: t });
    case "spacemouse":
      return new SpaceMouseTeleop({ config: t });
    case "leader":
      if (!parts.leaderSource) {
        throw new Error(`--operator leader needs the leader arm's servo bus (${t.leader.protocol} on ${t.leader.port}): rlft session opens it from --leader-port/--leader-bus (hardware/servo/openLeaderArm.ts); in code pass Stack.create({ leaderSource })`);
      }
      return new LeaderArmTeleop({ config: t, source: parts.leaderSource, followerJoints: parts.jointNames });
  }
}

/** The operator station. */
export class OperatorStation {
  readonly console: OperatorConsoleNode;
  readonly teleop: TeleopNode | null;
  ui: OperatorUiServer | null = null;
  mqtt: MqttOperatorLink | null = null;
  broker: EmbeddedBroker | null = null;
  readonly #config: LaunchConfig;

  constructor(runtime: Runtime, config: LaunchConfig, parts: OperatorStationParts) {
    this.#config = config;
    const device = config.operator.enabled ? createTeleopDevice(config, parts) : null;
    this.console = new OperatorConsoleNode(runtime.createNode("operator_console"), {
      robot: config.learner.robot_id,
      task: config.task,
      controlHz: config.control_hz,
      manager: parts.manager,
      control: parts.control,
      policyVersion: parts.policyVersion,
      teleopDevice: device ? `${device.source} (${device.path})` : config.operator.enabled ? config.operator.kind : "none",
    });
    this.teleop = device
      ? new TeleopNode(runtime.createNode("teleop"), {
          device,
          mapper: new TeleopMapper({ jointLower: parts.jointLower, jointUpper: parts.jointUpper, kinematics: config.robot === "rlft_arm5" ? ARM5_KINEMATICS : undefined, jointScale: config.teleop.leader.joint_scale, jointOffset: config.teleop.leader.joint_offset }),
          releaseSec: config.teleop.release_sec,
          onCommand: (cmd, source) => this.console.command({ cmd, from: source }),
          onFault: (msg) => this.console.deviceFault(msg),
        })
      : null;
    if (device instanceof KeyboardTeleop) device.onEstop = () => void this.console.command({ cmd: "estop", from: device.source });
  }

  /** Nodes to configure/activate with the stack (console first: it owns /safety/estop). */
  get nodes(): { configure(): Promise<void>; activate(): Promise<void>; shutdown(): Promise<void> }[] {
    return [this.console, ...(this.teleop ? [this.teleop] : [])];
  }

  /** Starts the web UI and the MQTT link the launch file enables. */
  async startServers(): Promise<void> {
    const c = this.#config;
    const dev = this.teleop?.device;
    const key = dev instanceof KeyboardTeleop ? (k: string, down: boolean) => (down ? dev.keyDown(k) : dev.keyUp(k)) : undefined;
    if (c.ui.enabled) {
      const token = c.ui.token ?? (c.ui.token_file ? readToken(c.ui.token_file) : undefined);
      this.ui = await OperatorUiServer.start(
        { status: () => this.console.status(), onStatus: (cb) => this.console.onStatus(cb), onFrame: (cb) => this.console.onFrame(cb), command: (r) => this.console.command(r), malformed: (f, d) => this.console.malformed(f, d), key },
        { host: c.ui.host, port: c.ui.port, token, cameraFps: c.ui.camera_fps },
      );
    }
    if (c.mqtt.enabled) {
      let url = c.mqtt.url;
      if (!url) {
        this.broker = await EmbeddedBroker.start({ port: c.mqtt.embedded_port, username: c.mqtt.username, password: c.mqtt.password ?? (c.mqtt.password_file ? readToken(c.mqtt.password_file) : undefined) });
        url = this.broker.url;
      }
      this.mqtt = await MqttOperatorLink.connect(this.console, { url, robot: c.learner.robot_id, config: c.mqtt });
    }
  }

  /** Stops the servers (MQTT marks the robot offline first). */
  async close(): Promise<void> {
    await this.mqtt?.close();
    await this.broker?.close();
    await this.ui?.close();
  }
}

function readToken(file: string): string {
  try {
    const t = readFileSync(file.replace(/^~(?=\/)/, homedir()), "utf8").trim();
    if (t.length < 16) throw new Error(`${t.length} characters; use at least 16`);
    return t;
  } catch (e) {
    throw new Error(`Cannot use the secret in ${file}: ${(e as Error).message}`);
  }
}
