/**
 * The leader arm of `--operator leader`: a second servo arm on its own bus, torque off so the operator moves it
 * by hand, read as joint angles in the follower's joint order. Joint ids and zeros come from the leader's own
 * calibration file (`rlft calibrate arm --robot so100_leader ...`), or else from the follower's `driver.joints`
 * (same arm model, same ids: SO-100 / Koch leader-follower pairs).
 */
import type { DriverConfig } from "../registry.ts";
import { loadArmCalibration } from "../../calibration/ArmCalibration.ts";
import { openServoBus } from "./openServoBus.ts";
import { ServoJointSource } from "./ServoJointSource.ts";
import { presentCalibration } from "./servoCalibration.ts";

/** Where the leader is. */
export interface LeaderArmOptions {
  port: string;
  bus: "feetech" | "dynamixel";
  baud?: number;
  model?: string;
  /** The leader's calibration file; default: the follower's zero_ticks/direction. */
  calibration?: string;
}

/** Opens the leader arm's bus (torque off) for the follower `cfg` drives. */
export async function openLeaderArm(cfg: { driver: DriverConfig }, o: LeaderArmOptions): Promise<ServoJointSource> {
  const d = cfg.driver;
  if (d.kind !== "feetech" && d.kind !== "dynamixel") {
    throw new Error(`--operator leader mirrors a servo leader arm onto a servo follower (driver.kind feetech or dynamixel); this launch file drives ${d.kind}: use --operator gamepad or spacemouse`);
  }
  const cal = o.calibration ? loadArmCalibration(o.calibration) : undefined;
  const joints = d.joints.map((j) => {
    if (!cal) return { name: j.name, id: j.id, calibration: presentCalibration(j.zero_ticks, j.direction, 4096) };
    const c = cal.joints[j.name];
    if (!c) throw new Error(`--leader-calibration ${o.calibration}: no joint "${j.name}" (it has ${Object.keys(cal.joints).join(", ")}); calibrate the leader with the follower's joint names`);
    return { name: j.name, id: c.id ?? j.id, calibration: c };
  });
  const model = o.model ?? (o.bus === d.kind ? d.model : o.bus === "feetech" ? "sts3215" : "xl330");
  return ServoJointSource.open({
    openBus: () => openServoBus({ bus: o.bus, port: o.port, baudRate: o.baud ?? (o.bus === d.kind ? d.baud : 1_000_000), model, timeoutMs: 50, retries: 2 }),
    joints,
    torqueOff: true,
  });
}
