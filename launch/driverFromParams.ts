/**
 * Real-arm drivers from `rlft node arm_driver` parameters (one process per node under ROS 2). Either
 * `launch=<file>` reuses a launch file's whole `driver:` block (and its `calibration.arm`), or the flat
 * parameters describe the arm; both end in the same DriverSchema (hardware/DriverConfig.ts) and createArmDriver,
 * so defaults and checks are those of `rlft launch`.
 */
import type { ArmDriver } from "../hardware/ArmDriver.ts";
import { DriverSchema, type DriverConfig } from "../hardware/DriverConfig.ts";
import { createArmDriver } from "../hardware/createArmDriver.ts";
import type { Runtime } from "../runtime/Runtime.ts";
import { loadLaunch } from "./LaunchConfig.ts";

/** The arm_driver parameters a real driver reads (see launch/nodeExecutables.ts for the schema). */
export interface ArmDriverParams {
  driver: string;
  launch?: string;
  port?: string;
  host?: string;
  controller?: string;
  baud?: number;
  model?: string;
  ids?: number[];
  calibration?: string;
  joint_names: string[];
  joint_lower?: number[];
  joint_upper?: number[];
  loop_hz?: number;
  on_deactivate?: "hold" | "torque_off";
}

type RealDriver = Exclude<DriverConfig, { kind: "sim" }>;

/** The driver block the parameters describe. */
export function driverConfigFromParams(p: ArmDriverParams): { driver: RealDriver; calibration?: string } {
  if (p.launch) {
    const cfg = loadLaunch(p.launch);
    const d = cfg.driver;
    if (d.kind === "sim") throw new Error(`arm_driver: ${p.launch} drives the sim (driver.kind sim); use the sim executable`);
    if (d.kind !== p.driver) throw new Error(`arm_driver: driver=${p.driver} but ${p.launch} has driver.kind ${d.kind}`);
    const over: Record<string, unknown> = {};
    if (p.port !== undefined) over.port = d.kind === "ur_rtde" ? Number(p.port) : p.port;
    if (p.host !== undefined) over.host = p.host;
    return { driver: DriverSchema.parse({ ...d, ...over }) as RealDriver, calibration: p.calibration ?? cfg.calibration.arm };
  }
  const n = p.joint_names.length;
  const lim = (v: number[] | undefined, d: number, key: string) => {
    const a = v ?? Array(n).fill(d);
    if (a.length !== n) throw new Error(`arm_driver: ${key} needs ${n} values (${p.joint_names.join(", ")}), got ${a.length}`);
    return a;
  };
  const raw: Record<string, unknown> = { kind: p.driver };
  switch (p.driver) {
    case "feetech":
    case "dynamixel": {
      const ids = p.ids ?? p.joint_names.map((_, i) => i + 1);
      if (ids.length !== n) throw new Error(`arm_driver: ids needs one servo id per joint (${n}), got ${ids.length}`);
      if (!p.calibration && (!p.joint_lower || !p.joint_upper)) {
        throw new Error(`arm_driver: driver=${p.driver} needs calibration=<rlft calibrate arm file> (zeros, directions, ranges) or joint_lower/joint_upper, or launch=<launch file>`);
      }
      const lower = lim(p.joint_lower, -Math.PI, "joint_lower");
      const upper = lim(p.joint_upper, Math.PI, "joint_upper");
      Object.assign(raw, { port: p.port, baud: p.baud, model: p.model, loop_hz: p.loop_hz, on_deactivate: p.on_deactivate, joints: p.joint_names.map((name, i) => ({ name, id: ids[i], lower: lower[i], upper: upper[i] })) });
      break;
    }
    case "ur_rtde":
      Object.assign(raw, { host: p.host, ...(p.port !== undefined ? { port: Number(p.port) } : {}), joints: p.joint_names, ...(p.joint_lower ? { lower: p.joint_lower } : {}), ...(p.joint_upper ? { upper: p.joint_upper } : {}) });
      break;
    case "ros2_control": {
      const controller = p.controller ?? "forward_position_controller";
      const trajectory = /trajectory/.test(controller);
      Object.assign(raw, {
        joints: p.joint_names,
        lower: lim(p.joint_lower, -Math.PI, "joint_lower"),
        upper: lim(p.joint_upper, Math.PI, "joint_upper"),
        command: trajectory ? "trajectory" : "forward",
        command_topic: `/${controller}/${trajectory ? "joint_trajectory" : "commands"}`,
      });
      break;
    }
    default:
      throw new Error(`arm_driver: unknown driver "${p.driver}"`);
  }
  const clean = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined));
  const r = DriverSchema.safeParse(clean);
  if (!r.success) throw new Error(`arm_driver (driver=${p.driver}): ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return { driver: r.data as RealDriver, calibration: p.calibration };
}

/** Builds the real driver `p` describes. */
export async function realArmDriver(p: ArmDriverParams, runtime: Runtime): Promise<ArmDriver> {
  const { driver, calibration } = driverConfigFromParams(p);
  const logger = { info: (m: string) => console.log(m), warn: (m: string) => console.warn(m) };
  return createArmDriver(driver, { node: () => runtime.createNode("arm_bridge"), logger, armCalibration: calibration });
}
