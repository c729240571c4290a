/** The camera node refuses bad frames and reports a silent camera, in one sentence naming the camera, and recovers. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { CameraNode } from "./CameraNode.ts";
import type { CameraFrame } from "../contracts/camera.ts";
import { TOPICS } from "../contracts/topics.ts";

test("wrong-size frames and a camera that stops sending are reported once on /safety/events and never published; good frames resume", async () => {
  const rt = await EmbeddedRuntime.create({ clock: "sim", logLevel: "error" });
  let next: CameraFrame | null = null;
  const node = new CameraNode(rt.createNode("camera_wrist"), { capture: () => next }, { name: "wrist", rateHz: 10, width: 4, height: 2 });
  await node.configure();
  await node.activate();
  const probe = rt.createNode("probe");
  const images: { width: number }[] = [];
  const events: { kind: string; detail: string }[] = [];
  probe.createSubscription<{ width: number }>(TOPICS.image.type, "/camera/wrist/image", (m) => images.push(m));
  probe.createSubscription<{ kind: string; detail: string }>(TOPICS.safetyEvent.type, TOPICS.safetyEvent.topic, (m) => events.push(m));
  const frame = (w: number, h: number): CameraFrame => ({ width: w, height: h, rgb: new Uint8Array(w * h * 3) });

  next = frame(4, 2);
  await rt.simClock.advance(0.25);
  assert.equal(images.length, 2);
  next = frame(8, 6);
  await rt.simClock.advance(0.35);
  assert.equal(images.length, 2, "a wrong-size frame is not published");
  assert.deepEqual(events.map((e) => [e.kind, e.detail]), [["camera", "camera wrist sent a 8×6 frame but the launch file says 4×2 — set camera wrist's width/height to 8×6 or make the camera send 4×2"]]);
  next = { ...frame(4, 2), rgb: new Uint8Array(5) };
  await rt.simClock.advance(0.1);
  assert.match(events.at(-1)!.detail, /^camera wrist sent 5 bytes for a 4×2 rgb8 frame \(expected 24\)/);
  next = frame(4, 2);
  await rt.simClock.advance(0.2);
  assert.equal(images.length, 4, "good frames flow again");

  // Silent camera: reported after max(1 s, 5 periods), once.
  next = null;
  await rt.simClock.advance(2);
  const silent = events.filter((e) => /has sent no frame/.test(e.detail));
  assert.equal(silent.length, 1);
  assert.match(silent[0].detail, /^camera wrist has sent no frame for 1\.0 s — check that it is connected and its driver is running/);
  assert.ok(node.stats.refused >= 4, `${node.stats.refused} frames refused`);
  await node.shutdown();
  await rt.shutdown();
});
