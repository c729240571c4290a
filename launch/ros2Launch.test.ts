/**
 * The ROS 2 launch files: every one parses, names existing node executables with valid parameters; the sim
 * launch's executables, built exactly as `rlft node` builds them, run an episode together (here on one
 * embedded runtime; test/ros2Contract.test.ts runs them as separate processes on ROS 2).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { readRos2Launch } from "./ros2LaunchXml.ts";
import { NODE_EXECUTABLES, checkParams, type ManagedNode } from "./nodeExecutables.ts";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { EpisodeReader } from "../recording/EpisodeReader.ts";

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
  assert.equal(armNode.params.calibration, "data/calibration/so100_follower.json");
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
