import { test } from "node:test";
import assert from "node:assert/strict";
import { imageFeeds } from "./imageFeeds.ts";
import type { ImageInput } from "./PolicyPackage.ts";

const front: ImageInput = {
  camera: "front", key: "observation.images.front", input: "image.front", height: 8, width: 8,
  encoding: "rgb8", dtype: "uint8", layout: "HWC", history: 1, preprocessing: "x / 255 in the graph",
};

test("image feeds are copies: transferring them to the inference worker leaves the camera's frame whole for the recorder", () => {
  const frame = { width: 8, height: 8, data: new Uint8Array(8 * 8 * 3).fill(7) };
  const feeds = imageFeeds([front], { front: frame }, "the test policy");
  const fed = feeds["image.front"].data as Uint8Array;
  assert.notEqual(fed.buffer, frame.data.buffer);
  structuredClone(fed, { transfer: [fed.buffer as ArrayBuffer] }); // what InferenceClient.run does with a whole-buffer feed
  assert.equal(fed.byteLength, 0); // the feed detached ...
  assert.equal(frame.data.byteLength, 8 * 8 * 3); // ... the frame did not (the recorder encoded a detached frame before)
  assert.equal(frame.data[0], 7);
});
