import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McapIndexedReader, McapStreamReader } from "@mcap/core";
import { MessageReader } from "@foxglove/rosmsg2-serialization";
import { parse } from "@foxglove/rosmsg";
import { McapEpisodeWriter } from "./McapEpisodeWriter.ts";
import { EpisodeReader } from "./EpisodeReader.ts";

const dir = mkdtempSync(join(tmpdir(), "rlft-rec-"));
const episode = { task: "push_cube", seed: 7, robot: "rlft_arm5", policy_version: "bc-1", git_revision: "abc123", operator: "sim" };

/** 3 s of 10 Hz JointState + Reward, 1 s chunks. */
async function record(path: string, close = true): Promise<void> {
  const w = await McapEpisodeWriter.create(path, { episode, chunkIntervalSec: 1 });
  await w.addChannel("/joint_states", "sensor_msgs/JointState");
  for (let i = 0; i < 30; i++) {
    const t = BigInt(i) * 100_000_000n;
    void w.write("/joint_states", { header: { stamp: { sec: Math.floor(i / 10), nanosec: (i % 10) * 1e8 }, frame_id: "" }, name: ["a", "b"], position: [i, -i] }, t);
    void w.write("/reward", { reward: i / 10, terminal: i === 29, source: "sim" }, t, { type: "rlft_interfaces/Reward" });
  }
  if (close) await w.close({ success: true, length: 30, reason: "success" });
}

function fileReadable(bytes: Uint8Array) {
  return { size: async () => BigInt(bytes.byteLength), read: async (o: bigint, n: bigint) => bytes.subarray(Number(o), Number(o + n)) };
}

test("an episode MCAP is readable by an independent reader (@mcap/core + rosmsg2-serialization)", async () => {
  const path = join(dir, "ok.mcap");
  await record(path);
  const bytes = new Uint8Array(readFileSync(path));
  const r = await McapIndexedReader.Initialize({ readable: fileReadable(bytes) });
  assert.equal(r.header.profile, "ros2");
  assert.ok((r.statistics?.chunkCount ?? 0) >= 3, "time-based chunking closes a chunk per second of data");
  const js = [...r.channelsById.values()].find((c) => c.topic === "/joint_states")!;
  const schema = r.schemasById.get(js.schemaId)!;
  assert.equal(schema.name, "sensor_msgs/msg/JointState");
  assert.equal(schema.encoding, "ros2msg");
  assert.equal(js.messageEncoding, "cdr");
  const reader = new MessageReader(parse(new TextDecoder().decode(schema.data), { ros2: true }));
  const positions: number[][] = [];
  for await (const m of r.readMessages({ topics: ["/joint_states"] })) {
    const msg = reader.readMessage<{ name: string[]; position: Float64Array }>(m.data);
    assert.deepEqual(msg.name, ["a", "b"]);
    positions.push(Array.from(msg.position));
  }
  assert.equal(positions.length, 30);
  assert.deepEqual(positions[12], [12, -12]);
  const meta = new Map<string, Map<string, string>>();
  for await (const m of r.readMetadata()) meta.set(m.name, m.metadata);
  assert.equal(meta.get("rlft.episode")!.get("seed"), "7");
  assert.equal(meta.get("rlft.episode")!.get("operator"), "sim");
  assert.equal(meta.get("rlft.episode_result")!.get("success"), "true");
});

test("EpisodeReader reads a complete episode per topic with metadata", async () => {
  const path = join(dir, "ok2.mcap");
  await record(path);
  const r = await EpisodeReader.open(path);
  assert.equal(r.recovered, false);
  const by = await r.byTopic();
  assert.equal(by.get("/joint_states")!.length, 30);
  assert.equal(by.get("/reward")!.at(-1)!.message.terminal, true);
  assert.deepEqual(by.get("/joint_states")![3]!.message.position, [3, -3]);
  assert.equal(r.episode!.task, "push_cube");
  assert.equal(r.result!.length, "30");
  await r.close();
});

test("a file cut short by a crash: every complete chunk is recovered", async () => {
  const path = join(dir, "full.mcap");
  await record(path);
  const bytes = readFileSync(path);
  // Where do the chunks end? Ask an independent stream reader.
  const ends: number[] = [];
  const s = new McapStreamReader({ includeChunks: true });
  let consumed = 0;
  for (let i = 0; i < bytes.length; i++) {
    s.append(bytes.subarray(i, i + 1));
    consumed++;
    for (let rec; (rec = s.nextRecord()); ) if (rec.type === "Chunk") ends.push(consumed);
  }
  assert.ok(ends.length >= 3);
  // Crash in the middle of the second chunk: the first survives.
  const cut = ends[0]! + Math.floor((ends[1]! - ends[0]!) / 2);
  const truncated = join(dir, "crashed.mcap");
  writeFileSync(truncated, bytes.subarray(0, cut));
  const r = await EpisodeReader.open(truncated);
  assert.equal(r.recovered, true);
  assert.equal(r.result, undefined);
  assert.equal(r.episode!.robot, "rlft_arm5");
  const js = (await r.byTopic()).get("/joint_states")!;
  assert.ok(js.length >= 10 && js.length < 30, `recovered ${js.length} of 30`);
  assert.deepEqual(js.map((m) => m.message.position), js.map((_m, i) => [i, -i]));
  await r.close();
});

test("a file that is not MCAP, or corrupt, gives a clear error naming it", async () => {
  const notMcap = join(dir, "notes.txt");
  writeFileSync(notMcap, "hello, this is not an episode");
  await assert.rejects(EpisodeReader.open(notMcap), (e: Error) => e.message.includes(notMcap) && /not an MCAP file/.test(e.message));
  const path = join(dir, "c.mcap");
  await record(path);
  const bytes = readFileSync(path);
  const bad = Buffer.from(bytes);
  for (let i = 200; i < bad.length - 200; i += 7) bad[i] = bad[i]! ^ 0xff; // scribble over the data
  const corrupt = join(dir, "corrupt.mcap");
  writeFileSync(corrupt, bad);
  await assert.rejects(
    (async () => {
      const r = await EpisodeReader.open(corrupt);
      await r.byTopic();
    })(),
    (e: Error) => e.message.startsWith(`Cannot read episode ${corrupt}`),
  );
});

test("write errors name the file and the topic", async () => {
  const w = await McapEpisodeWriter.create(join(dir, "e.mcap"), { episode });
  await assert.rejects(w.write("/nochannel", {}, 0n), /e\.mcap.*\/nochannel has no channel/);
  await assert.rejects(McapEpisodeWriter.create(join(dir, "e.mcap"), { episode }), /Cannot create episode file .*e\.mcap/);
});
