/**
 * The data tools on real recordings: MuJoCo episodes recorded by the stack (scripted expert; a real ONNX policy with
 * the scripted operator), replayed in sim, open-loop, through the node graph, to learner transitions, exported to
 * LeRobot and read back by hyparquet (an independent parquet reader), imported again.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { robotPolicyFixture } from "../test/robotFixture.ts";
import type { LearnerFixture } from "../policies/testing/learnerFixture.ts";
import { McapEpisodeWriter } from "../recording/McapEpisodeWriter.ts";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { TOPICS } from "../contracts/topics.ts";
import { fromTime } from "../contracts/msgs.ts";
import type { Transition } from "../contracts/Transition.ts";
import { replayInSim, plotSimReplay, SimReplayError } from "./SimReplay.ts";
import { openLoopEval, plotOpenLoop } from "./OpenLoopEval.ts";
import { readEpisodeTrace, interventionSpans } from "./EpisodeTrace.ts";
import { replayTransitions, labelEpisode } from "../app/learnerReplay.ts";
import { playLogs } from "./LogPlayer.ts";
import { summarizeEpisode, plotEpisode } from "./EpisodeSummary.ts";
import { datasetStats } from "./DatasetStats.ts";
import { exportLeRobot } from "./lerobot/LeRobotExport.ts";
import { importLeRobot } from "./lerobot/LeRobotImport.ts";
import { writeLinePlot } from "./linePlot.ts";

/** The stated tolerance: a sim log replayed in the same simulator must stay within 1 mrad of the recording. */
const TOLERANCE_RAD = 1e-3;

const root = mkdtempSync(join(tmpdir(), "rlft-data-"));
const demos = join(root, "demos");
const online = join(root, "online");
let fx: LearnerFixture;

before(async () => {
  // One expert episode with the camera (for the video export), two policy episodes with the scripted operator.
  const expert = parseLaunch("task: push_cube\nactor: {kind: expert, expert_quality: 1.0}\ncamera: {enabled: true, rate_hz: 2, width: 32, height: 32}\n", "demos.yaml");
  const d = await runEpisodes(expert, { count: 1, seed: 3, label: "demos", recordTo: demos, metadata: { source: "scripted_expert" } });
  assert.equal(d.results[0].outcome, "success", "the quality-1 expert solves seed 3");
  fx = await robotPolicyFixture("push_cube");
  const pol = parseLaunch(`task: push_cube\nactor: {kind: policy, package: ${JSON.stringify(fx.dir)}}\ncamera: {enabled: false}\noperator: {enabled: true, patience_sec: 1}\nepisodes: {max_steps: 30}\n`, "online.yaml");
  await runEpisodes(pol, { count: 2, seed: 5, label: "online", recordTo: online });
});

after(async () => {
  await fx?.cleanup();
  rmSync(root, { recursive: true, force: true });
});

const demoFile = () => join(demos, "episode_000000.mcap");
const onlineFile = () => join(online, "episode_000001.mcap");

test(`a recorded sim episode replays in sim to its recorded success, joint divergence under ${TOLERANCE_RAD} rad`, async () => {
  const r = await replayInSim(demoFile());
  assert.equal(r.startFrom, "seed");
  assert.ok(r.rows.length > 10 && r.commands > 10);
  assert.equal(r.recordedSuccess, true);
  assert.equal(r.simSuccess, true, "the sim reaches the recorded success");
  assert.ok(r.maxDivergence < TOLERANCE_RAD, `max joint divergence ${r.maxDivergence}`);
  const plot = plotSimReplay(r, TOLERANCE_RAD);
  assert.equal(plot.panels.length, r.jointNames.length + 1, "one panel per joint, then the divergence");
  assert.deepEqual(plot.panels.at(-1)!.hlines, [{ y: TOLERANCE_RAD, label: `tolerance ${TOLERANCE_RAD}` }]);
  // The user's path: `rlft replay --sim --plot` writes it through the learner's matplotlib.
  const out = join(root, "sim.png");
  const size = await writeLinePlot(plot, out);
  const png = readFileSync(out);
  assert.equal(png.toString("latin1", 12, 16), "IHDR");
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [size.width, size.height]);
});

test("--sim refuses a log from another robot model, naming it", async () => {
  const file = join(root, "ur5e.mcap");
  const w = await McapEpisodeWriter.create(file, { episode: { task: "push_cube", seed: 1, robot: "ur5e", policy_version: "x", git_revision: "x" } });
  const names = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"];
  await w.write(TOPICS.jointStates.topic, { header: { stamp: { sec: 0, nanosec: 0 }, frame_id: "" }, name: names, position: names.map(() => 0) }, 0n, { type: TOPICS.jointStates.type });
  await w.close({ success: false, length: 1, reason: "test" });
  await assert.rejects(replayInSim(file), (e: Error) => e instanceof SimReplayError && /recorded on robot 'ur5e'/.test(e.message) && /--sim replays only rlft_arm5/.test(e.message));
});

test("open-loop replay reproduces the recorded policy's actions exactly (same version and seed); interventions are marked", async () => {
  const tr = await readEpisodeTrace(onlineFile());
  const recordedIv = tr.ticks.filter((k) => k.intervention).length;
  assert.ok(recordedIv > 0, "the scripted operator intervened");
  const r = await openLoopEval(onlineFile(), { policy: fx.dir });
  assert.equal(r.sameVersion, true);
  assert.equal(r.comparable, tr.ticks.filter((k) => k.obs.length).length);
  assert.equal(r.exact, r.comparable, `${r.exact}/${r.comparable} ticks identical`);
  assert.equal(r.steps.filter((s) => s.intervention).length, recordedIv);
  assert.equal(r.interventionSteps.steps, recordedIv);
  assert.deepEqual(r.interventionSpans, interventionSpans(tr.ticks.filter((k) => k.obs.length)));
  const plot = plotOpenLoop(r);
  assert.equal(plot.panels.length, r.jointNames.length + 1);
  assert.equal(plot.panels[0].spans!.length, r.interventionSpans.length, "intervention spans are shaded");
});

test("learner replay: transitions labelled as recorded (interventions, sources, policy version)", async () => {
  const files = [join(online, "episode_000000.mcap"), onlineFile()];
  assert.equal((await labelEpisode(demoFile())).label, "demo");
  assert.equal((await labelEpisode(onlineFile())).label, "online");
  const got: Transition[] = [];
  const r = await replayTransitions(files, { push: (t) => got.push(t) }, { min: [-2, -1.6, -2.8, -2.2, 0], max: [2, 1.6, 2.8, 2.2, 0.08] });
  let recorded = 0;
  for (const f of files) recorded += (await readEpisodeTrace(f)).ticks.filter((k) => k.intervention).length;
  assert.equal(r.episodes, 2);
  assert.deepEqual([...new Set(got.map((t) => t.episode))], [0, 1]);
  // Each episode loses only its last tick (no next observation); every recorded intervention tick is labelled.
  assert.ok(Math.abs(r.interventions - recorded) <= 2, `${r.interventions} labelled vs ${recorded} recorded`);
  assert.deepEqual(Object.keys(r.bySource), ["scripted_operator"]);
  assert.equal(got.filter((t) => t.truncated).length, 2, "each timed-out episode ends truncated");
});

test("--through-nodes: recorded topics are republished with recorded timestamps on the sim clock", async () => {
  const rt = await EmbeddedRuntime.create({ clock: "sim", logLevel: "error" });
  const node = rt.createNode("under_test");
  const seen: { stamp: number; now: number }[] = [];
  node.createSubscription(TOPICS.observation.type, TOPICS.observation.topic, (m: { header: { stamp: { sec: number; nanosec: number } } }) => seen.push({ stamp: fromTime(m.header.stamp), now: rt.clock.now() }));
  const ticks: number[] = [];
  node.createTimer(0.1, () => void ticks.push(rt.clock.now()));
  const r = await playLogs(rt, [onlineFile()]);
  await rt.shutdown();
  const tr = await readEpisodeTrace(onlineFile());
  assert.equal(seen.length, tr.counts.get(TOPICS.observation.topic));
  assert.equal(r.perTopic.get(TOPICS.observation.topic), seen.length);
  for (const s of seen) assert.ok(Math.abs(s.now - s.stamp) < 2e-9, `delivered at ${s.now} for stamp ${s.stamp}`);
  assert.ok(ticks.length >= seen.length - 1, "timers of the nodes under test run on the log's clock");
});

test("inspect and dataset stats summarise episodes", async () => {
  const tr = await readEpisodeTrace(onlineFile());
  const s = summarizeEpisode(tr);
  assert.equal(s.robot, "rlft_arm5");
  assert.ok(s.interventions.spans >= 1 && s.interventions.fraction > 0);
  assert.deepEqual(s.policyVersions.length, 1);
  assert.ok(Math.abs(s.rates.find((x) => x.topic === "/joint_states")!.hz - 10) < 0.5);
  const plot = plotEpisode(tr);
  assert.equal(plot.panels.length, tr.jointNames.length);
  assert.equal(plot.panels[0].spans!.length, s.interventions.spans);
  const [st] = await datasetStats([join(online, "episode_000000.mcap"), onlineFile(), demoFile()]);
  assert.equal(st.task, "push_cube");
  assert.equal(st.episodes, 3);
  assert.equal(st.successes, 1);
  assert.ok(st.interventionFraction > 0 && st.interventionFraction < 1);
  assert.equal(st.obs.mean.length, 12);
  assert.equal(st.action.mean.length, 5);
});

test("LeRobot export (v3.0 and v2.1) is read back by hyparquet (independent reader); video by ffprobe; import restores the episode", async () => {
  const tr = await readEpisodeTrace(demoFile());
  const ticks = tr.ticks.filter((k) => k.obs.length && k.executed.length);
  const onlineTicks = (await readEpisodeTrace(onlineFile())).ticks.filter((k) => k.obs.length && k.executed.length).length;
  const imported = join(root, "imported");
  for (const version of ["3.0", "2.1"] as const) {
    const out = join(root, `lerobot-${version}`);
    // The online episode has no camera: with the demo's camera in the dataset it is skipped, so export it alone too.
    const r = await exportLeRobot([demoFile(), onlineFile()], out, { version, warn: () => undefined });
    assert.equal(r.episodes, 1);
    assert.match(r.skipped[0], /no 32×32 rgb8 \/camera\/front\/image/);
    const info = JSON.parse(readFileSync(join(out, "meta", "info.json"), "utf8"));
    assert.equal(info.codebase_version, `v${version}`);
    assert.equal(info.fps, 10);
    assert.deepEqual(info.features["observation.state"].shape, [12]);
    assert.equal(info.features["observation.images.front"].dtype, "video");
    // The camera runs at 2 Hz from the episode's start: ticks before its first frame are left out, none paired with a later frame.
    const firstFrame = ticks.findIndex((k) => k.t >= 0.5 - 1e-9);
    assert.ok(r.droppedTicks > 0 && r.droppedTicks <= firstFrame + 1, `dropped ${r.droppedTicks}`);
    const frames = ticks.slice(r.droppedTicks);
    const dataFile = version === "3.0" ? "data/chunk-000/file-000.parquet" : "data/chunk-000/episode_000000.parquet";
    const rows = (await parquetReadObjects({ file: await asyncBufferFromFile(join(out, dataFile)) })) as Record<string, unknown>[];
    assert.equal(rows.length, frames.length);
    assert.equal(info.total_frames, rows.length);
    rows.forEach((row, i) => {
      assert.deepEqual(row["observation.state"], frames[i].obs.map(Math.fround));
      assert.deepEqual(row.action, frames[i].executed.map(Math.fround));
      assert.equal(row.frame_index, BigInt(i));
      assert.equal(row.episode_index, 0n);
      assert.equal(row.timestamp, Math.fround(i / 10));
    });
    assert.equal(rows.at(-1)!["next.reward"], 1);
    const video = join(out, version === "3.0" ? "videos/observation.images.front/chunk-000/file-000.mp4" : "videos/chunk-000/observation.images.front/episode_000000.mp4");
    const probe = spawnSync("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames,width,height", "-of", "csv=p=0", video], { encoding: "utf8" });
    assert.equal(probe.stdout.trim(), `32,32,${frames.length}`);
    const source = readFileSync(join(out, "meta", "rlft_episodes.jsonl"), "utf8");
    assert.ok(!source.includes(root), "no path of the exporting machine in meta/rlft_episodes.jsonl");
    const back = await importLeRobot(out, join(imported, version));
    assert.equal(back.episodes, 1);
    const im = await readEpisodeTrace(back.files[0]);
    assert.equal(im.info.robot, "rlft_arm5");
    assert.equal(im.info.seed, "3");
    assert.equal(im.outcome, "success");
    assert.equal(im.ticks.length, frames.length);
    im.ticks.forEach((k, i) => assert.deepEqual(k.obs, frames[i].obs.map(Math.fround)));
    assert.equal(im.counts.get("/camera/front/image"), frames.length);
  }
  const noCam = await exportLeRobot([onlineFile()], join(root, "lerobot-online"), { warn: () => undefined });
  assert.equal(noCam.frames, onlineTicks);
  assert.equal(noCam.droppedTicks, 0);
});
