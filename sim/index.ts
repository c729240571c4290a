/** Public surface of the sim package: the arm simulation, its cameras, tasks, kinematics and the scripted expert. */
export { ArmSim, type ArmSimOptions } from "./ArmSim.ts";
export { SimCameras, type SimCamerasOptions, type SimFrame, type RendererKind } from "./render/SimCameras.ts";
export { SimCameraSources, type MujocoWorld } from "./render/SimCameraSources.ts";
export { simCameraFromFiles, simCameraFromCalibration } from "./render/cameraCalibration.ts";
export type { SimCameraSpec } from "./render/cameraPose.ts";
export { ScriptedExpert, type ScriptedExpertOptions } from "./ScriptedExpert.ts";
export { ScriptedOperator, type ScriptedOperatorOptions, type OperatorDecision } from "./ScriptedOperator.ts";
export { TASKS, type TaskName, type TaskSpec } from "./tasks.ts";
export { forwardKinematics, inverseKinematics, type IkSolution } from "./kinematics.ts";
export { ARM_SPEC } from "./armSpec.ts";
export { sceneXml, type SceneOptions } from "./scene.ts";
export { sampleEpisode, type EpisodeInit } from "./sampleEpisode.ts";
export { createRng, type Rng } from "./rng.ts";
// The SO-101 (docs/so101.md) and what is shared by both simulated robots.
export { SIM_ROBOT_MODELS } from "./ArmSim.ts";
export { SO101_TASKS, ROBOT_TASKS, SIM_ROBOTS, taskSpec, stateNames, type SimRobotName, type So101TaskName } from "./tasks.ts";
export { createScriptedExpert, type TaskExpert, type TaskExpertOptions } from "./createExpert.ts";
export { So101Expert, type So101ExpertOptions } from "./so101/So101Expert.ts";
export { So101Kinematics, topDownRotation, type EePose, type IkResult } from "./so101/so101Kinematics.ts";
export { SO101_SPEC, toModelAngles, fromModelAngles } from "./so101/so101Spec.ts";
