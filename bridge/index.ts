/** Public surface of bridge/: the rlft-exp/1 wire format and the dataset upload client. */
export { PROTOCOL, MAX_HEADER_BYTES, WireError, encodeMessage, decodeMessage, tensorFromRows, tensorToRows, type Header, type Message, type MessageType, type Tensor } from "./wire.ts";
export { DatasetClient, DatasetClientError, type DatasetClientOptions, type EpisodeUpload } from "./DatasetClient.ts";
