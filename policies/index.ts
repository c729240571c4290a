/** Public surface of policies/: verified policy packages, ONNX inference off the event loop, action chunking. */
export { PolicyPackage, PolicyJsonSchema, assertCompatible, type PolicyJson, type RobotInterface } from "./PolicyPackage.ts";
export { PolicyPackageError, type PolicyPackageErrorCode } from "./PolicyPackageError.ts";
export { DiffusionPolicy, PolicyInputError, type ActionChunk, type DiffusionPolicyOptions } from "./DiffusionPolicy.ts";
export { InferenceClient, InferenceError, type InferenceClientOptions, type RunResult, type Feeds, type WireTensor } from "./InferenceClient.ts";
export { ActionChunker, type ActionChunkerOptions, type ChunkSource } from "./ActionChunker.ts";
export { ddimSchedule, ddimStep, clipUnit, type DdimStep } from "./ddim.ts";
export { gaussian, gaussianArray, mulberry32 } from "./gaussian.ts";
