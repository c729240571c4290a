/**
 * The SO-101 through the whole stack (ArmDriver node → safety → recorder) on the embedded runtime:
 * `rlft collect --launch launch/sim_so101.yaml` recordings read back by an independent MCAP reader, and a policy
 * package with the scripted operator stepping in.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McapIndexedReader } from "@mcap/core";
import { MessageReader } from "@foxglove/rosmsg2-serialization";
import { parse } from "@foxglove/rosmsg";
import { loadLaunch } from "../launch/LaunchConfig.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { robotPolicyFixture } from "./robotFixture.ts";
import { SO101_TASKS } from "../sim/tasks.ts";
import { replayInSim } from "../data/SimReplay.ts";

const tmp = mkdtempSync(join(tmpdir(), "rlft-so101-stack-"));
const JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];

async function openMcap(file: string) {
  const bytes = new Uint8Array(readFileSync(file));
  return McapIndexedReader.Initialize({ readable: { size: async () => BigInt(bytes.byteLength), read: async (o: bigint, n: bigint) => bytes.subarray(Number(o), Number(o + n)) } });
}

test("rlft collect --launch launch/sim_so101.yaml --task pick_place records SO-101 demonstrations end to end", async () => {
  const cfg = loadLaunch("launch/sim_so101.yaml");
  cfg.task = "pick_place";
  cfg.actor = { ...cfg.actor, kind: "expert", expert_quality: 1 };
  const out = join(tmp, "pick");
  const { summary } = await runEpisodes(cfg, { count: 2, seed: 0, label: "test", recordTo: out, metadata: { source: "scripted_expert" } });
  assert.equal(summary.episodes, 2);
  assert.equal(summary.successes, 2);
  const files = readdirSync(out).filter((f) => f.endsWith(".mcap")).sort();
  assert.equal(files.length, 2);
  const reader = await openMcap(join(out, files[0]));
  let meta = new Map<string, string>();
  for await (const m of reader.readMetadata({ name: "rlft.episode" })) meta = m.metadata;
  assert.equal(meta.get("robot"), "so101");
  assert.equal(meta.get("task"), "pick_place");
  assert.equal(meta.get("physics_dt"), "0.005");
  const byTopic = new Map([...reader.channelsById.values()].map((c) => [c.topic, c]));
  const decoder = (topic: string) => new MessageReader(parse(new TextDecoder().decode(reader.schemasById.get(byTopic.get(topic)!.schemaId)!.data), { ros2: true }));
  const js = decoder("/joint_states");
  let states = 0;
  for await (const m of reader.readMessages({ topics: ["/joint_states"] })) {
    const msg = js.readMessage<{ name: string[]; position: ArrayLike<number> }>(m.data);
    assert.deepEqual(msg.name, JOINTS);
    states++;
  }
  assert.ok(states > 20);
  // rlft replay --sim: the recorded commands drive the SO-101 to the same joint states and the same success.
  const replay = await replayInSim(join(out, files[0]));
  assert.equal(replay.robot, "so101");
  assert.equal(replay.simSuccess, true);
  assert.ok(replay.maxDivergence < 1e-6, `divergence ${replay.maxDivergence}`);
  const obs = decoder("/observation");
  for await (const m of reader.readMessages({ topics: ["/observation"] })) {
    const msg = obs.readMessage<{ names: string[] }>(m.data);
    assert.deepEqual(msg.names, SO101_TASKS.pick_place.observationNames);
    break;
  }
});

test("a policy package on the simulated SO-101 runs through safety, and the scripted operator takes over when it errs", async () => {
  const fx = await robotPolicyFixture("push_cube", "so101");
  try {
    const cfg = loadLaunch("launch/sim_so101.yaml");
    cfg.actor = { ...cfg.actor, kind: "policy", package: fx.dir };
    cfg.operator = { ...cfg.operator, enabled: true, kind: "scripted", patience_sec: 1, correction_sec: 2 };
    cfg.episodes.max_steps = 60;
    const out = join(tmp, "policy");
    const { summary, results } = await runEpisodes(cfg, { count: 1, seed: 5, label: "test", recordTo: out });
    assert.equal(summary.episodes, 1);
    assert.equal(summary.actorErrors, 0);
    assert.ok(["success", "timeout"].includes(results[0].outcome), results[0].outcome);
    const reader = await openMcap(join(out, readdirSync(out).find((f) => f.endsWith(".mcap"))!));
    const byTopic = new Map([...reader.channelsById.values()].map((c) => [c.topic, c]));
    const iv = new MessageReader(parse(new TextDecoder().decode(reader.schemasById.get(byTopic.get("/arbiter/intervention")!.schemaId)!.data), { ros2: true }));
    let active = 0;
    for await (const m of reader.readMessages({ topics: ["/arbiter/intervention"] })) if (iv.readMessage<{ active: boolean }>(m.data).active) active++;
    assert.ok(active > 0, "the operator never took over from a random policy");
    assert.ok(active < 60, "the operator handed back");
  } finally {
    await fx.cleanup();
  }
});
