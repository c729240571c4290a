/**
 * What a policy sees of the robot a launch file describes, worked out from the file alone (no hardware, no
 * simulator): `observation.state` (LeRobot's name; the joint positions, in order, with their units) and `action`
 * (absolute joint targets: names, units, limits). Two launch files whose layouts are equal can run the same policy
 * package; launch/sim_so101.yaml and launch/so100.yaml are held to that by launch/robotLayout.test.ts.
 */
import type { LaunchConfig } from "./LaunchConfig.ts";
import { driverJoints } from "../hardware/registry.ts";
import { jointObservationNames } from "../nodes/JointObservationNode.ts";
import { stateNames, taskSpec } from "../sim/tasks.ts";

/** A robot's interface to a policy. */
export interface RobotLayout {
  /** observation.state: names in order and the unit of each. */
  observation: { names: string[]; units: string[] };
  /** action: absolute joint targets, names in order, units and command limits. */
  action: { names: string[]; units: string[]; lower: number[]; upper: number[] };
}

/** The layout of the robot `cfg` drives (calibration.arm narrows a servo arm's limits, as at launch). */
export function robotLayout(cfg: LaunchConfig): RobotLayout {
  const joints = driverJoints(cfg.driver, { robot: cfg.robot, task: cfg.task, armCalibration: cfg.calibration.arm });
  const state = cfg.driver.kind === "sim" ? stateNames(taskSpec(cfg.robot, cfg.task)) : jointObservationNames(joints.map((j) => j.name));
  const unitOf = new Map(joints.map((j) => [`q.${j.name}`, j.unit]));
  return {
    observation: { names: state, units: state.map((n) => unitOf.get(n) ?? "m") },
    action: { names: joints.map((j) => j.name), units: joints.map((j) => j.unit), lower: joints.map((j) => j.lower), upper: joints.map((j) => j.upper) },
  };
}
