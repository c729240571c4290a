import { test } from "node:test";
import assert from "node:assert/strict";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header, jointState } from "../contracts/msgs.ts";
import { cameraTopics } from "./CameraNode.ts";
import { ExperienceNode } from "./ExperienceNode.ts";
import type { Transition } from "../contracts/Transition.ts";

const CAMS = ["front", "wrist"];

/** Frame bytes naming (tick, camera). */
const pixels = (tick: number, cam: number) => new Uint8Array(4 * 4 * 3).fill(16 * cam + tick);

/** An ExperienceNode on a sim-clock runtime, and a "world" node with a publisher for each topic it reads. */
async function rig(cameras: readonly string[]) {
  const rt = await EmbeddedRuntime.create({ clock: "sim", logLevel: "error" });
  const got: Transition[] = [];
  const node = new ExperienceNode(rt.createNode("experience_bridge"), { push: (t) => got.push(t) }, { normaliseAction: (a) => [...a], cameras });
  await node.configure();
  await node.activate();
  const world = rt.createNode("world");
  const pub = <T>(t: { topic: string; type: string }) => world.createPublisher<T>(t.type, t.topic);
  return {
    rt, got, world,
    obs: pub(TOPICS.observation),
    reward: pub(TOPICS.reward),
    event: pub(TOPICS.episodeEvent),
    action: pub(TOPICS.policyAction),
    command: pub(TOPICS.jointCommand),
    images: CAMS.map((c) => pub({ topic: cameraTopics(c).image, type: TOPICS.image.type })),
  };
}

/**
 * A world publishing each tick in the stack's order: observation, reward (terminal on `terminalTick`, as the sim
 * driver does before the cameras tick), both cameras' frames, then the policy's action and the joint command.
 */
async function run(terminalTick: number, cameras: readonly string[]): Promise<Transition[]> {
  const { rt, got, world, obs, reward, event, action, command, images } = await rig(cameras);
  let tick = 0;
  world.createTimer(0.1, () => {
    const stamp = world.clock.stamp();
    const h = header(stamp);
    if (tick === 0) {
      event.publish({ header: h, episode: 0, event: "reset", seed: 0n, task: "t", detail: "" });
      event.publish({ header: h, episode: 0, event: "start", seed: 0n, task: "t", detail: "" });
    }
    if (tick <= terminalTick) obs.publish({ header: h, names: ["x"], values: [tick] });
    if (tick === terminalTick) reward.publish({ header: h, reward: 1, terminal: true, source: "sim" });
    images.forEach((p, k) => p.publish({ header: h, height: 4, width: 4, encoding: "rgb8", is_bigendian: 0, step: 12, data: pixels(tick, k) }));
    if (tick < terminalTick) {
      action.publish({ header: h, policy_version: "v", base_action: [tick], residual_action: [0] });
      command.publish(jointState(stamp, ["j"], [tick]));
    }
    tick++;
  });
  await rt.simClock.advance(0.1 * (terminalTick + 3));
  await rt.shutdown();
  return got;
}

test("each transition carries the cameras' frames of obs and next_obs; a terminal one waits for its tick's frames", async () => {
  const got = await run(4, CAMS);
  assert.deepEqual(got.map((t) => t.obs[0]), [0, 1, 2, 3]);
  assert.equal(got.at(-1)!.terminated, true);
  got.forEach((t) => {
    CAMS.forEach((c, k) => {
      assert.deepEqual(t.images![c].rgb, pixels(t.obs[0], k), `obs ${t.obs[0]} ${c}`);
      assert.deepEqual(t.nextImages![c].rgb, pixels(t.nextObs[0], k), `next_obs ${t.nextObs[0]} ${c}: the frame of its own tick`);
    });
  });
});

test("without cameras a transition carries no frames", async () => {
  const got = await run(3, []);
  assert.equal(got.length, 3);
  assert.ok(got.every((t) => t.images === undefined && t.nextImages === undefined));
});

test("no frame from the future: a frame stamped after a tick never goes with it, even when it arrives first", async () => {
  // Cameras off the ticks: each frame is stamped 50 ms after a tick and published at that tick, before its
  // observation (a camera whose clock runs ahead, or a driver that reads it early). Frame bytes name the tick it
  // follows, so tick t may only carry the frame stamped t-1 + 50 ms; tick 0 has none before it.
  const { rt, got, world, obs, event, action, command, images } = await rig(CAMS);
  const TERMINAL = 5;
  let tick = 0;
  world.createTimer(0.1, () => {
    const stamp = world.clock.stamp();
    const h = header(stamp);
    if (tick === 0) event.publish({ header: h, episode: 0, event: "start", seed: 0n, task: "t", detail: "" });
    const ahead = { sec: stamp.sec + Math.floor((stamp.nanosec + 50_000_000) / 1e9), nanosec: (stamp.nanosec + 50_000_000) % 1_000_000_000 };
    images.forEach((p, k) => p.publish({ header: header(ahead), height: 4, width: 4, encoding: "rgb8", is_bigendian: 0, step: 12, data: pixels(tick, k) }));
    if (tick <= TERMINAL) obs.publish({ header: h, names: ["x"], values: [tick] });
    if (tick < TERMINAL) {
      action.publish({ header: h, policy_version: "v", base_action: [tick], residual_action: [0] });
      command.publish(jointState(stamp, ["j"], [tick]));
    }
    if (tick === TERMINAL) event.publish({ header: h, episode: 0, event: "success", seed: 0n, task: "t", detail: "" });
    tick++;
  });
  await rt.simClock.advance(0.1 * (TERMINAL + 3));
  await rt.shutdown();
  assert.deepEqual(got.map((t) => t.obs[0]), [0, 1, 2, 3, 4]);
  for (const t of got) {
    CAMS.forEach((c, k) => {
      const want = (tick: number) => (tick === 0 ? undefined : pixels(tick - 1, k));
      assert.deepEqual(t.images![c]?.rgb, want(t.obs[0]), `obs ${t.obs[0]} ${c}: the latest frame stamped at or before its tick`);
      assert.deepEqual(t.nextImages![c]?.rgb, want(t.nextObs[0]), `next_obs ${t.nextObs[0]} ${c}: the latest frame stamped at or before its tick`);
    });
  }
});
