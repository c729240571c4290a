/** Builds the real-arm driver a launch file's `driver:` block describes (the sim driver is built by the Stack). */
import type { ArmDriver } from "./ArmDriver.ts";
import type { DriverConfig } from "./DriverConfig.ts";
import type { LaunchConfig } from "../launch/LaunchConfig.ts";
import type { RateLimits, WorkspaceBox } from "./motionLimits.ts";
import { dhForwardKinematics, FK_PRESETS, type ForwardKinematics } from "./kinematics.ts";
import type { NodeHandle } from "../runtime/Runtime.ts";
import { ServoArmDriver } from "./servo/ServoArmDriver.ts";
import { openServoBus } from "./servo/openServoBus.ts";
import { servoModel } from "./servo/servoModels.ts";
import { UrRtdeDriver } from "./ur/UrRtdeDriver.ts";
import { Ros2ControlDriver } from "./ros2control/Ros2ControlDriver.ts";

/** What the drivers may need from the stack. */
export interface ArmDriverContext {
  /** A node for drivers that talk through topics (ros2_control). */
  node: () => NodeHandle;
  logger: { warn(msg: string): void; info(msg: string): void };
}

/** A real-arm driver for `cfg` (not sim). */
export async function createArmDriver(cfg: Exclude<DriverConfig, { kind: "sim" }>, ctx: ArmDriverContext): Promise<ArmDriver> {
  switch (cfg.kind) {
    case "feetech":
    case "dynamixel": {
      const bus = cfg.kind;
      return new ServoArmDriver({
        openBus: () => openServoBus({ bus, port: cfg.port, baudRate: cfg.baud, model: cfg.model, timeoutMs: cfg.timeout_ms, retries: cfg.retries }),
        joints: cfg.joints.map((j) => ({ name: j.name, id: j.id, zeroTicks: j.zero_ticks, direction: j.direction, lower: j.lower, upper: j.upper, model: j.model ? servoModel(bus, j.model) : undefined })),
        loopHz: cfg.loop_hz,
        staleSec: cfg.stale_sec,
        onDeactivate: cfg.on_deactivate,
        onFault: cfg.on_fault,
        busWatchdogMs: cfg.kind === "dynamixel" ? cfg.bus_watchdog_ms : undefined,
        logger: ctx.logger,
      });
    }
    case "ur_rtde":
      return new UrRtdeDriver({
        host: cfg.host,
        port: cfg.port,
        frequency: cfg.frequency,
        joints: cfg.joints,
        lower: cfg.lower,
        upper: cfg.upper,
        uploadScript: cfg.upload_script,
        scriptPort: cfg.script_port,
        lookaheadTime: cfg.lookahead_time,
        gain: cfg.gain,
        watchdogSec: cfg.watchdog_sec,
        timeoutMs: cfg.timeout_ms,
        logger: ctx.logger,
      });
    case "ros2_control":
      return new Ros2ControlDriver({
        node: ctx.node(),
        joints: cfg.joints,
        lower: cfg.lower,
        upper: cfg.upper,
        command: cfg.command,
        commandTopic: cfg.command_topic,
        stateTopic: cfg.state_topic,
        timeFromStart: cfg.time_from_start,
        staleSec: cfg.stale_sec,
      });
  }
}

/** The safety supervisor's rate and workspace limits from a launch file's `safety:` block. */
export function motionLimits(
  safety: LaunchConfig["safety"],
  names: readonly string[],
  controlHz: number,
): { rates?: RateLimits & { dt: number }; workspace?: { fk: ForwardKinematics; box: WorkspaceBox } } {
  const perJoint = (v: number | number[] | undefined, key: string): number[] | undefined => {
    if (v === undefined) return undefined;
    const arr = typeof v === "number" ? names.map(() => v) : v;
    if (arr.length !== names.length) throw new Error(`safety.${key}: expected ${names.length} values (${names.join(", ")}), got ${arr.length}`);
    return arr;
  };
  const maxVelocity = perJoint(safety.max_velocity, "max_velocity");
  const maxAcceleration = perJoint(safety.max_acceleration, "max_acceleration");
  if (maxAcceleration && !maxVelocity) throw new Error("safety.max_acceleration needs safety.max_velocity too");
  const out: ReturnType<typeof motionLimits> = {};
  if (maxVelocity) out.rates = { names, maxVelocity, maxAcceleration: maxAcceleration ?? names.map(() => Infinity), dt: 1 / controlHz };
  const w = safety.workspace;
  if (w) out.workspace = { fk: w.fk === "dh" ? dhForwardKinematics(w.dh!) : FK_PRESETS[w.fk], box: { min: w.min, max: w.max } };
  return out;
}
