/** Builds the real-arm driver a launch file's `driver:` block describes (the sim driver is built by the Stack). */
import type { ArmDriver } from "./ArmDriver.ts";
import type { DriverConfig } from "./DriverConfig.ts";
import type { NodeHandle } from "../runtime/Runtime.ts";
import { ServoArmDriver } from "./servo/ServoArmDriver.ts";
import { openServoBus } from "./servo/openServoBus.ts";
import { servoModel } from "./servo/servoModels.ts";
import { UrRtdeDriver } from "./ur/UrRtdeDriver.ts";
import { Ros2ControlDriver } from "./ros2control/Ros2ControlDriver.ts";
import { jointLimits, loadArmCalibration } from "../calibration/ArmCalibration.ts";
import { zeroAndDirection } from "./servo/servoCalibration.ts";

/** What the drivers may need from the stack. */
export interface ArmDriverContext {
  /** A node for drivers that talk through topics (ros2_control). */
  node: () => NodeHandle;
  logger: { warn(msg: string): void; info(msg: string): void };
  /**
   * An `rlft calibrate arm` (or LeRobot) calibration file, the launch file's `calibration.arm`: for servo arms it
   * replaces each joint's zero_ticks/direction, and its range narrows lower/upper.
   */
  armCalibration?: string;
}

type ServoJointCfg = Extract<DriverConfig, { kind: "feetech" }>["joints"][number];

/** A servo joint's zero, direction and limits: from the calibration file when there is one, else the launch file. */
export function servoJointFromCalibration(j: ServoJointCfg, file?: string, cal = file ? loadArmCalibration(file) : undefined): { zeroTicks: number; direction: 1 | -1; lower: number; upper: number } {
  if (!cal) return { zeroTicks: j.zero_ticks, direction: j.direction, lower: j.lower, upper: j.upper };
  const c = cal.joints[j.name];
  if (!c) throw new Error(`calibration.arm ${file}: no joint "${j.name}" (it has ${Object.keys(cal.joints).join(", ")}) — calibrate this arm with the launch file's joint names: rlft calibrate arm --motors ...`);
  const [lo, hi] = jointLimits(c);
  const lower = Math.max(lo, j.lower);
  const upper = Math.min(hi, j.upper);
  if (!(lower < upper)) throw new Error(`${j.name}: the calibrated range [${lo.toFixed(3)}, ${hi.toFixed(3)}] rad of ${file} does not overlap driver.joints lower/upper [${j.lower}, ${j.upper}] — widen them or calibrate again`);
  return { ...zeroAndDirection(c), lower, upper };
}

/** A real-arm driver for `cfg` (not sim). */
export async function createArmDriver(cfg: Exclude<DriverConfig, { kind: "sim" }>, ctx: ArmDriverContext): Promise<ArmDriver> {
  switch (cfg.kind) {
    case "feetech":
    case "dynamixel": {
      const bus = cfg.kind;
      const cal = ctx.armCalibration ? loadArmCalibration(ctx.armCalibration) : undefined;
      if (cal) ctx.logger.info(`${bus}: joint zeros, directions and ranges from ${ctx.armCalibration} (robot ${cal.robot}, ${cal.created_at})`);
      return new ServoArmDriver({
        openBus: () => openServoBus({ bus, port: cfg.port, baudRate: cfg.baud, model: cfg.model, timeoutMs: cfg.timeout_ms, retries: cfg.retries }),
        joints: cfg.joints.map((j) => ({ name: j.name, id: j.id, ...servoJointFromCalibration(j, ctx.armCalibration, cal), model: j.model ? servoModel(bus, j.model) : undefined })),
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
