/**
 * What one arm driver registers (hardware/registry.ts lists them, one line each): its `kind`, the zod schema of its
 * launch-file `driver:` block, how to build it, how the flat `rlft node arm_driver` parameters map onto that block,
 * and the simulator fixture the ArmDriver contract suite (hardware/contract.ts) runs it against. Adding a driver is
 * a folder with a `driver.ts` exporting one of these, plus its line in the registry (docs/hardware.md, "Adding a
 * driver").
 */
import type { z } from "zod";
import type { ArmDriver } from "./ArmDriver.ts";
import type { DriverHarness } from "./contract.ts";
import type { NodeHandle } from "../runtime/Runtime.ts";

/** What a driver may need from whoever builds it (the embedded stack or a ROS 2 executable). */
export interface ArmDriverContext {
  /** A node for drivers that talk through topics (ros2_control). */
  node: () => NodeHandle;
  logger: { warn(msg: string): void; info(msg: string): void };
  /**
   * An `rlft calibrate arm` (or LeRobot) calibration file, the launch file's `calibration.arm`: for servo arms it
   * replaces each joint's zero_ticks/direction, and its range narrows lower/upper.
   */
  armCalibration?: string;
  /** The launch file's robot and task (the simulator builds that world; real arms treat them as metadata). */
  robot?: string;
  task: string;
  controlHz: number;
  /** The language instruction of the episode (VLA tasks in the simulator). */
  instruction?: string;
}

/** The flat parameters of `rlft node arm_driver` (schema in launch/nodeExecutables.ts). */
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

/** One joint as a policy commands it: name, unit and command limits. */
export interface LayoutJoint {
  name: string;
  unit: string;
  lower: number;
  upper: number;
}

/** A simulator the contract suite drives this driver over (hardware/contract.test.ts). */
export interface ContractFixture {
  /** Test title, e.g. "feetech (STS3215 over servo-sim)". */
  name: string;
  /** A fresh simulator and an unconfigured driver on it. */
  make(): Promise<DriverHarness>;
  /** The faults of the harness the suite injects, by name. */
  faults?: string[];
  /** Why the fixture cannot run on this machine (a missing tool), or false. */
  skip?: string | false;
}

/** One registered driver. `S` is its `driver:` block schema, a strict zod object with `kind: z.literal(kind)`. */
export interface DriverEntry<K extends string = string, S extends z.ZodObject<{ kind: z.ZodLiteral<K> }> = z.ZodObject<{ kind: z.ZodLiteral<K> }>> {
  kind: K;
  configSchema: S;
  /** Builds the driver a parsed block describes. */
  create(cfg: z.infer<S>, ctx: ArmDriverContext): Promise<ArmDriver>;
  /** The commanded joints, from the block alone (no hardware): robot layouts and package checks. */
  joints(cfg: z.infer<S>, ctx: { robot?: string; task: string; armCalibration?: string }): LayoutJoint[];
  /**
   * The raw `driver:` block (without kind) that flat `rlft node arm_driver` parameters describe; absent: the driver
   * only runs from a launch file (`--param launch=<file>`).
   */
  fromParams?(p: ArmDriverParams): Record<string, unknown>;
  /** True when the device side already publishes /joint_states (the stack's driver node then does not). */
  ownsJointStates?(cfg: z.infer<S>): boolean;
  /** `port=` / `host=` over a launch file's block (default: as given). */
  launchOverrides?(p: Pick<ArmDriverParams, "port" | "host">): Record<string, unknown>;
  /** The simulator fixture of the contract suite; loaded lazily so that running the driver never loads it. */
  contract(): Promise<ContractFixture>;
  /** A minimal `driver:` block of this kind (YAML-ready), used by the registry test and the docs. */
  example: Record<string, unknown>;
}

/** `values` (or `fallback` for every joint) checked to hold one value per joint of `p`; the error names `key`. */
export function perJointParam(p: Pick<ArmDriverParams, "joint_names">, values: number[] | undefined, fallback: number, key: string): number[] {
  const n = p.joint_names.length;
  const a = values ?? Array(n).fill(fallback);
  if (a.length !== n) throw new Error(`arm_driver: ${key} needs ${n} values (${p.joint_names.join(", ")}), got ${a.length}`);
  return a;
}

/** Types an entry (its config type inferred from its schema). */
export function defineDriver<K extends string, S extends z.ZodObject<{ kind: z.ZodLiteral<K> }>>(entry: DriverEntry<K, S>): DriverEntry<K, S> {
  return entry;
}
