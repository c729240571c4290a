/**
 * Every arm driver rlft can run, one line each. Each driver's folder exports its entry (hardware/driverEntry.ts:
 * kind, `driver:` block schema, create, flat ROS 2 parameters, contract fixture); the launch schema, `Stack`, the
 * ROS 2 `arm_driver` executable, robot layouts and the ArmDriver contract suite all read this list. docs/hardware.md,
 * "Adding a driver".
 */
import { z } from "zod";
import type { ArmDriver } from "./ArmDriver.ts";
import type { ArmDriverContext, DriverEntry, LayoutJoint } from "./driverEntry.ts";
import { simDriver } from "./sim/driver.ts";
import { feetechDriver } from "./feetech/driver.ts";
import { dynamixelDriver } from "./dynamixel/driver.ts";
import { urRtdeDriver } from "./ur/driver.ts";
import { ros2ControlDriver } from "./ros2control/driver.ts";
import { gymDriver } from "./gym/driver.ts";

/** The registered drivers. */
export const DRIVERS = [
  simDriver, // MuJoCo
  feetechDriver, // SO-100, SO-101
  dynamixelDriver, // Koch
  urRtdeDriver, // UR e-Series
  ros2ControlDriver, // any ros2_control arm
  gymDriver, // any Gymnasium environment (gym-hil, a user's own)
] as const;

/** Every registered `driver.kind`. */
export const DRIVER_KINDS = DRIVERS.map((d) => d.kind) as [DriverKind, ...DriverKind[]];
export type DriverKind = (typeof DRIVERS)[number]["kind"];

type SchemaOf<E> = E extends { configSchema: infer S } ? S : never;
type Drivers = typeof DRIVERS;
type Schemas = [SchemaOf<Drivers[0]>, ...{ [K in keyof Drivers]: SchemaOf<Drivers[K]> }[number][]];

/** The launch file's `driver:` block: a discriminated union on `kind` (default sim, so older launch files still parse). */
export const DriverSchema = z.preprocess(
  (v) => (v && typeof v === "object" && !Array.isArray(v) && !("kind" in v) ? { ...v, kind: "sim" } : v),
  z.discriminatedUnion("kind", DRIVERS.map((d) => d.configSchema) as unknown as Schemas),
);

/** A parsed driver block. */
export type DriverConfig = z.infer<typeof DriverSchema>;

/** The entry of `kind`; the error lists what is registered and where drivers register. */
export function driverEntry(kind: string): DriverEntry {
  const e = DRIVERS.find((d) => d.kind === kind);
  if (!e) throw new Error(`driver "${kind}" is not registered (registered: ${DRIVER_KINDS.join(", ")}); drivers register in hardware/registry.ts`);
  return e as unknown as DriverEntry;
}

/** Builds the driver a parsed `driver:` block describes (the sim too: ctx's robot and task pick its world). */
export function createArmDriver(cfg: DriverConfig, ctx: ArmDriverContext): Promise<ArmDriver> {
  return driverEntry(cfg.kind).create(cfg as { kind: string }, ctx);
}

/** The joints a `driver:` block commands, from the block alone (no hardware, no simulator). */
export function driverJoints(cfg: DriverConfig, ctx: { robot?: string; task: string; armCalibration?: string }): LayoutJoint[] {
  return driverEntry(cfg.kind).joints(cfg as { kind: string }, ctx);
}

/** Whether the device side already publishes /joint_states for this block (ros2_control's joint_state_broadcaster). */
export function driverOwnsJointStates(cfg: DriverConfig): boolean {
  return driverEntry(cfg.kind).ownsJointStates?.(cfg as { kind: string }) ?? false;
}
