/**
 * Several named cameras through the whole stack: sim cameras set up by calibration files (a fixed one and one on the
 * hand, as a wrist camera), a frame per control tick on /camera/<name>/image, recorded in the MCAP episode with each
 * camera's calibration, counted by `rlft inspect`, exported by `rlft dataset export --format lerobot` as one video per
 * camera (read back by ffprobe), and republished by `rlft replay --through-nodes`. Bad camera input stops the stack
 * at start with the camera named, before anything is recorded.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { Stack } from "../launch/Stack.ts";
import { readEpisodeTrace } from "../data/EpisodeTrace.ts";
import { summarizeEpisode } from "../data/EpisodeSummary.ts";
import { exportLeRobot } from "../data/lerobot/LeRobotExport.ts";
import { playLogs } from "../data/LogPlayer.ts";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { EpisodeReader } from "../recording/EpisodeReader.ts";
import { calibrationFilesFor } from "../sim/render/cameraCalibration.ts";
import { lookAtPose, pinholeModel } from "../sim/render/mujocoCamera.ts";
import { cameraPlans } from "../hardware/camera/CameraConfig.ts";
import { NODE_EXECUTABLES } from "../launch/nodeExecutables.ts";

const tmp = mkdtempSync(join(tmpdir(), "rlft-cameras-"));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

/** Calibration files for rlft_arm5: a fixed front camera and a camera on the hand looking down the tool axis. */
function writeArm5Cameras(): string {
  const dir = join(tmp, "cal");
  const specs = [
    { name: "front", model: pinholeModel(48, 48, 45), parentBody: "world", pose: lookAtPose([0.62, 0, 0.45], [0.14, 0, 0]) },
    { name: "wrist", model: pinholeModel(32, 32, 70), parentBody: "hand", pose: { R: [[0, 1, 0], [-1, 0, 0], [0, 0, 1]], t: [0.03, 0, 0.02] } },
  ];
  mkdirSync(dir, { recursive: true });
  for (const s of specs) {
    const f = calibrationFilesFor(s);
    writeFileSync(join(dir, `${s.name}.intrinsics.json`), JSON.stringify(f.intrinsics));
    writeFileSync(join(dir, `${s.name}.hand_eye.json`), JSON.stringify(f.handEye));
  }
  return dir;
}

const launch = (cal: string, extra = "") => `task: push_cube
control_hz: 10
actor: {kind: expert, expert_quality: 1}
episodes: {max_steps: 12}
camera:
  rate_hz: 10
  depth: false
  randomize: true
  cameras:
    - {name: front, intrinsics: ${cal}/front.intrinsics.json, hand_eye: ${cal}/front.hand_eye.json}
    - {name: wrist, intrinsics: ${cal}/wrist.intrinsics.json, hand_eye: ${cal}/wrist.hand_eye.json${extra}}
`;

test("two named sim cameras: a frame per tick each, recorded with their calibration, counted by inspect, exported as two videos, replayed", async () => {
  const cal = writeArm5Cameras();
  const out = join(tmp, "episodes");
  await runEpisodes(parseLaunch(launch(cal), "cams.yaml"), { count: 1, seed: 5, label: "test", recordTo: out });
  const files = readdirSync(out).filter((f) => f.endsWith(".mcap")).sort().map((f) => join(out, f));
  assert.equal(files.length, 1);
  const tr = await readEpisodeTrace(files[0]);
  const ticks = tr.ticks.length;
  const counts = Object.fromEntries(summarizeEpisode(tr).rates.map((r) => [r.topic, r.count]));
  for (const name of ["front", "wrist"]) {
    assert.ok(Math.abs(counts[`/camera/${name}/image`] - ticks) <= 1, `${name}: ${counts[`/camera/${name}/image`]} frames for ${ticks} ticks`);
    assert.equal(counts[`/camera/${name}/depth`], undefined, "depth: false publishes no depth");
    // Each camera's calibration is in the episode, whole, with its hash.
    assert.equal(JSON.parse(tr.info[`calibration_camera_${name}`]).camera, name);
    assert.match(tr.info[`calibration_hand_eye_${name}_sha256`], /^[0-9a-f]{64}$/);
  }
  assert.equal(JSON.parse(tr.info["camera.randomize"]).enabled, true);
  // Frame sizes as calibrated.
  const r = await EpisodeReader.open(files[0]);
  const sizes = new Map<string, string>();
  for await (const m of r.messages({ topics: ["/camera/front/image", "/camera/wrist/image"] })) {
    const im = m.message as { width: number; height: number; encoding: string };
    sizes.set(m.topic, `${im.width}x${im.height} ${im.encoding}`);
  }
  await r.close();
  assert.deepEqual(Object.fromEntries(sizes), { "/camera/front/image": "48x48 rgb8", "/camera/wrist/image": "32x32 rgb8" });

  // LeRobot (v2.1 layout: one video file per camera and episode), as many frames as the ticks that have a frame at or
  // before them (no frame from the future: ticks before the first frames are left out).
  const ds = join(tmp, "lerobot");
  const res = await exportLeRobot(files, ds, { version: "2.1" });
  assert.deepEqual(res.cameras.sort(), ["observation.images.front", "observation.images.wrist"]);
  for (const key of res.cameras) {
    const video = join(ds, `videos/chunk-000/${key}/episode_000000.mp4`);
    const probe = spawnSync("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames,width,height", "-of", "csv=p=0", video], { encoding: "utf8" });
    const [w, h, n] = probe.stdout.trim().split(",").map(Number);
    assert.deepEqual([w, h], key.endsWith("front") ? [48, 48] : [32, 32]);
    assert.equal(n, tr.ticks.filter((k) => k.obs.length && k.executed.length).length - res.droppedTicks);
  }

  // Replay through the node graph: both cameras' frames come back on their topics.
  const rt = await EmbeddedRuntime.create({ clock: "sim", logLevel: "error" });
  const probe = rt.createNode("probe");
  const got = new Map<string, number>();
  for (const name of ["front", "wrist"]) probe.createSubscription("sensor_msgs/msg/Image", `/camera/${name}/image`, () => got.set(name, (got.get(name) ?? 0) + 1));
  await playLogs(rt, [files[0]]);
  await rt.shutdown();
  assert.equal(got.get("front"), counts["/camera/front/image"]);
  assert.equal(got.get("wrist"), counts["/camera/wrist/image"]);
});

test("bad camera configuration stops the stack at start with the camera named and the fix; nothing is recorded", async () => {
  const cal = writeArm5Cameras();
  const out = join(tmp, "never");
  const cases: [string, string, RegExp][] = [
    ["another camera's intrinsics", launch(cal).replace(`${cal}/wrist.intrinsics.json`, `${cal}/front.intrinsics.json`), /camera wrist: .*is the calibration of camera "front", not "wrist" — point camera wrist at its own intrinsics file/],
    ["another aspect ratio", launch(cal, ", width: 64, height: 48"), /camera wrist: .*calibrated for 32×32 frames, which cannot be resized to 64×48/],
    ["a missing file", launch(cal).replace(`${cal}/front.hand_eye.json`, `${cal}/nope.json`), /camera front: Cannot read hand-eye file .*nope\.json: ENOENT; run `rlft calibrate hand-eye`/],
    ["a body the scene lacks", launch(cal), /camera wrist: its hand-eye file puts it on body "tool0", which this scene does not have/],
  ];
  // The last case: a real robot's hand-eye file (parent tool0) used in the sim.
  const he = JSON.parse(JSON.stringify(calibrationFilesFor({ name: "wrist", model: pinholeModel(32, 32, 70), parentBody: "tool0", pose: { R: [[1, 0, 0], [0, 1, 0], [0, 0, 1]], t: [0, 0, 0] } }).handEye));
  for (const [what, yaml, re] of cases) {
    if (what === "a body the scene lacks") writeFileSync(join(cal, "wrist.hand_eye.json"), JSON.stringify(he));
    const cfg = parseLaunch(yaml, "bad.yaml");
    cfg.recorder.out = out;
    await assert.rejects(Stack.create(cfg, { quiet: true }), (e: Error) => re.test(e.message) || assert.fail(`${what}: ${e.message}`));
  }
  assert.equal(existsSync(out), false, "nothing recorded");
  // A sim camera without its calibration files, and a repeated name, are launch-file errors.
  assert.throws(() => cameraPlansOf("camera: {cameras: [{name: wrist}]}\n"), /camera wrist: a sim camera is set up by its calibration files — give it intrinsics: and hand_eye:/);
  assert.throws(() => cameraPlansOf(`camera: {cameras: [{name: a, kind: topic}, {name: a, kind: topic}]}\n`), /camera a is listed twice/);
});

function cameraPlansOf(yaml: string): unknown {
  return cameraPlans(parseLaunch(yaml, "x.yaml").camera);
}

test("rlft node sim --param cameras=[...]: the ROS 2 launch path runs the same calibrated cameras, one node each", async () => {
  const cal = writeArm5Cameras();
  const rt = await EmbeddedRuntime.create({ clock: "sim", logLevel: "error" });
  const cameras = ["front", "wrist"].map((name) => ({ name, intrinsics: `${cal}/${name}.intrinsics.json`, hand_eye: `${cal}/${name}.hand_eye.json` }));
  const started = await NODE_EXECUTABLES.sim.start(rt, { task: "push_cube", control_hz: 10, camera_rate_hz: 10, cameras });
  const probe = rt.createNode("probe");
  const sizes = new Map<string, string>();
  for (const name of ["front", "wrist"]) probe.createSubscription<{ width: number; height: number }>("sensor_msgs/msg/Image", `/camera/${name}/image`, (m) => sizes.set(name, `${m.width}x${m.height}`));
  for (const n of started.nodes) await n.configure();
  for (const n of started.nodes) await n.activate();
  await rt.simClock.advance(0.3);
  assert.deepEqual(Object.fromEntries(sizes), { front: "48x48", wrist: "32x32" });
  for (const n of started.nodes) await n.shutdown();
  await started.close?.();
  await rt.shutdown();
});
