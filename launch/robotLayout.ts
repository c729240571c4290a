/**
 * What a policy sees of the robot a launch file describes, worked out from the file alone (no hardware, no
 * simulator): `observation.state` (LeRobot's name; the joint positions, in order, with their units) and `action`
 * (absolute joint targets: names, units, limits). Two launch files whose layouts are equal can run the same policy
 * package; launch/sim_so101.yaml and launch/so100.yaml are held to that by launch/robotLayout.test.ts.
 */
import type { LaunchConfig } from "./LaunchConfig.ts";
import { servoJointFromCalibration } from "../hardware/createArmDriver.ts";
import { loadArmCalibration } from "../calibration/ArmCalibration.ts";
import { jointObservationNames } from "../nodes/JointObservationNode.ts";
import { SIM_ROBOT_MODELS } from "../sim/ArmSim.ts";
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
  const d = cfg.driver;
  let joints: { name: string; unit: string; lower: number; upper: number }[];
  let state: string[];
  switch (d.kind) {
    case "sim": {
      const spec = taskSpec(cfg.robot, cfg.task);
      const m = SIM_ROBOT_MODELS[spec.robot];
      joints = m.jointNames.map((name, i) => ({ name, unit: m.units[i], lower: m.jointLower[i], upper: m.jointUpper[i] }));
      state = stateNames(spec);
      break;
    }
    case "feetech":
    case "dynamixel": {
      const cal = cfg.calibration.arm ? loadArmCalibration(cfg.calibration.arm) : undefined;
      joints = d.joints.map((j) => {
        const { lower, upper } = servoJointFromCalibration(j, cfg.calibration.arm, cal);
        return { name: j.name, unit: "rad", lower, upper };
      });
      state = jointObservationNames(joints.map((j) => j.name));
      break;
    }
    case "ur_rtde":
    case "ros2_control":
      joints = d.joints.map((name, i) => ({ name, unit: "rad", lower: d.lower[i], upper: d.upper[i] }));
      state = jointObservationNames(d.joints);
      break;
  }
  const unitOf = new Map(joints.map((j) => [`q.${j.name}`, j.unit]));
  return {
    observation: { names: state, units: state.map((n) => unitOf.get(n) ?? "m") },
    action: { names: joints.map((j) => j.name), units: joints.map((j) => j.unit), lower: joints.map((j) => j.lower), upper: joints.map((j) => j.upper) },
  };
}
