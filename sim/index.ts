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
