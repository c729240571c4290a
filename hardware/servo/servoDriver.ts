/**
 * What the Feetech and Dynamixel drivers share (hardware/feetech/driver.ts, hardware/dynamixel/driver.ts): the
 * `driver:` keys of a servo bus arm, the joint block, calibration, and building a ServoArmDriver from the block.
 */
import { z } from "zod";
import type { ArmDriverContext, ArmDriverParams, DriverEntry, LayoutJoint } from "../driverEntry.ts";
import { perJointParam } from "../driverEntry.ts";
import type { ArmDriver } from "../ArmDriver.ts";
import { bounded } from "../../contracts/physicalBounds.ts";
import { jointLimits, loadArmCalibration } from "../../calibration/ArmCalibration.ts";
import { ServoArmDriver } from "./ServoArmDriver.ts";
import { openServoBus } from "./openServoBus.ts";
import { servoModel } from "./servoModels.ts";
import { zeroAndDirection } from "./servoCalibration.ts";

export const onDeactivate = z.enum(["hold", "torque_off"]);

/** One servo joint of a bus arm. */
export const ServoJointSchema = z
  .object({
    /** Joint name as in /joint_states and the policy package. */
    name: z.string().min(1),
    /** Servo id on the bus (set once with the vendor tool or rlft calibrate). */
    id: z.number().int().min(0).max(252),
    /** Raw encoder ticks at joint angle 0 (from calibration; 2048 = the middle of an STS3215 / X-series turn). */
    zero_ticks: z.number().int().default(2048),
    /** -1 when the servo turns opposite to the joint's positive direction. */
    direction: z.union([z.literal(1), z.literal(-1)]).default(1),
    /** Joint limits in rad (gripper too: its servo angle); commands are clamped to them. */
    lower: bounded("joint_range"),
    upper: bounded("joint_range"),
    /** Servo model of this joint when a bus mixes models (Koch: xl430 + xl330); default driver.model. */
    model: z.string().optional(),
  })
  .strict()
  .refine((j) => j.lower < j.upper, { message: "lower must be below upper" });

/** The keys every servo bus block has. */
export const servoCommon = {
  /** Serial port of the bus adapter; `rlft launch --port` overrides it. Prefer /dev/serial/by-id/... (stable across replugs). */
  port: z.string().default("/dev/ttyACM0"),
  /** I/O loop rate: one sync write of goals + one sync read of state per cycle. */
  loop_hz: z.number().positive().max(1000).default(100),
  /** Per-reply deadline (ms); raise it for FTDI adapters whose latency_timer is 16 ms. */
  timeout_ms: z.number().int().min(1).max(1000).default(50),
  /** Retries after a checksum error or a missing reply before a cycle fails. */
  retries: z.number().int().min(0).max(10).default(2),
  /** A reading older than this makes read() fail (the stack then stops publishing state and the watchdog holds). */
  stale_sec: bounded("reading_age").default(0.5),
  /** What deactivate (end of session, Ctrl-C) does: hold the pose with torque on, or torque off (arm goes limp). */
  on_deactivate: onDeactivate.default("torque_off"),
  /** What a bus fault while active does (5 failed cycles): torque off, or leave the servos holding their last goal. */
  on_fault: onDeactivate.default("hold"),
  joints: z.array(ServoJointSchema).min(1),
};

/** A parsed servo joint. */
export type ServoJointCfg = z.infer<typeof ServoJointSchema>;

/** A parsed servo bus block (either bus). */
export interface ServoBusCfg {
  kind: "feetech" | "dynamixel";
  port: string;
  baud: number;
  model: string;
  loop_hz: number;
  timeout_ms: number;
  retries: number;
  stale_sec: number;
  on_deactivate: "hold" | "torque_off";
  on_fault: "hold" | "torque_off";
  joints: ServoJointCfg[];
  bus_watchdog_ms?: number;
}

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

/** The ServoArmDriver a servo bus block describes. */
async function createServoArm(cfg: ServoBusCfg, ctx: ArmDriverContext): Promise<ArmDriver> {
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
    busWatchdogMs: cfg.bus_watchdog_ms,
    logger: ctx.logger,
  });
}

/** The joints a servo block commands (calibration.arm narrows the limits, as at launch). */
function servoJoints(cfg: ServoBusCfg, ctx: { armCalibration?: string }): LayoutJoint[] {
  const cal = ctx.armCalibration ? loadArmCalibration(ctx.armCalibration) : undefined;
  return cfg.joints.map((j) => {
    const { lower, upper } = servoJointFromCalibration(j, ctx.armCalibration, cal);
    return { name: j.name, unit: "rad", lower, upper };
  });
}

/** The servo block flat arm_driver parameters describe (ids default 1..n). */
function servoFromParams(p: ArmDriverParams): Record<string, unknown> {
  const n = p.joint_names.length;
  const ids = p.ids ?? p.joint_names.map((_, i) => i + 1);
  if (ids.length !== n) throw new Error(`arm_driver: ids needs one servo id per joint (${n}), got ${ids.length}`);
  if (!p.calibration && (!p.joint_lower || !p.joint_upper)) {
    throw new Error(`arm_driver: driver=${p.driver} needs calibration=<rlft calibrate arm file> (zeros, directions, ranges) or joint_lower/joint_upper, or launch=<launch file>`);
  }
  const lower = perJointParam(p, p.joint_lower, -Math.PI, "joint_lower");
  const upper = perJointParam(p, p.joint_upper, Math.PI, "joint_upper");
  return { port: p.port, baud: p.baud, model: p.model, loop_hz: p.loop_hz, on_deactivate: p.on_deactivate, joints: p.joint_names.map((name, i) => ({ name, id: ids[i], lower: lower[i], upper: upper[i] })) };
}

/** What a servo bus entry shares; each bus adds its kind, schema and contract fixture. */
export const servoEntryParts = {
  create: (cfg: ServoBusCfg, ctx: ArmDriverContext) => createServoArm(cfg, ctx),
  joints: (cfg: ServoBusCfg, ctx: { armCalibration?: string }) => servoJoints(cfg, ctx),
  fromParams: servoFromParams,
  example: { port: "/dev/ttyACM0", joints: [{ name: "shoulder_pan", id: 1, lower: -1.5, upper: 1.5 }] },
} satisfies Partial<DriverEntry>;
