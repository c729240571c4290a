// A policy that sees cameras (issue "A real arm in simulation, seen through cameras"): the package the learner exports
// from camera frames + state runs in onnxruntime-node like PyTorch (graph and TS-sampler modes, uint8 image inputs);
// frames of the wrong size or a missing camera are refused with a sentence naming the camera; the actor holds the
// arm on a missing or stale frame and ActorNode reports it as a safety event; a robot without the camera is refused.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { DiffusionPolicy, PolicyInputError, type CameraFrames } from "./DiffusionPolicy.ts";
import { PolicyActor } from "./actors/PolicyActor.ts";
import { makeLearnerFixture, type LearnerFixture } from "./testing/learnerFixture.ts";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { ActorNode } from "../nodes/ActorNode.ts";
import { TOPICS } from "../contracts/topics.ts";
import { toTime } from "../contracts/msgs.ts";
import type { SafetyEvent } from "../contracts/msgs.generated.ts";

interface PixelVectors {
  obs: number[][];
  noise: number[][][];
  action: number[][][];
  images: Record<string, number[][][][]>;
}

const SIZE = 32;
let fixture: LearnerFixture;
let vectors: PixelVectors;
const quiet = { warn: () => {}, info: () => {} };

before(async () => {
  fixture = await makeLearnerFixture({ cameras: ["front", "wrist"], imageSize: SIZE, steps: 20 });
  vectors = JSON.parse(await readFile(join(fixture.dir, "test_vectors.json"), "utf8")) as PixelVectors;
});
after(async () => {
  await fixture?.cleanup();
});

/** Test vector b's frames as the robot would deliver them. */
function frames(b: number): CameraFrames {
  return Object.fromEntries(Object.entries(vectors.images).map(([cam, imgs]) => [cam, { width: SIZE, height: SIZE, data: Uint8Array.from(imgs[b].flat(2)) }]));
}

for (const mode of ["graph", "ts"] as const) {
  test(`pixel policy, ${mode} mode: onnxruntime-node matches PyTorch within 1e-4 on the same frames`, async () => {
    const policy = await DiffusionPolicy.create(fixture.dir, { mode, threads: 1, logger: quiet });
    try {
      assert.deepEqual(policy.package.images.map((i) => i.camera), ["front", "wrist"]);
      for (let b = 0; b < vectors.obs.length; b++) {
        const out = await policy.denoise(Float32Array.from(vectors.obs[b]), Float32Array.from(vectors.noise[b].flat()), policy.indicator, policy.imageFeeds(frames(b)));
        let d = 0;
        vectors.action[b].flat().forEach((v, i) => (d = Math.max(d, Math.abs(v - out[i]))));
        assert.ok(d <= 1e-4, `vector ${b}: max |Δ| = ${d}`);
      }
    } finally {
      await policy.close();
    }
  });
}

test("pixel policy: a missing camera or a frame of another size is refused with the camera's name and the fix", async () => {
  const policy = await DiffusionPolicy.create(fixture.dir, { logger: quiet });
  try {
    const hist = [[0, 0], [0, 0]];
    const { wrist } = frames(0);
    await assert.rejects(policy.sampleChunk(hist, undefined, { wrist }), (e: unknown) => e instanceof PolicyInputError && e.code === "bad_image" && /no frame from camera "front"/.test(e.message));
    const small = { width: 16, height: 16, data: new Uint8Array(16 * 16 * 3) };
    await assert.rejects(policy.sampleChunk(hist, undefined, { front: small, wrist }), /camera "front" sends 16×16 frames but policy .* was trained on 32×32 — set the camera's width\/height to 32×32/);
    const short = { width: SIZE, height: SIZE, data: new Uint8Array(10) };
    await assert.rejects(policy.sampleChunk(hist, undefined, { front: short, wrist }), /camera "front": a 32×32 rgb8 frame has 3072 bytes, found 10/);
    const ok = await policy.sampleChunk(hist, undefined, frames(0));
    assert.equal(ok.actions.length, policy.package.json.action.horizon);
  } finally {
    await policy.close();
  }
});

test("a robot without the policy's camera is refused at load", async () => {
  await assert.rejects(
    PolicyActor.create(fixture.dir, { jointNames: ["j0", "j1"], observationNames: ["q.j0", "q.j1"], cameras: ["front"], logger: quiet }),
    /policy sees camera "wrist" \(32×32 rgb8\) but the robot has only front — add a "wrist" camera/,
  );
});

test("the actor holds the arm on a missing or stale frame, acts on fresh ones, and ActorNode reports the hold as a safety event", async () => {
  const actor = await PolicyActor.create(fixture.dir, { jointNames: ["j0", "j1"], observationNames: ["q.j0", "q.j1"], cameras: ["front", "wrist"], maxImageAgeSec: 0.25, logger: quiet });
  const rt = await EmbeddedRuntime.create({ clock: "sim", logLevel: "error" });
  const node = new ActorNode(rt.createNode("policy"), actor, { controlHz: 10 });
  await node.configure();
  await node.activate();
  const probe = rt.createNode("probe");
  const events: SafetyEvent[] = [];
  const cmds: number[][] = [];
  probe.createSubscription<SafetyEvent>(TOPICS.safetyEvent.type, TOPICS.safetyEvent.topic, (m) => events.push(m));
  probe.createSubscription<{ position: number[] }>(TOPICS.proposedCommand.type, TOPICS.proposedCommand.topic, (m) => cmds.push(Array.from(m.position)));
  const obsPub = probe.createPublisher(TOPICS.observation.type, TOPICS.observation.topic);
  const cams = Object.fromEntries(["front", "wrist"].map((c) => [c, probe.createPublisher(TOPICS.image.type, `/camera/${c}/image`)]));
  const sendFrames = (t: number) => {
    for (const [cam, f] of Object.entries(frames(0))) cams[cam].publish({ header: { stamp: toTime(t), frame_id: cam }, height: f.height, width: f.width, encoding: "rgb8", is_bigendian: 0, step: f.width * 3, data: f.data });
  };
  const tick = async (t: number, q: number[]) => {
    obsPub.publish({ header: { stamp: toTime(t), frame_id: "" }, names: ["q.j0", "q.j1"], values: q });
    await node.tick();
  };
  try {
    await tick(0, [0.3, -0.2]); // no frames yet: hold where the arm is
    assert.deepEqual(cmds.at(-1), [0.3, -0.2]);
    assert.match(actor.holdReason() ?? "", /no frame from camera front yet/);
    assert.equal(events.length, 1);
    assert.equal(events[0].kind, "sensor_stale");
    assert.match(events[0].detail, /no frame from camera front yet/);
    sendFrames(0.1);
    await tick(0.1, [0.3, -0.2]); // fresh frames: the policy runs
    assert.equal(actor.holdReason(), null);
    assert.equal(actor.chunkMs.length, 1);
    for (let k = 1; k < actor.policy.package.json.action.execute_steps; k++) await tick(0.1 + k * 0.1, [0.3, -0.2]);
    await tick(2.0, [0.1, 0.1]); // next re-plan with frames 1.9 s old: hold again, one more safety event
    assert.deepEqual(cmds.at(-1), [0.1, 0.1]);
    assert.match(actor.holdReason() ?? "", /camera front's latest frame is 1\.90 s old \(limit 0\.25 s\)/);
    assert.equal(events.length, 2);
    assert.ok(actor.holds >= 2);
  } finally {
    await node.shutdown();
    await rt.shutdown();
    await actor.close();
  }
});

test("closing a policy while chunks are in flight lets them finish first (the process never aborts with Napi::Error)", async () => {
  // Terminating the inference worker while onnxruntime computes aborted the whole robot process at the end of a
  // wall-clock bench run; close() now drains what was sent, releases the sessions, and only then stops the worker.
  const policy = await DiffusionPolicy.create(fixture.dir, { logger: quiet });
  const hist = [[0, 0], [0, 0]];
  const chunks = Array.from({ length: 6 }, () => policy.sampleChunk(hist, undefined, frames(0)));
  await chunks[0]; // the worker is busy with the next ones now
  await policy.close();
  for (const c of await Promise.allSettled(chunks)) {
    if (c.status === "fulfilled") assert.equal(c.value.actions.length, policy.package.json.action.horizon);
    else assert.match((c.reason as Error).message, /InferenceClient (is )?closed/, "a chunk may only be cut short between its model runs, cleanly");
  }
  await assert.rejects(policy.sampleChunk(hist, undefined, frames(0)), /InferenceClient is closed/);
});
