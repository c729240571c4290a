// Robot-side frame compression (rlft-exp/1 `encoding: "zlib"`): the bounded inflate both decoders rely on, and each
// frame compressed once however many transitions carry it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { deflateSync, inflateSync } from "node:zlib";
import { FrameCompressor, FrameInflateError, FRAME_ZLIB_LEVEL, deflateFrame, inflateFrame } from "./frameCodec.ts";

const frame = (n = 84 * 84 * 3, seed = 1) => Uint8Array.from({ length: n }, (_, i) => ((i * 7 + seed) % 251) & 0xff);

test("a frame deflated on the thread pool inflates to its bytes", async () => {
  const rgb = frame();
  const z = await deflateFrame(rgb);
  assert.ok(z.byteLength < rgb.byteLength);
  assert.deepEqual(z, deflateSync(rgb, { level: FRAME_ZLIB_LEVEL }));
  assert.deepEqual(new Uint8Array(inflateFrame(z, rgb.byteLength, "camera front")), rgb);
});

test("hostile streams are refused, naming the frame, and never inflated past the declared size", () => {
  const rgb = frame(12 * 10 * 3);
  const z = deflateSync(rgb, { level: 1 });
  const cases: [Uint8Array, RegExp][] = [
    [z.subarray(0, z.byteLength - 4), /camera front: frame 0 is a zlib stream cut short/],
    [deflateSync(new Uint8Array(360 + 1)), /inflates to more than its declared 360 bytes/],
    [deflateSync(new Uint8Array(64 << 20), { level: 9 }), /inflates to more than its declared 360 bytes/], // 64 MiB of zeros in 64 kB
    [deflateSync(rgb.subarray(0, 240)), /inflates to 240 bytes; its declared shape needs 360/],
    [Buffer.concat([z, Buffer.from("tail")]), /has 4 bytes after its zlib stream/],
    [Buffer.from("not zlib at all"), /is not a valid zlib stream/],
    [new Uint8Array(0), /cut short/],
  ];
  for (const [blob, want] of cases) {
    assert.throws(() => inflateFrame(blob, 360, "camera front: frame 0"), (e: Error) => e instanceof FrameInflateError && want.test(e.message) && e.message.includes("bridge/frameCodec.ts"), String(want));
  }
  assert.deepEqual(new Uint8Array(inflateSync(z)), rgb);
});

test("a frame carried by two transitions (next frame, then frame) is deflated once", async () => {
  const c = new FrameCompressor(4);
  const frames = Array.from({ length: 8 }, (_, i) => frame(300, i));
  const streams: Promise<Buffer>[] = [];
  for (let t = 0; t < 7; t++) streams.push(c.compress(frames[t]), c.compress(frames[t + 1]));
  assert.equal(c.deflated, 8);
  assert.equal(c.reused, 6);
  const done = await Promise.all(streams);
  done.forEach((z, k) => assert.deepEqual(new Uint8Array(inflateSync(z)), frames[Math.floor(k / 2) + (k % 2)]));
  // Only recent frames are remembered: one seen long ago is deflated again, as a new frame would be.
  for (let i = 0; i < 6; i++) c.compress(frame(300, 100 + i));
  await c.compress(frames[0]);
  assert.equal(c.deflated, 8 + 6 + 1);
});
