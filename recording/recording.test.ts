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

test("a file that is not MCAP gives a clear error naming it; a corrupt one is read up to the damage", async () => {
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
  // What is valid (header, metadata) is read; where it stops is named.
  const r = await EpisodeReader.open(corrupt);
  const by = await r.byTopic();
  assert.ok((by.get("/joint_states")?.length ?? 0) < 30);
  assert.ok(r.damage, "damage is reported");
  assert.ok(r.describeDamage().startsWith(`${corrupt}: valid data ends at byte`));
  await r.close();
  // Nothing readable at all: an error naming the file.
  const garbage = join(dir, "garbage.mcap");
  writeFileSync(garbage, Buffer.concat([bytes.subarray(0, 8), Buffer.alloc(4000, 0xab)]));
  await assert.rejects(EpisodeReader.open(garbage), (e: Error) => e.message.startsWith(`Cannot read episode ${garbage}`) && /nothing before it is readable/.test(e.message));
});

test("write errors name the file and the topic", async () => {
  const w = await McapEpisodeWriter.create(join(dir, "e.mcap"), { episode });
  await assert.rejects(w.write("/nochannel", {}, 0n), /e\.mcap.*\/nochannel has no channel/);
  await assert.rejects(McapEpisodeWriter.create(join(dir, "e.mcap"), { episode }), /Cannot create episode file .*e\.mcap/);
});

test("truncated MCAP: reads what is valid and says at which byte it stops", async () => {
  const path = join(dir, "full2.mcap");
  await record(path);
  const bytes = readFileSync(path);
  const cut = Math.floor(bytes.length * 0.6);
  const truncated = join(dir, "cut.mcap");
  writeFileSync(truncated, bytes.subarray(0, cut));
  const r = await EpisodeReader.open(truncated);
  assert.equal(r.recovered, true);
  const d = r.damage!;
  assert.ok(d.offset > 0 && d.offset < cut, `valid data ends at ${d.offset}`);
  assert.equal(d.size, cut);
  assert.match(d.detail, /file ends inside a record at byte \d+ of \d+/);
  assert.match(r.describeDamage(), new RegExp(`cut\\.mcap: valid data ends at byte ${d.offset} of ${cut}`));
  let n = 0;
  for await (const m of r.messages({ topics: ["/joint_states"] })) assert.deepEqual(m.message.position, [n, -n++]);
  assert.ok(n > 0 && n < 30, `${n} of 30 messages before the cut`);
  await r.close();
});

test("a corrupt chunk inside a complete file: the chunks before it are read, damage names the chunk's byte", async () => {
  const path = join(dir, "full3.mcap");
  await record(path);
  const bytes = Buffer.from(readFileSync(path));
  const idx = await McapIndexedReader.Initialize({ readable: fileReadable(new Uint8Array(bytes)) });
  const second = idx.chunkIndexes[1]!;
  const start = Number(second.chunkStartOffset);
  for (let i = start + 60; i < start + Number(second.chunkLength) - 8; i += 5) bytes[i] ^= 0x5a;
  const bad = join(dir, "badchunk.mcap");
  writeFileSync(bad, bytes);
  const r = await EpisodeReader.open(bad);
  const got: number[] = [];
  for await (const m of r.messages({ topics: ["/joint_states"] })) got.push((m.message.position as number[])[0]);
  assert.ok(got.length >= 10 && got.length < 30, `read ${got.length}`);
  assert.deepEqual(got, got.map((_, i) => i));
  assert.equal(r.damage?.offset, start);
  assert.match(r.damage!.detail, /corrupt chunk at byte/);
  await r.close();
});

test("an older log (format 1, an older message schema) stays readable: new fields get their defaults", async () => {
  const path = join(dir, "v1.mcap");
  const { McapWriter } = await import("@mcap/core");
  const { FileWritable } = await import("./FileWritable.ts");
  const { MessageWriter } = await import("@foxglove/rosmsg2-serialization");
  const file = await FileWritable.create(path);
  const w = new McapWriter({ writable: file, useChunks: true });
  await w.start({ profile: "ros2", library: "rlft 0.0.1" });
  await w.addMetadata({ name: "rlft.episode", metadata: new Map([["task", "push_cube"], ["robot", "rlft_arm5"], ["seed", "1"]]) });
  // An earlier PolicyAction without residual_action.
  const oldText = "std_msgs/Header header\nstring policy_version\nfloat64[] base_action\nfloat64[] action\n================================================================================\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n================================================================================\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n";
  const schemaId = await w.registerSchema({ name: "rlft_interfaces/msg/PolicyAction", encoding: "ros2msg", data: new TextEncoder().encode(oldText) });
  const channelId = await w.registerChannel({ topic: "/policy/action", schemaId, messageEncoding: "cdr", metadata: new Map() });
  const enc = new MessageWriter(parse(oldText, { ros2: true }));
  const data = enc.writeMessage({ header: { stamp: { sec: 0, nanosec: 1 }, frame_id: "" }, policy_version: "bc-old", base_action: [0.5, -0.5], action: [0.25, 0] });
  await w.addMessage({ channelId, sequence: 0, logTime: 1n, publishTime: 1n, data });
  await w.end();
  await file.close();
  const r = await EpisodeReader.open(path);
  assert.equal(r.formatVersion, 1);
  const [m] = (await r.byTopic()).get("/policy/action")!;
  assert.equal(m.message.policy_version, "bc-old");
  assert.deepEqual(m.message.base_action, [0.5, -0.5]);
  assert.deepEqual(m.message.residual_action, [], "a field added later reads as its default");
  await r.close();
  const cur = await EpisodeReader.open(join(dir, "ok2.mcap"));
  assert.equal(cur.formatVersion, 2);
  await cur.close();
});
