/**
 * Arm drivers from `rlft node arm_driver` parameters (one process per node under ROS 2). Either
 * `launch=<file>` reuses a launch file's whole `driver:` block (and its `calibration.arm`), or the flat
 * parameters describe the arm (each driver maps them in its own folder: `fromParams` of its registry entry); both
 * end in the same DriverSchema (hardware/registry.ts) and the node factory's driver (launch/nodeFactory.ts), so
 * defaults and checks are those of `rlft launch`.
 */
import type { ArmDriverParams } from "../hardware/driverEntry.ts";
import { DriverSchema, driverEntry, type DriverConfig } from "../hardware/registry.ts";
import { loadLaunch } from "./LaunchConfig.ts";

/** The driver block the parameters describe. */
export function driverConfigFromParams(p: ArmDriverParams): { driver: DriverConfig; calibration?: string } {
  const entry = driverEntry(p.driver);
  if (p.launch) {
    const cfg = loadLaunch(p.launch);
    const d = cfg.driver;
    if (d.kind === "sim" && p.driver !== "sim") throw new Error(`arm_driver: ${p.launch} drives the sim (driver.kind sim); use the sim executable`);
    if (d.kind !== p.driver) throw new Error(`arm_driver: driver=${p.driver} but ${p.launch} has driver.kind ${d.kind}`);
    const over = entry.launchOverrides ? entry.launchOverrides(p) : Object.fromEntries(Object.entries({ port: p.port, host: p.host }).filter(([, v]) => v !== undefined));
    return { driver: DriverSchema.parse({ ...d, ...over }), calibration: p.calibration ?? cfg.calibration.arm };
  }
  if (!entry.fromParams) throw new Error(`arm_driver: driver=${p.driver} has no flat parameters; pass launch=<launch file> with its driver: block`);
  const raw: Record<string, unknown> = { kind: p.driver, ...entry.fromParams(p) };
  const clean = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined));
  const r = DriverSchema.safeParse(clean);
  if (!r.success) throw new Error(`arm_driver (driver=${p.driver}): ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return { driver: r.data, calibration: p.calibration };
}
