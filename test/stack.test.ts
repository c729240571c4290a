/**
 * The whole stack on the embedded runtime with real MuJoCo physics: recording read back by an
 * independent MCAP reader, safety behaviour on bad actions, and refusal of a mismatched policy.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McapIndexedReader } from "@mcap/core";
import { MessageReader } from "@foxglove/rosmsg2-serialization";
import { parse } from "@foxglove/rosmsg";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { SafetySupervisorNode } from "../nodes/SafetySupervisorNode.ts";
import { TOPICS } from "../contracts/topics.ts";
import { jointState, toTime } from "../contracts/msgs.ts";
import { makeLearnerFixture } from "../policies/testing/learnerFixture.ts";
import { PolicyActor } from "../policies/actors/PolicyActor.ts";
import { ArmSim } from "../sim/ArmSim.ts";

const tmp = mkdtempSync(join(tmpdir(), "rlft-stack-"));

test("collected episodes are MCAP files an independent reader decodes (ros2msg schemas, CDR JointState)", async () => {
  const cfg = parseLaunch("task: push_cube\nactor: {kind: expert, expert_quality: 1}\ncamera: {rate_hz: 5}\n", "test.yaml");
  const out = join(tmp, "demos");
  const { summary } = await runEpisodes(cfg, { count: 2, seed: 3, label: "test", recordTo: out });
  assert.equal(summary.episodes, 2);
  const files = readdirSync(out).filter((f) => f.endsWith(".mcap")).sort();
  assert.deepEqual(files, ["episode_000000.mcap", "episode_000001.mcap"]);

  const bytes = new Uint8Array(readFileSync(join(out, files[0])));
  const reader = await McapIndexedReader.Initialize({
    readable: { size: async () => BigInt(bytes.byteLength), read: async (o: bigint, n: bigint) => bytes.subarray(Number(o), Number(o + n)) },
  });
  assert.equal(reader.header.profile, "ros2");
  const byTopic = new Map([...reader.channelsById.values()].map((c) => [c.topic, c]));
  for (const t of ["/joint_states", "/joint_command", "/observation", "/camera/front/image", "/episode/event"]) assert.ok(byTopic.has(t), `missing ${t}`);
  const js = byTopic.get("/joint_states")!;
  const schema = reader.schemasById.get(js.schemaId)!;
  assert.equal(schema.name, "sensor_msgs/msg/JointState");
  assert.equal(schema.encoding, "ros2msg");
  assert.equal(js.messageEncoding, "cdr");
  const dec = new MessageReader(parse(new TextDecoder().decode(schema.data), { ros2: true }));
  const lower = [-2.0, -1.6, -2.8, -2.2, 0];
  const upper = [2.0, 1.6, 2.8, 2.2, 0.08];
  let n = 0;
  for await (const m of reader.readMessages({ topics: ["/joint_states"] })) {
    const msg = dec.readMessage<{ name: string[]; position: Float64Array | number[] }>(m.data);
    assert.deepEqual(msg.name, ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "gripper"]);
    const pos = Array.from(msg.position);
    pos.forEach((q, i) => assert.ok(q >= lower[i] - 0.05 && q <= upper[i] + 0.01, `joint ${i} at ${q} outside its limits`));
    n++;
  }
  assert.ok(n > 10, `only ${n} JointState messages`);
  const meta = [];
  for await (const m of reader.readMetadata({ name: "rlft.episode" })) meta.push(m);
  assert.equal(meta[0].metadata.get("task"), "push_cube");
  assert.equal(meta[0].metadata.get("seed"), "3");
  assert.ok(meta[0].metadata.get("git_revision"));
});

test("the safety supervisor holds on a NaN action and says why; clamps to limits; watchdog holds", async () => {
  const rt = await EmbeddedRuntime.create({ clock: "sim", logLevel: "error" });
  const names = ["a", "b"];
  const sup = new SafetySupervisorNode(rt.createNode("safety_supervisor"), { limits: { names, lower: [-1, -1], upper: [1, 1], maxStep: [0.5, 0.5] }, watchdogSec: 0.5 });
  await sup.configure();
  await sup.activate();
  const n = rt.createNode("probe");
  const cmds: number[][] = [];
  const events: { kind: string; detail: string }[] = [];
  n.createSubscription<{ position: number[] }>(TOPICS.jointCommand.type, TOPICS.jointCommand.topic, (m) => cmds.push(Array.from(m.position)));
  n.createSubscription<{ kind: string; detail: string }>(TOPICS.safetyEvent.type, TOPICS.safetyEvent.topic, (m) => events.push(m));
  const pubState = n.createPublisher(TOPICS.jointStates.type, TOPICS.jointStates.topic);
  const pubCmd = n.createPublisher(TOPICS.proposedCommand.type, TOPICS.proposedCommand.topic);
  pubState.publish(jointState(toTime(0), names, [0.2, -0.3]));
  pubCmd.publish(jointState(toTime(0), names, [NaN, 0]));
  assert.deepEqual(cmds.at(-1), [0.2, -0.3]);
  assert.equal(events.at(-1)?.kind, "nan_guard");
  assert.match(events.at(-1)!.detail, /non-finite target for a/);
  pubCmd.publish(jointState(toTime(0), names, [5, -0.3]));
  assert.deepEqual(cmds.at(-1), [0.7, -0.3]); // step-limited towards the clamped target
  const before = cmds.length;
  await rt.simClock.advance(1.0); // no commands for 1 s
  assert.equal(cmds.length, before + 1);
  assert.equal(events.at(-1)?.kind, "watchdog");
  assert.deepEqual(cmds.at(-1), [0.2, -0.3]);
  await sup.shutdown();
  await rt.shutdown();
});

test("a policy whose observation or action space does not match the robot is refused at load", async (t) => {
  const fx = await makeLearnerFixture({ obsDim: 12, actionDim: 5 });
  t.after(() => fx.cleanup());
  const sim = await ArmSim.create({ task: "reach" });
  const names = sim.observation().names;
  sim.close();
  await assert.rejects(
    PolicyActor.create(fx.dir, { jointNames: ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "gripper"], observationNames: names }),
    /observation/,
  );
  await assert.rejects(PolicyActor.create(fx.dir, { jointNames: ["a", "b"], observationNames: names }), /policy expects/);
});

test("a gated stack holds the arm while it waits for the operator's start: no policy motion leaves the safety supervisor", async () => {
  const { Stack } = await import("../launch/Stack.ts");
  const cfg = parseLaunch("clock: wall\ncontrol_hz: 20\ntask: push_cube\nactor: {kind: expert, expert_quality: 1}\nrecorder: {enabled: false}\n", "gated.yaml");
  const stack = await Stack.create(cfg, { quiet: true, operatorGate: true });
  const commands: number[][] = [];
  const probe = stack.runtime.createNode("probe");
  probe.createSubscription<{ position: Float64Array | number[] }>(TOPICS.jointCommand.type, TOPICS.jointCommand.topic, (m) => commands.push(Array.from(m.position)));
  const running = stack.runEpisodes({ count: 1, seed: 1 });
  try {
    await new Promise((r) => setTimeout(r, 1500)); // ~30 wall-clock ticks in which the expert proposes motions
    const start = stack.world!.sim.jointState().position;
    await new Promise((r) => setTimeout(r, 500));
    const after = stack.world!.sim.jointState().position;
    assert.ok(stack.safety.frozen, "the supervisor holds while no episode runs");
    assert.ok(commands.length <= 1, `at most the one hold command left the supervisor, got ${commands.length}`);
    for (let i = 0; i < start.length; i++) assert.ok(Math.abs(after[i] - start[i]) < 2e-3, `joint ${i} moved while waiting`);
    assert.equal(stack.releaseGate(), null);
    const [r] = await running;
    assert.ok(r, "the episode ran after the start");
    assert.ok(commands.length > 10, "commands flow once the episode started");
  } finally {
    stack.cancelWait();
    await running.catch(() => undefined);
    await stack.shutdown();
  }
});
