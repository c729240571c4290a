/** Public surface of policies/: verified policy packages, ONNX inference off the event loop, action chunking. */
export { PolicyPackage, PolicyJsonSchema, DiffusionPolicyJsonSchema, ResidualPolicyJsonSchema, assertCompatible, readPolicyJson, verifyHashes, type PolicyJson, type DiffusionPolicyJson, type ResidualPolicyJson, type RobotInterface } from "./PolicyPackage.ts";
export { PolicyPackageError, type PolicyPackageErrorCode } from "./PolicyPackageError.ts";
export { DiffusionPolicy, PolicyInputError, type ActionChunk, type DiffusionPolicyOptions } from "./DiffusionPolicy.ts";
export { InferenceClient, InferenceError, type InferenceClientOptions, type RunResult, type Feeds, type WireTensor } from "./InferenceClient.ts";
export { ActionChunker, type ActionChunkerOptions, type ChunkSource } from "./ActionChunker.ts";
export { ddimSchedule, ddimStep, clipUnit, type DdimStep } from "./ddim.ts";
export { gaussian, gaussianArray, mulberry32 } from "./gaussian.ts";
export { ResidualPolicy, type ResidualPolicyOptions, type ResidualStep } from "./ResidualPolicy.ts";
export { PolicySlot, type PolicySlotOptions, type SwappablePolicy, type OfferResult } from "./PolicySlot.ts";
export { AdvantageConditioningSchema, INDICATORS, cfgCombine, resolveIndicator, type AdvantageConditioning, type Indicator, type IndicatorSetting } from "./AdvantageConditioning.ts";
export { episodeRewards, normalisedReturns, nStepAdvantages } from "./advantage.ts";
