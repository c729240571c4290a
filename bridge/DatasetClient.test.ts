import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createInterface } from "node:readline";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Router } from "zeromq";
import { DatasetClient, DatasetClientError, type EpisodeUpload } from "./DatasetClient.ts";
import { decodeMessage, encodeMessage, tensorToRows, type Message } from "./wire.ts";
import { findPython } from "../app/python.ts";
import { generateKeys } from "../app/keys.ts";
import { loadCurveClientKeys } from "./CurveCertificate.ts";

const LEARNER_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "learner");
const OBS = ["q.a", "q.b", "cube.x"];
const ACT = ["a", "b"];
const quiet = { warn: () => {} };
const options = { robotId: "sim-0", configHash: "sha256:abc", obsNames: OBS, actionNames: ACT, task: "push_cube", timeoutMs: 5000, logger: quiet };

const episode: EpisodeUpload = {
  episodeId: "ep-1",
  seed: 3,
  task: "push_cube",
  success: true,
  obs: [[1, 2, 3], [4, 5, 6]],
  action: [[0.5, -0.5], [0.25, 0]],
  reward: [0, 1],
};

/** A tiny ROUTER learner; `onMessage` returns the reply headers to send for each request (in order). */
async function routerStub(onMessage: (m: Message) => Record<string, unknown>[]): Promise<{ endpoint: string; received: Message[]; close(): void }> {
  const router = new Router({ linger: 0 });
  await router.bind("tcp://127.0.0.1:*");
  const received: Message[] = [];
  void (async () => {
    try {
      for await (const [identity, ...frames] of router) {
        const m = decodeMessage(frames);
        received.push(m);
        for (const reply of onMessage(m)) await router.send([identity, ...encodeMessage(reply)]);
      }
    } catch {
      // socket closed
    }
  })();
  return { endpoint: router.lastEndpoint!, received, close: () => router.close() };
}

test("hello, episode and end against a ROUTER stub", async () => {
  const stub = await routerStub((m) => (m.header.type === "hello" ? [{ type: "welcome", seq: m.header.seq, learner: "stub 1" }] : [{ type: "ack", seq: m.header.seq }]));
  const client = await DatasetClient.connect(stub.endpoint, options);
  try {
    assert.equal(client.learner, "stub 1");
    await client.sendEpisode(episode);
    await client.end();
    const [hello, ep, end] = stub.received;
    assert.deepEqual(hello.header.obs_names, OBS);
    assert.equal(hello.header.robot_id, "sim-0");
    assert.equal(ep.header.type, "episode");
    assert.equal(ep.header.length, 2);
    assert.deepEqual(tensorToRows(ep.tensors.get("obs")!), episode.obs);
    assert.deepEqual(Array.from(ep.tensors.get("reward")!.data), [0, 1]);
    assert.equal(end.header.episodes, 1);
    assert.ok(hello.header.seq < ep.header.seq && ep.header.seq < end.header.seq, "seq increases");
  } finally {
    client.close();
    stub.close();
  }
});

test("a reply with another seq is dropped, never applied to the waiting request", async () => {
  const stub = await routerStub((m) => {
    if (m.header.type === "hello") return [{ type: "welcome", seq: m.header.seq, learner: "stub" }];
    // A stale ack and an error for other seqs first, then the real ack.
    return [{ type: "ack", seq: m.header.seq + 100 }, { type: "error", seq: m.header.seq - 1, reason: "old" }, { type: "ack", seq: m.header.seq }];
  });
  const client = await DatasetClient.connect(stub.endpoint, options);
  try {
    await client.sendEpisode(episode);
    assert.equal(client.droppedReplies, 2);
  } finally {
    client.close();
    stub.close();
  }
});

test("an error reply rejects the request with the learner's reason", async () => {
  const stub = await routerStub((m) => (m.header.type === "hello" ? [{ type: "welcome", seq: m.header.seq, learner: "stub" }] : [{ type: "error", seq: m.header.seq, reason: "episode widths do not match" }]));
  const client = await DatasetClient.connect(stub.endpoint, options);
  try {
    await assert.rejects(client.sendEpisode(episode), (e: unknown) => e instanceof DatasetClientError && e.code === "rejected" && /widths do not match/.test(e.message));
  } finally {
    client.close();
    stub.close();
  }
});

test("no learner: connect fails with the endpoint and the command to start", async () => {
  const stub = await routerStub(() => []); // a peer that never answers
  try {
    await assert.rejects(DatasetClient.connect(stub.endpoint, { ...options, timeoutMs: 300 }), (e: unknown) => {
      assert.ok(e instanceof DatasetClientError);
      assert.equal(e.code, "timeout");
      assert.ok(e.message.includes(`no learner answered at ${stub.endpoint} within 0.3 s`), e.message);
      assert.match(e.message, /python3 -m rlft_learner train-bc/);
      return true;
    });
  } finally {
    stub.close();
  }
});

test("nobody listening at all: connect fails by the deadline", async () => {
  const stub = await routerStub(() => []);
  const endpoint = stub.endpoint;
  stub.close(); // the port is now (very likely) free
  await assert.rejects(DatasetClient.connect(endpoint, { ...options, timeoutMs: 300 }), (e: unknown) => e instanceof DatasetClientError && e.code === "timeout");
});

test("an unacknowledged episode times out, and its late ack is not applied to the next request", async () => {
  let episodes = 0;
  let lateSeq = -1;
  const stub = await routerStub((m) => {
    if (m.header.type === "hello") return [{ type: "welcome", seq: m.header.seq, learner: "stub" }];
    if (m.header.type === "episode" && episodes++ === 0) {
      lateSeq = m.header.seq;
      return []; // swallow the first episode
    }
    // Answer the late ack of the first episode before this request's own... but never this one's: it must time out.
    return [{ type: "ack", seq: lateSeq }];
  });
  const client = await DatasetClient.connect(stub.endpoint, { ...options, timeoutMs: 300 });
  try {
    await assert.rejects(client.sendEpisode(episode), (e: unknown) => e instanceof DatasetClientError && e.code === "timeout");
    await assert.rejects(client.sendEpisode(episode), (e: unknown) => e instanceof DatasetClientError && e.code === "timeout");
    assert.equal(client.droppedReplies, 1);
  } finally {
    client.close();
    stub.close();
  }
});

test("episode inputs are checked before sending", async () => {
  const stub = await routerStub((m) => [{ type: "welcome", seq: m.header.seq, learner: "stub" }]);
  const client = await DatasetClient.connect(stub.endpoint, options);
  try {
    await assert.rejects(client.sendEpisode({ ...episode, reward: [0] }), /one length T/);
    await assert.rejects(client.sendEpisode({ ...episode, obs: [[1, 2], [3, 4]] }), /expected 3 values/);
    await assert.rejects(client.sendEpisode({ ...episode, action: [[NaN, 0], [0, 0]] }), /finite/);
  } finally {
    client.close();
    stub.close();
  }
});

// The real learner's ROUTER (learner/rlft_learner/transport/server.py), when the learner and its Python are here.
const python = findPython();
const haveLearner = existsSync(join(LEARNER_DIR, "rlft_learner", "transport", "server.py")) && existsSync(python);

/** `python3 -c <script>` in learner/; the script prints the bound endpoint, then one JSON line when it is done. */
function pythonServer(script: string[]) {
  const child = spawn(python, ["-c", script.join("\n")], { cwd: LEARNER_DIR, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const line = async (what: string): Promise<string> => {
    const next = await lines.next();
    assert.ok(!next.done, `server printed no ${what}: ${stderr}`);
    return String(next.value).trim();
  };
  return { child, line };
}

test("against the real Python ExperienceServer", { skip: haveLearner ? false : "learner/rlft_learner/transport/server.py or python3 not found" }, async () => {
  const server = pythonServer([
    "import json, sys",
    "from rlft_learner.transport.server import ExperienceServer",
    "with ExperienceServer('tcp://127.0.0.1:*', timeout_s=30) as s:",
    "    print(s.endpoint, flush=True)",
    "    d = s.collect()",
    "    print(json.dumps({'episodes': [{'id': e.episode_id, 'obs': e.obs.tolist(), 'action': e.action.tolist(), 'reward': e.reward.tolist(), 'success': e.success, 'seed': e.seed} for e in d.episodes],",
    "                      'obs_names': d.obs_names, 'robot_id': d.robot_id, 'config_hash': d.config_hash, 'malformed': s.stats.malformed}), flush=True)",
  ]);
  try {
    const endpoint = await server.line("endpoint");
    const client = await DatasetClient.connect(endpoint, { ...options, timeoutMs: 20_000 });
    try {
      assert.match(client.learner, /rlft_learner/);
      await client.sendEpisode(episode);
      await client.sendEpisode({ ...episode, episodeId: 7, success: false, obs: [[0, 0, 0]], action: [[1, 1]], reward: [0.5] });
      await assert.rejects(client.sendEpisode({ ...episode, obs: [[1, 2, 3, 4], [1, 2, 3, 4]] }), (e: unknown) => e instanceof DatasetClientError && e.code === "bad_input");
      await client.end();
    } finally {
      client.close();
    }
    const dataset = JSON.parse(await server.line("dataset"));
    assert.equal(dataset.robot_id, "sim-0");
    assert.equal(dataset.config_hash, "sha256:abc");
    assert.deepEqual(dataset.obs_names, OBS);
    assert.equal(dataset.episodes.length, 2);
    assert.deepEqual(dataset.episodes[0].obs, episode.obs);
    assert.deepEqual(dataset.episodes[0].action, episode.action);
    assert.deepEqual(dataset.episodes[0].reward, episode.reward);
    assert.equal(dataset.episodes[0].success, true);
    assert.equal(dataset.episodes[1].id, "7");
    assert.equal(dataset.malformed, 0);
  } finally {
    server.child.kill();
  }
});

test("over CURVE to train-bc's server: the key speaks for the robot its file names, and nobody else", { skip: haveLearner ? false : "learner/rlft_learner/transport/server.py or python3 not found" }, async () => {
  const keys = await mkdtemp(join(tmpdir(), "rlft-dataset-curve-"));
  try {
    await generateKeys(keys, { robots: ["sim-0"] });
    const server = pythonServer([
      "import json",
      "from rlft_learner.transport.server import DoorConfig, ExperienceServer",
      `door = DoorConfig(curve_secret=${JSON.stringify(join(keys, "learner.key_secret"))}, curve_authorized=${JSON.stringify(join(keys, "authorized"))})`,
      "with ExperienceServer('tcp://127.0.0.1:*', timeout_s=30, **door.door()) as s:",
      "    print(s.endpoint, flush=True)",
      "    d = s.collect()",
      "    print(json.dumps({'robot_id': d.robot_id, 'episodes': len(d.episodes), 'refused': s.stats.refused}), flush=True)",
    ]);
    try {
      const endpoint = await server.line("endpoint");
      const curve = await loadCurveClientKeys({ secretCertificate: join(keys, "sim-0.key_secret"), serverCertificate: join(keys, "learner.key") });
      await assert.rejects(DatasetClient.connect(endpoint, { ...options, robotId: "sim-1", curve }), /robot_id 'sim-1' is not admitted for this connection's CURVE key \(it is admitted as sim-0\)/);
      await assert.rejects(DatasetClient.connect(endpoint, { ...options, timeoutMs: 1500 }), (e: unknown) => e instanceof DatasetClientError && e.code === "timeout"); // no CURVE: no handshake
      const client = await DatasetClient.connect(endpoint, { ...options, curve, timeoutMs: 20_000 });
      try {
        await client.sendEpisode(episode);
        await client.end();
      } finally {
        client.close();
      }
      assert.deepEqual(JSON.parse(await server.line("dataset")), { robot_id: "sim-0", episodes: 1, refused: 1 });
    } finally {
      server.child.kill();
    }
  } finally {
    await rm(keys, { recursive: true, force: true });
  }
});
