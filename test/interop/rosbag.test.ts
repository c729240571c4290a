/**
 * rosbag2 readers as peers: rosbags (with rlft's .msg files registered) and Foxglove's official `mcap` Python reader
 * (with its ROS 2 decoder, from the schemas in the file) open an episode the stack recorded, decode every message,
 * and count what `rlft inspect` counts; and a bag that rosbags wrote with rlft's types and sensor_msgs/Image replays
 * through `rlft replay --through-nodes`, whose re-recording holds the same messages.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseLaunch } from "../../launch/LaunchConfig.ts";
import { runEpisodes } from "../../app/runEpisodes.ts";
import { EpisodeReader } from "../../recording/EpisodeReader.ts";
import { REPO_ROOT } from "../../app/python.ts";
import { robotPolicyFixture } from "../robotFixture.ts";
import { readEpisodeTrace } from "../../data/EpisodeTrace.ts";
import { summarizeEpisode } from "../../data/EpisodeSummary.ts";
import type { LearnerFixture } from "../../policies/testing/learnerFixture.ts";
import { runPeer } from "./peers.ts";

const root = mkdtempSync(join(tmpdir(), "rlft-rosbag-"));
let fx: LearnerFixture;

type Digest = { values?: number[]; position?: number[]; names?: string[]; image?: [number, number, string, number]; event?: string; active?: boolean; stamp?: number };
interface TopicRead {
  type: string;
  count: number;
  summary_count?: number;
  first: Digest;
  last: Digest;
  log_time_is_stamp?: boolean;
}
interface Read {
  rosbags: Record<string, TopicRead>;
  mcap: Record<string, TopicRead>;
  metadata: Record<string, Record<string, string>>;
}

function rlft(args: string[]): string {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(REPO_ROOT, "bin", "rlft.js"), ...args], { encoding: "utf8", cwd: REPO_ROOT, timeout: 120_000 });
  assert.equal(r.status, 0, `rlft ${args.join(" ")}:\n${r.stderr}`);
  return r.stdout;
}

/** What rlft's own reader decodes: per topic first/last digests in the peer's shape. */
async function rlftDigests(file: string): Promise<Record<string, { count: number; first: Digest; last: Digest }>> {
  const r = await EpisodeReader.open(file);
  try {
    const out: Record<string, { count: number; first: Digest; last: Digest }> = {};
    for await (const m of r.messages()) {
      const msg = m.message as Record<string, unknown>;
      const d: Digest = {};
      if (Array.isArray(msg.values)) d.values = msg.values as number[];
      if (Array.isArray(msg.position)) d.position = msg.position as number[];
      if (typeof msg.encoding === "string") d.image = [msg.width as number, msg.height as number, msg.encoding, (msg.data as Uint8Array).reduce((a, b) => a + b, 0)];
      if (typeof msg.event === "string") d.event = msg.event;
      const t = (out[m.topic] ??= { count: 0, first: d, last: d });
      t.count++;
      t.last = d;
    }
    return out;
  } finally {
    await r.close();
  }
}

before(async () => {
  fx = await robotPolicyFixture("push_cube");
  // A policy episode with the camera (rgb8 + 32FC1 depth) and the scripted operator: every rlft message type.
  const cfg = parseLaunch(`task: push_cube\nactor: {kind: policy, package: ${JSON.stringify(fx.dir)}}\ncamera: {enabled: true, rate_hz: 5, width: 16, height: 12}\noperator: {enabled: true, patience_sec: 0.5}\nepisodes: {max_steps: 25}\n`, "interop.yaml");
  await runEpisodes(cfg, { count: 1, seed: 4, label: "interop", recordTo: join(root, "episodes") });
});

after(async () => {
  await fx?.cleanup();
  rmSync(root, { recursive: true, force: true });
});

test("rosbags (rlft's .msg registered) and the official mcap reader decode every message of a recorded episode; counts match rlft inspect", async () => {
  const dir = join(root, "episodes");
  const file = join(dir, readdirSync(dir).find((f) => f.endsWith(".mcap"))!);
  const got = runPeer<Read>("rosbag_read.py", [file], { tmp: root });
  const inspect = summarizeEpisode(await readEpisodeTrace(file)); // what `rlft inspect` prints
  const ours = await rlftDigests(file);
  assert.ok(inspect.rates.length >= 8, `topics: ${inspect.rates.map((r) => r.topic).join(", ")}`);
  for (const types of ["rlft_interfaces/msg/Observation", "rlft_interfaces/msg/PolicyAction", "rlft_interfaces/msg/Intervention", "rlft_interfaces/msg/EpisodeEvent", "sensor_msgs/msg/Image", "sensor_msgs/msg/JointState"]) {
    assert.ok(inspect.rates.some((r) => r.type === types), `the episode has ${types}`);
  }
  for (const { topic, type, count } of inspect.rates) {
    for (const [reader, seen] of [["rosbags", got.rosbags], ["mcap", got.mcap]] as const) {
      assert.equal(seen[topic]?.type, type, `${reader}: type of ${topic}`);
      assert.equal(seen[topic].count, count, `${reader}: ${topic} decoded ${seen[topic].count} messages, rlft inspect counts ${count}`);
      for (const end of ["first", "last"] as const) {
        const a = seen[topic][end];
        const b = ours[topic][end];
        if (b.values) assert.deepEqual(a.values, b.values, `${reader} ${topic} ${end} values`);
        if (b.position) assert.deepEqual(a.position, b.position, `${reader} ${topic} ${end} position`);
        if (b.image) assert.deepEqual(a.image, b.image, `${reader} ${topic} ${end} image`);
        if (b.event) assert.equal(a.event, b.event, `${reader} ${topic} ${end} event`);
      }
    }
    assert.equal(got.mcap[topic].summary_count, count, `the file's own statistics for ${topic}`);
    assert.equal(got.rosbags[topic].log_time_is_stamp, true, `${topic}: log time = header stamp (docs/data.md)`);
  }
  assert.equal(Object.keys(got.rosbags).length, inspect.rates.length);
  assert.equal(got.metadata["rlft.episode"].task, "push_cube");
});

test("a bag rosbags wrote with rlft's types and sensor_msgs/Image replays through rlft replay --through-nodes", async () => {
  const w = runPeer<{ file: string; counts: Record<string, number> }>("rosbag_write.py", [join(root, "bag")], { tmp: root });
  const rerec = join(root, "rerecorded");
  // The bag directory as rosbags left it (metadata.yaml + the .mcap), as a ROS 2 user would pass it.
  const out = rlft(["replay", join(root, "bag"), "--through-nodes", "--record-to", rerec]);
  for (const [topic, n] of Object.entries(w.counts)) assert.match(out, new RegExp(`${topic.replace(/\//g, "\\/")}\\s+${n}\\b`), `replay republished ${n} on ${topic}:\n${out}`);
  // The recorder opened an episode on the bag's start event and closed it on success: the same messages again.
  const files = readdirSync(rerec).filter((f) => f.endsWith(".mcap"));
  assert.equal(files.length, 1);
  const again = await rlftDigests(join(rerec, files[0]));
  const original = runPeer<Read>("rosbag_read.py", [w.file], { tmp: root }).rosbags;
  for (const [topic, n] of Object.entries(w.counts)) {
    assert.equal(again[topic]?.count, n, `re-recorded ${topic}`);
    assert.deepEqual(again[topic].first.values ?? again[topic].first.position ?? again[topic].first.image ?? again[topic].first.event, original[topic].first.values ?? original[topic].first.position ?? original[topic].first.image ?? original[topic].first.event);
    assert.deepEqual(again[topic].last.values ?? again[topic].last.position ?? again[topic].last.image ?? again[topic].last.event, original[topic].last.values ?? original[topic].last.position ?? original[topic].last.image ?? original[topic].last.event);
  }
  // And the re-recording is again a bag rosbags reads with rlft's types.
  const reread = runPeer<Read>("rosbag_read.py", [join(rerec, files[0])], { tmp: root });
  assert.equal(reread.rosbags["/observation"].count, w.counts["/observation"]);
  assert.equal(reread.rosbags["/camera/front/image"].type, "sensor_msgs/msg/Image");
});
