/** Public surface of the sim package: the arm simulation, its camera, tasks, kinematics and the scripted expert. */
export { ArmSim, type ArmSimOptions } from "./ArmSim.ts";
export { RayCamera, type RayCameraOptions, type RayImage } from "./RayCamera.ts";
export { ScriptedExpert, type ScriptedExpertOptions } from "./ScriptedExpert.ts";
export { ScriptedOperator, type ScriptedOperatorOptions, type OperatorDecision } from "./ScriptedOperator.ts";
export { TASKS, type TaskName, type TaskSpec } from "./tasks.ts";
export { forwardKinematics, inverseKinematics, type IkSolution } from "./kinematics.ts";
export { ARM_SPEC } from "./armSpec.ts";
export { sceneXml, type SceneOptions } from "./scene.ts";
export { sampleEpisode, type EpisodeInit } from "./sampleEpisode.ts";
export { createRng, type Rng } from "./rng.ts";
