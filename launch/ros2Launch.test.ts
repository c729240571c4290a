/**
 * The ROS 2 launch files: every one parses, names existing node executables with valid parameters; the sim
 * launch's executables, built exactly as `rlft node` builds them, run an episode together (here on one
 * embedded runtime; test/ros2Contract.test.ts runs them as separate processes on ROS 2).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { readRos2Launch } from "./ros2LaunchXml.ts";
import { NODE_EXECUTABLES, checkParams, type ManagedNode } from "./nodeExecutables.ts";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { EpisodeReader } from "../recording/EpisodeReader.ts";
import { driverConfigFromParams } from "./driverFromParams.ts";
import type { ArmDriverParams } from "../hardware/driverEntry.ts";
import { openPtyPair, socatBin } from "../hardware/transport/PtyPair.ts";
import { SerialTransport } from "../hardware/transport/SerialTransport.ts";
import { ServoBusSim } from "../hardware/servo/ServoBusSim.ts";
import { feetechProtocol } from "../hardware/feetech/feetechProtocol.ts";
import { STS3215 } from "../hardware/feetech/STS3215.ts";
import { saveArmCalibration } from "../calibration/ArmCalibration.ts";

const dir = "launch/ros2";
const files = readdirSync(dir).filter((f) => f.endsWith(".launch.xml")).sort();

test("ROS 2 launch files: the sim and every supported arm, each a set of `rlft node` executables with valid parameters", () => {
  assert.deepEqual(files, ["koch.launch.xml", "ros2_control.launch.xml", "sim.launch.xml", "so100.launch.xml", "ur.launch.xml"]);
  const drivers: Record<string, string> = {};
  for (const f of files) {
    const nodes = readRos2Launch(join(dir, f));
    for (const n of nodes) assert.ok(NODE_EXECUTABLES[n.executable], `${f}: ${n.executable}`);
    const names = nodes.map((n) => n.executable);
    for (const required of ["recorder", "intervention_arbiter", "safety_supervisor", "episode_manager"]) assert.ok(names.includes(required), `${f} lacks ${required}`);
    const arm = nodes.find((n) => n.executable === "arm_driver");
    drivers[f] = arm ? String(arm.params.driver) : "sim";
  }
  assert.deepEqual(drivers, { "koch.launch.xml": "dynamixel", "ros2_control.launch.xml": "ros2_control", "sim.launch.xml": "sim", "so100.launch.xml": "feetech", "ur.launch.xml": "ur_rtde" });
  const so100 = readRos2Launch(join(dir, "so100.launch.xml"), { port: "/dev/ttyUSB3" });
  const armNode = so100.find((n) => n.executable === "arm_driver")!;
  assert.equal(armNode.params.port, "/dev/ttyUSB3");
  assert.equal(armNode.params.calibration, "runs/calibration/so100_follower.json");
  // if/unless pick the actor.
  assert.ok(readRos2Launch(join(dir, "sim.launch.xml")).some((n) => n.executable === "expert"));
  const withPolicy = readRos2Launch(join(dir, "sim.launch.xml"), { use_policy: "true" });
  assert.ok(withPolicy.some((n) => n.executable === "policy") && !withPolicy.some((n) => n.executable === "expert"));
});

test("node parameters: unknown keys and wrong types name the executable and the accepted parameters", () => {
  assert.throws(() => checkParams("sim", { tsak: "reach" }), /sim: unknown parameter\(s\) tsak \(parameters: task, control_hz/);
  assert.throws(() => checkParams("safety_supervisor", { max_step: "big" }), /safety_supervisor: max_step: /);
  assert.throws(() => checkParams("camera_v5", {}), /Unknown node executable "camera_v5" \(available: sim, arm_driver/);
});

test("launch XML is read as XML: quotes, entities, '>' in values and comments mean what they mean to ros2 launch", () => {
  const d = mkdtempSync(join(tmpdir(), "rlft-launchxml-"));
  const write = (name: string, xml: string) => (writeFileSync(join(d, name), xml), join(d, name));
  const ok = write(
    "ok.launch.xml",
    `<?xml version="1.0"?>
<launch>
  <!-- <executable name="ghost" cmd="rlft node sim"/> is only a comment -->
  <arg name='task' default='push_cube' description="one of: reach | push_cube > peg_insert &amp; more"/>
  <arg name="on" default="false"/>
  <executable name="sim" cmd="rlft node sim --param task=$(var task)" output="log > screen"/>
  <executable name="expert" cmd="rlft node expert --param task=$(var task)" if="$(var on)"/>
</launch>`,
  );
  assert.deepEqual(readRos2Launch(ok).map((n) => [n.name, n.params.task]), [["sim", "push_cube"]]);
  assert.deepEqual(readRos2Launch(ok, { on: "true" }).map((n) => n.name), ["sim", "expert"]);
  assert.throws(() => readRos2Launch(write("bad.launch.xml", `<launch><arg name="a" default="1"></launch>`)), /bad\.launch\.xml: not well-formed XML/);
  assert.throws(() => readRos2Launch(write("other.xml", `<robot name="x"/>`)), /not a ROS 2 launch file/);
});

test("the sim launch's executables run an episode together and record it", async () => {
  const out = mkdtempSync(join(tmpdir(), "rlft-ros2-sim-"));
  const launched = readRos2Launch(join(dir, "sim.launch.xml"), { task: "reach", out, episodes: "2", seed: "7" });
  const rt = await EmbeddedRuntime.create({ clock: "sim", logLevel: "error" });
  const nodes: ManagedNode[] = [];
  const closers: (() => Promise<void>)[] = [];
  let done: Promise<void> | undefined;
  for (const l of launched) {
    const params = l.executable === "episode_manager" ? { ...l.params, start_delay_sec: 0, max_steps: 40 } : l.params;
    const s = await NODE_EXECUTABLES[l.executable].start(rt, params);
    nodes.push(...s.nodes);
    if (s.close) closers.push(s.close);
    done ??= s.done;
  }
  for (const n of nodes) await n.configure();
  for (const n of nodes) await n.activate();
  assert.ok(done, "the episode manager runs a fixed number of episodes");
  let finished = false;
  void done.then(() => (finished = true));
  await new Promise((r) => setTimeout(r, 5)); // the start delay (0 s) elapses on the wall clock
  for (let k = 0; k < 2000 && !finished; k++) await rt.simClock.advance(0.1);
  assert.ok(finished, "both episodes ended");
  for (const n of [...nodes].reverse()) await n.shutdown();
  for (const c of closers) await c();
  await rt.shutdown();
  const mcaps = readdirSync(out).filter((f) => f.endsWith(".mcap")).sort();
  assert.deepEqual(mcaps, ["episode_000000.mcap", "episode_000001.mcap"]);
  const r = await EpisodeReader.open(join(out, mcaps[0]));
  assert.equal(r.metadata.get("rlft.episode")!.robot, "rlft_arm5");
  assert.ok(r.topics().some((t) => t.topic === "/joint_states"));
  await r.close();
});

test("rlft node with a misspelt parameter fails with one clear line (the real command line)", () => {
  const bad = spawnSync(process.execPath, ["bin/rlft.js", "node", "sim", "--param", "tsak=reach"], { encoding: "utf8" });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /sim: unknown parameter\(s\) tsak \(parameters: task, control_hz/);
});

const REAL = ["koch.launch.xml", "ros2_control.launch.xml", "so100.launch.xml", "ur.launch.xml"];

test("real-arm launch files: a registered driver whose parameters make a valid driver block, joint_observation, a camera, a policy on joint observations", () => {
  for (const f of REAL) {
    const nodes = readRos2Launch(join(dir, f));
    const names = nodes.map((n) => n.executable);
    for (const required of ["arm_driver", "joint_observation", "camera", "policy"]) assert.ok(names.includes(required), `${f} lacks ${required}`);
    const arm = nodes.find((n) => n.executable === "arm_driver")!;
    const params = checkParams("arm_driver", arm.params) as unknown as ArmDriverParams;
    const { driver } = driverConfigFromParams(params);
    assert.equal(driver.kind, params.driver, f);
    const policy = checkParams("policy", nodes.find((n) => n.executable === "policy")!.params);
    assert.equal(policy.observation, "joints", f);
    const obs = checkParams("joint_observation", nodes.find((n) => n.executable === "joint_observation")!.params);
    assert.deepEqual(obs.joint_names, params.joint_names, `${f}: joint_observation and arm_driver name the same joints`);
    checkParams("camera", nodes.find((n) => n.executable === "camera")!.params);
    assert.ok(!readRos2Launch(join(dir, f), { camera: "false" }).some((n) => n.executable === "camera"), `${f}: camera:=false drops the camera`);
  }
  const rc = driverConfigFromParams(checkParams("arm_driver", readRos2Launch(join(dir, "ros2_control.launch.xml"), { controller: "joint_trajectory_controller" }).find((n) => n.executable === "arm_driver")!.params) as unknown as ArmDriverParams);
  assert.ok(rc.driver.kind === "ros2_control" && rc.driver.command === "trajectory" && rc.driver.command_topic === "/joint_trajectory_controller/joint_trajectory");
  // The same driver block as the YAML launch file, by name.
  const fromYaml = driverConfigFromParams({ driver: "feetech", launch: "launch/so100.yaml", port: "/dev/ttyUSB7", joint_names: [] });
  assert.ok(fromYaml.driver.kind === "feetech" && fromYaml.driver.port === "/dev/ttyUSB7" && fromYaml.driver.joints.length === 6);
  assert.throws(() => driverConfigFromParams({ driver: "feetech", joint_names: ["a"] }), /needs calibration=<rlft calibrate arm file>/);
});

test("so100.launch.xml's arm_driver + joint_observation on a simulated Feetech bus: calibrated /joint_states and /observation", { skip: socatBin() ? false : "socat is not installed" }, async () => {
  const tmp = mkdtempSync(join(tmpdir(), "rlft-ros2-so100-"));
  const names = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];
  const cal = join(tmp, "so100.json");
  // Middle pose at raw 2148 on every joint, so the sim's start (2048) reads −100 ticks.
  saveArmCalibration(cal, { format: "rlft-arm-calibration", version: 1, robot: "so100_follower", created_at: "test", joints: Object.fromEntries(names.map((n) => [n, { drive_mode: 0, homing_offset: 101, range_min: 1000, range_max: 3000, resolution: 4096 }])) });
  const pty = await openPtyPair();
  const side = await SerialTransport.open(pty.b, { baudRate: 1_000_000 });
  const sim = new ServoBusSim(side, { protocol: feetechProtocol, model: STS3215, ids: [1, 2, 3, 4, 5, 6] });
  const rt = await EmbeddedRuntime.create({ clock: "wall", logLevel: "error" });
  const nodes: ManagedNode[] = [];
  const closers: (() => Promise<void>)[] = [];
  try {
    for (const l of readRos2Launch(join(dir, "so100.launch.xml"), { port: pty.a, calibration: cal })) {
      if (l.executable !== "arm_driver" && l.executable !== "joint_observation") continue;
      const s = await NODE_EXECUTABLES[l.executable].start(rt, l.params);
      nodes.push(...s.nodes);
      if (s.close) closers.push(s.close);
    }
    const seen = new Promise<{ names: string[]; values: ArrayLike<number> }>((resolve) => {
      rt.createNode("probe").createSubscription<{ names: string[]; values: ArrayLike<number> }>("rlft_interfaces/msg/Observation", "/observation", resolve);
    });
    for (const n of nodes) await n.configure();
    for (const n of nodes) await n.activate();
    const obs = await seen;
    assert.deepEqual(obs.names, names.map((n) => `q.${n}`));
    for (const v of Array.from(obs.values)) assert.ok(Math.abs(v - (-100 * 2 * Math.PI) / 4096) < 1e-9, `q = ${v}`);
  } finally {
    for (const n of [...nodes].reverse()) await n.shutdown();
    for (const c of closers) await c();
    await rt.shutdown();
    sim.dispose();
    await side.close();
    await pty.close();
  }
});
