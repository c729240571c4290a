/**
 * Camera frames on the experience link (issue 27): the stack attaches each camera's frames of obs and next_obs, the
 * wire carries them as raw bytes (a camera-less session's bytes unchanged), and they reach the learner's replay memory
 * — and its checkpoint — byte-exact.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { stringify } from "yaml";
import { loadLaunch } from "../launch/LaunchConfig.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { startLearner } from "../app/learnerProcess.ts";
import { findPython, learnerEnv } from "../app/python.ts";
import { freePort } from "../app/ports.ts";
import { ExperienceBridge } from "../bridge/ExperienceBridge.ts";
import { encodeTransitions, toTransitions, transitionProblem } from "../bridge/messages.ts";
import { decodeMessage, WireError } from "../bridge/wire.ts";
import { deflateSync } from "node:zlib";
import { decode as msgpackDecode, encode as msgpackEncode } from "@msgpack/msgpack";
import { PolicyPackage } from "../policies/PolicyPackage.ts";
import { makeLearnerFixture } from "../policies/testing/learnerFixture.ts";
import { robotPolicyFixture } from "./robotFixture.ts";
import { linkSoak } from "../bench/linkSoak.ts";
import { renderLinkFrames } from "../bench/linkFrames.ts";
import type { Transition, TransitionFrame } from "../contracts/Transition.ts";

const CAMS = ["front", "wrist"];
/** The SO-101 sim cameras' frame sizes (width, height), as their calibration files in launch/cameras/ give them. */
const SIM_SIZE: Record<string, [number, number]> = { front: [84, 84], wrist: [84, 84] };
const SIM_BYTES = Object.fromEntries(CAMS.map((c) => [c, SIM_SIZE[c][0] * SIM_SIZE[c][1] * 3]));

/** A frame whose bytes name (episode, step, camera); `h`x`w` rgb8. */
function frame(episode: number, step: number, cam: number, h = 84, w = 84): TransitionFrame {
  const rgb = new Uint8Array(h * w * 3);
  let x = (episode * 7919 + step * 104729 + cam * 1299709) >>> 0;
  for (let i = 0; i < rgb.length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    rgb[i] = x >>> 24;
  }
  return { width: w, height: h, rgb };
}

function transition(episode: number, step: number, obsDim: number, aDim: number, last = false, cams = CAMS): Transition {
  const v = (n: number, k: number) => Array.from({ length: n }, (_, j) => Math.sin(step * 0.3 + j + k) * 0.5);
  const frames = (s: number) => Object.fromEntries(cams.map((c, k) => [c, frame(episode, s, k)]));
  return {
    episode, step, obs: v(obsDim, 0), nextObs: v(obsDim, 1), baseAction: v(aDim, 2), residualAction: v(aDim, 3).map(() => 0),
    action: v(aDim, 4), nextBaseAction: v(aDim, 5), reward: last ? 1 : 0, terminated: last, truncated: false, intervention: false,
    interventionSource: "", policyVersion: "test",
    ...(cams.length > 0 ? { images: frames(step), nextImages: frames(last ? 1000 + step : step + 1) } : {}),
  };
}

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

test("frames go on the wire as raw bytes, decode byte-exact, and a session without cameras sends what it sent before", () => {
  const ts = [0, 1, 2].map((s) => transition(0, s, 4, 2, s === 2));
  const frames = encodeTransitions(1, "r", 0, ts);
  assert.equal(frames.length, 1 + 10 + 4, "header, 10 tensors, image and next_image per camera");
  assert.equal(frames[11].byteLength, 3 * 84 * 84 * 3);
  const back = toTransitions(decodeMessage(frames)).transitions;
  back.forEach((t, i) => {
    for (const c of CAMS) {
      assert.equal(sha(t.images![c].rgb), sha(ts[i].images![c].rgb));
      assert.equal(sha(t.nextImages![c].rgb), sha(ts[i].nextImages![c].rgb));
    }
  });
  const plain = ts.map(({ images: _i, nextImages: _n, ...rest }) => rest);
  const before = encodeTransitions(1, "r", 0, plain);
  assert.equal(before.length, 11);
  assert.deepEqual(before.slice(1), frames.slice(1, 11), "the float tensors are the same bytes with or without frames");
  assert.equal(decodeMessage(before).images, undefined);
  assert.equal(toTransitions(decodeMessage(before)).transitions[0].images, undefined);
});

test("frames compressed on the robot: one zlib stream per frame, sizes in the spec, decode byte-exact", () => {
  const ts = [0, 1, 2].map((s) => transition(0, s, 4, 2, s === 2));
  const frames = encodeTransitions(1, "r", 0, ts, { zlib: (rgb) => deflateSync(rgb, { level: 1 }) });
  assert.equal(frames.length, 1 + 10 + 4);
  const specs = (msgpackDecode(frames[0]) as { tensors: { name: string; dtype: string; encoding?: string; sizes?: number[] }[] }).tensors;
  for (const s of specs.slice(10)) {
    assert.equal(s.encoding, "zlib");
    assert.equal(s.dtype, "uint8");
    assert.equal(s.sizes!.length, 3);
  }
  const back = toTransitions(decodeMessage(frames)).transitions;
  back.forEach((t, i) => {
    for (const c of CAMS) {
      assert.equal(sha(t.images![c].rgb), sha(ts[i].images![c].rgb));
      assert.equal(sha(t.nextImages![c].rgb), sha(ts[i].nextImages![c].rgb));
    }
  });
  assert.deepEqual(frames.slice(1, 11), encodeTransitions(1, "r", 0, ts).slice(1, 11), "the float tensors are the same bytes");
});

test("hostile zlib frames are refused, naming the camera: cut short, larger than declared, another size, unknown encoding", () => {
  const ts = [0, 1].map((s) => transition(0, s, 4, 2, false));
  const good = encodeTransitions(1, "r", 0, ts, { zlib: (rgb) => deflateSync(rgb, { level: 1 }) });
  const head = msgpackDecode(good[0]) as { tensors: Record<string, unknown>[] };
  const k = head.tensors.findIndex((s) => s.name === "next_image.wrist");
  /** `good` with next_image.wrist's first stream replaced by `stream` (and its encoding by `encoding`). */
  const withStream = (stream: Uint8Array, encoding = "zlib") => {
    const sizes = head.tensors[k].sizes as number[];
    const rest = good[1 + k].subarray(sizes[0]);
    const tensors = head.tensors.map((s, i) => (i === k ? { ...s, encoding, sizes: [stream.byteLength, rest.byteLength] } : s));
    return [Buffer.from(msgpackEncode({ ...head, tensors })), ...good.slice(1, 1 + k), Buffer.concat([stream, rest]), ...good.slice(2 + k)];
  };
  const rgb = ts[0].nextImages!.wrist.rgb;
  const cases: [Buffer[], RegExp][] = [
    [withStream(deflateSync(rgb).subarray(0, 100)), /camera "wrist": next_image.wrist frame 0 of 2 .* is a zlib stream cut short/],
    // a short stream that inflates past the frame (a long one is refused before inflating: longer than compressBound)
    [withStream(deflateSync(new Uint8Array(2 * rgb.byteLength))), /camera "wrist": next_image.wrist frame 0 of 2 \(84x84x3 = 21168 bytes, zlib\) inflates to more than its declared 21168 bytes/],
    [withStream(deflateSync(Buffer.concat([rgb, rgb]))), /next_image\.wrist.*camera "wrist", encoding zlib\): frame 0 is a \d+-byte stream, longer than zlib's compressBound/],
    [withStream(deflateSync(new Uint8Array(64 * 64 * 3))), /camera "wrist": .* inflates to 12288 bytes; its declared shape needs 21168/],
    [withStream(deflateSync(rgb), "lz4"), /camera "wrist" frames declare encoding "lz4"; .* learner.frame_encoding/],
  ];
  for (const [msg, want] of cases) assert.throws(() => decodeMessage(msg), (e: Error) => e instanceof WireError && want.test(e.message), String(want));
  assert.equal(toTransitions(decodeMessage(withStream(deflateSync(rgb)))).transitions.length, 2, "the same message with a good stream decodes");
});

test("the bridge refuses frames that do not fit the session's cameras, naming the camera", () => {
  const sizes = new Map<string, string>();
  const ok = transition(0, 0, 4, 2);
  assert.equal(transitionProblem(ok, 4, 2, CAMS, sizes), undefined);
  assert.match(transitionProblem(ok, 4, 2, [], sizes)!, /learner.cameras is empty/);
  assert.match(transitionProblem(transition(0, 1, 4, 2, false, ["front"]), 4, 2, CAMS, sizes)!, /holds frames of \[front\]; this session sends cameras \[front, wrist\]/);
  const small = { ...ok, images: { ...ok.images, wrist: frame(0, 1, 1, 42, 42) } };
  assert.match(transitionProblem(small, 4, 2, CAMS, sizes)!, /images.wrist is 42x42; camera "wrist" sent 84x84 before/);
  const torn = { ...ok, nextImages: { ...ok.nextImages, front: { width: 84, height: 84, rgb: new Uint8Array(10) } } };
  assert.match(transitionProblem(torn, 4, 2, CAMS, new Map())!, /nextImages.front must be rgb8 bytes/);
});

test("the stack attaches each camera's frames of obs and next_obs (SO-101 sim, front + wrist)", async () => {
  const fx = await robotPolicyFixture("push_cube", "so101");
  try {
    const cfg = loadLaunch("launch/sim_so101.yaml");
    cfg.actor = { ...cfg.actor, kind: "policy", package: fx.dir };
    cfg.recorder = { ...cfg.recorder, enabled: false };
    cfg.learner = { ...cfg.learner, cameras: CAMS };
    cfg.episodes.max_steps = 12;
    const got: Transition[] = [];
    await runEpisodes(cfg, { count: 2, seed: 3, label: "t", experience: { push: (x) => got.push(x) } });
    assert.ok(got.length >= 2 * 10, `${got.length} transitions`);
    for (const ep of new Set(got.map((t) => t.episode))) {
      const mine = got.filter((t) => t.episode === ep);
      mine.forEach((t, i) => {
        for (const c of CAMS) {
          assert.equal(t.images![c].width, SIM_SIZE[c][0]);
          assert.equal(t.images![c].rgb.byteLength, SIM_SIZE[c][0] * SIM_SIZE[c][1] * 3);
          assert.ok(t.nextImages![c], `episode ${ep} step ${t.step}: no next frame of ${c}`);
          if (i + 1 < mine.length) assert.equal(sha(t.nextImages![c].rgb), sha(mine[i + 1].images![c].rgb), `step ${t.step} ${c}`);
        }
      });
      assert.ok(mine.slice(1).some((t, i) => sha(t.images!.wrist.rgb) !== sha(mine[i].images!.wrist.rgb)), "the wrist camera moves");
    }
  } finally {
    await fx.cleanup();
  }
});

const DUMP = `
import hashlib, json, sys
import numpy as np
from rlft_learner.buffers.replay import ReplayBuffer
with np.load(sys.argv[1]) as f:
    arrays = {k: f[k] for k in f.files}
buf = ReplayBuffer(len(arrays["seq"]), arrays["obs"].shape[1], arrays["action"].shape[1])
buf.load_state(arrays)
out = {}
for row in range(len(buf)):
    s = buf.frames.sample(np.array([row]), np.array([row]))
    out[str(int(buf.data["seq"][row]))] = {k: hashlib.sha256(np.ascontiguousarray(v[0].transpose(1, 2, 0)).tobytes()).hexdigest() for k, v in s.items()}
print(json.dumps(out))
`;

for (const frameEncoding of ["zlib", "raw"] as const) test(`transitions with ${frameEncoding} frames reach the learner's replay memory and checkpoint byte-exact`, async () => {
  const fx = await makeLearnerFixture({ obsDim: 4, actionDim: 2 });
  const dir = mkdtempSync(join(tmpdir(), "rlft-pixlink-"));
  try {
    const base = await PolicyPackage.load(fx.dir);
    const [p1, p2] = [await freePort(), await freePort()];
    const experience = `tcp://127.0.0.1:${p1}`;
    const cfgFile = join(dir, "learner.yaml");
    writeFileSync(cfgFile, stringify({ experience_bind: experience, policy_bind: `tcp://127.0.0.1:${p2}`, base_package: fx.dir, run_dir: join(dir, "run"), json_progress: true, learning_starts: 1_000_000_000, checkpoint_every_s: 0.5 }));
    const learner = startLearner(["serve", "--config", cfgFile], () => undefined, { announceWait: false });
    const sent: Transition[] = [];
    try {
      await learner.ready;
      const bridge = await ExperienceBridge.open({
        endpoint: experience, spoolDir: join(dir, "spool"), robotId: "pix-0", configHash: "t", obsNames: base.json.observation.names,
        actionNames: base.json.action.names, task: "t", basePolicyVersion: base.json.version, batchSize: 16, cameras: CAMS, frameEncoding,
        logger: { warn: () => undefined, info: () => undefined },
      });
      try {
        for (const [ep, len] of [[0, 21], [1, 30]]) {
          for (let s = 0; s < len; s++) {
            const t = transition(ep, s, 4, 2, s === len - 1);
            sent.push(t);
            assert.equal(bridge.push(t), true);
          }
        }
        assert.equal(await bridge.flush({ timeoutMs: 60_000, durable: true }), true, JSON.stringify(bridge.stats()));
        assert.equal(bridge.stats().acked, sent.length);
      } finally {
        await bridge.close();
      }
    } finally {
      learner.child.kill("SIGINT");
      await learner.done.catch(() => undefined);
    }
    const pointer = JSON.parse(spawnSync("cat", [join(dir, "run", "checkpoint.json")], { encoding: "utf8" }).stdout) as { dir: string };
    const dump = spawnSync(findPython(), ["-c", DUMP, join(dir, "run", pointer.dir, "online.npz")], { encoding: "utf8", env: learnerEnv() });
    assert.equal(dump.status, 0, dump.stderr);
    const stored = JSON.parse(dump.stdout) as Record<string, Record<string, string>>;
    assert.equal(Object.keys(stored).length, sent.length);
    sent.forEach((t, seq) => {
      for (const c of CAMS) {
        assert.equal(stored[seq][`image.${c}`], sha(t.images![c].rgb), `seq ${seq} image.${c}`);
        assert.equal(stored[seq][`next_image.${c}`], sha(t.nextImages![c].rgb), `seq ${seq} next_image.${c}`);
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await fx.cleanup();
  }
});

test("the link soak: 4 robots at 30 Hz with both cameras for a few seconds lose nothing", async () => {
  const fx = await makeLearnerFixture({ obsDim: 12, actionDim: 6 });
  try {
    const frames = await renderLinkFrames(8);
    assert.deepEqual(Object.keys(frames), CAMS);
    assert.equal(frames.front[0].rgb.byteLength, SIM_BYTES.front);
    const r = await linkSoak({ basePackage: fx.dir, frames, minutes: 0.08, robots: 4, hz: 30 });
    assert.ok(r.produced >= 4 * 30 * 3, `produced ${r.produced}`);
    assert.equal(r.stored, r.produced, JSON.stringify(r));
    assert.equal(r.acked, r.produced);
    assert.equal(r.lost, 0);
    assert.equal(r.rejectedFrames, 0);
    const raw = SIM_BYTES.front + SIM_BYTES.wrist;
    assert.equal(r.frameEncoding, "zlib", "the robots compress frames as sessions do by default");
    assert.ok(r.wireBytesPerTransition < 2 * raw, "both frames of both cameras travel compressed");
    assert.ok(r.replayBytesPerTransition !== null && r.replayBytesPerTransition < raw, `replay ${r.replayBytesPerTransition} bytes/transition: each frame once, compressed`);
  } finally {
    await fx.cleanup();
  }
});
