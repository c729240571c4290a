/** Public surface of bridge/: the rlft-exp/1 wire format, the dataset upload client, the online experience uplink and policy sync. */
export { PROTOCOL, MAX_HEADER_BYTES, WireError, encodeMessage, decodeMessage, tensorFromRows, tensorToRows, type Header, type Message, type MessageType, type Tensor } from "./wire.ts";
export { DatasetClient, DatasetClientError, type DatasetClientOptions, type EpisodeUpload } from "./DatasetClient.ts";
export { ExperienceBridge, LinkError, type ExperienceBridgeOptions, type ExperienceStats } from "./ExperienceBridge.ts";
export { DiskSpool, type DiskSpoolOptions, type SpoolRecord } from "./DiskSpool.ts";
export { PolicySync, type PolicySyncOptions, type PolicySource, type ReceivedPackage, type RejectedPackage } from "./PolicySync.ts";
export type { Transition } from "../contracts/Transition.ts";
export * from "./messages.ts";
