/** A ROS image topic as the stack's camera: encodings converted to rgb8, the source's stamp kept, bad frames named. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { CameraNode } from "./CameraNode.ts";
import { TOPICS } from "../contracts/topics.ts";
import { TopicCamera } from "../hardware/camera/TopicCamera.ts";

test("bgr8 / mono8 images from a driver's topic are republished as rgb8 with the driver's stamp", async () => {
  const rt = await EmbeddedRuntime.create({ clock: "sim", logLevel: "error" });
  const cam = new TopicCamera(rt.createNode("camera_in"), "/wrist/image_raw");
  const node = new CameraNode(rt.createNode("camera"), cam, { rateHz: 10 });
  await node.configure();
  await node.activate();
  const probe = rt.createNode("probe");
  const out: { header: { stamp: { sec: number } }; encoding: string; data: Uint8Array }[] = [];
  probe.createSubscription<(typeof out)[number]>(TOPICS.image.type, TOPICS.image.topic, (m) => out.push(m));
  const pub = probe.createPublisher("sensor_msgs/msg/Image", "/wrist/image_raw");
  await rt.simClock.advance(0.1);
  assert.equal(out.length, 0, "nothing before the first frame");
  // 2×1 bgr8 with 2 bytes of row padding: blue then red.
  pub.publish({ header: { stamp: { sec: 42, nanosec: 0 }, frame_id: "wrist" }, height: 1, width: 2, encoding: "bgr8", is_bigendian: 0, step: 8, data: Uint8Array.from([255, 0, 0, 0, 0, 255, 9, 9]) });
  await rt.simClock.advance(0.1);
  assert.equal(out.at(-1)!.encoding, "rgb8");
  assert.deepEqual([...out.at(-1)!.data], [0, 0, 255, 255, 0, 0]);
  assert.equal(out.at(-1)!.header.stamp.sec, 42);
  pub.publish({ header: { stamp: { sec: 43, nanosec: 0 }, frame_id: "wrist" }, height: 1, width: 2, encoding: "mono8", is_bigendian: 0, step: 2, data: Uint8Array.from([7, 200]) });
  await rt.simClock.advance(0.1);
  assert.deepEqual([...out.at(-1)!.data], [7, 7, 7, 200, 200, 200]);
  const events: { kind: string; detail: string }[] = [];
  probe.createSubscription<(typeof events)[number]>(TOPICS.safetyEvent.type, TOPICS.safetyEvent.topic, (m) => events.push(m));
  pub.publish({ header: { stamp: { sec: 44, nanosec: 0 }, frame_id: "wrist" }, height: 1, width: 1, encoding: "16UC1", is_bigendian: 0, step: 2, data: Uint8Array.from([1, 2]) });
  assert.equal(cam.stats.rejected, 1);
  assert.match(cam.stats.lastError, /^camera front: \/wrist\/image_raw sends 16UC1 frames, which rlft cannot use \(expected rgb8, bgr8 or mono8\) — set the camera driver's encoding, e.g. rgb8$/);
  // The camera node says so once, on /safety/events (recorded with the episode).
  await rt.simClock.advance(0.3);
  assert.deepEqual(events.map((e) => [e.kind, e.detail]), [["camera", cam.stats.lastError]]);
  await node.shutdown();
  cam.stop();
  await rt.shutdown();
});
