import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { parseLaunch, LaunchConfigError } from "./LaunchConfig.ts";

test("the shipped launch file parses", () => {
  const cfg = parseLaunch(readFileSync("launch/sim_push.yaml", "utf8"), "launch/sim_push.yaml");
  assert.equal(cfg.task, "push_cube");
  assert.equal(cfg.actor.kind, "policy");
});

test("defaults fill an empty file", () => {
  const cfg = parseLaunch("", "x.yaml");
  assert.equal(cfg.runtime, "embedded");
  assert.equal(cfg.camera.width, 64);
});

test("unknown key names file, line and key", () => {
  const text = "task: push_cube\ncamera:\n  enabled: true\n  fps: 30\n";
  assert.throws(() => parseLaunch(text, "bad.yaml"), (e: unknown) => {
    assert.ok(e instanceof LaunchConfigError);
    assert.match(e.message, /bad\.yaml:4: unknown key 'camera\.fps'/);
    assert.match(e.message, /rate_hz/);
    return true;
  });
});

test("wrong value names file, line and key", () => {
  assert.throws(() => parseLaunch("task: push_cube\ncontrol_hz: -3\n", "bad.yaml"), /bad\.yaml:2: control_hz:/);
  assert.throws(() => parseLaunch("task: fly\n", "bad.yaml"), /bad\.yaml:1: task:/);
});

test("YAML syntax error names file and line", () => {
  assert.throws(() => parseLaunch("task: [push\n", "bad.yaml"), /bad\.yaml:\d+:\d+: YAML syntax error/);
});

test("actor.indicator defaults to auto and rejects values it does not know", () => {
  assert.equal(parseLaunch("", "x.yaml").actor.indicator, "auto");
  assert.equal(parseLaunch("actor:\n  indicator: positive\n", "x.yaml").actor.indicator, "positive");
  assert.throws(() => parseLaunch("actor:\n  indicator: good\n", "bad.yaml"), /bad\.yaml:2: actor\.indicator:/);
});

test("actor.noise_scale is checked by the policies' own check (policies/gaussian.ts noiseScaleProblem)", () => {
  assert.equal(parseLaunch("actor:\n  noise_scale: 0.5\n", "x.yaml").actor.noise_scale, 0.5);
  assert.equal(parseLaunch("", "x.yaml").actor.noise_scale, 1);
  assert.throws(() => parseLaunch("actor:\n  noise_scale: 3\n", "bad.yaml"), /bad\.yaml:2: actor\.noise_scale: noise_scale 3: the sampling temperature must be in \[0, 2\]/);
});

test("limits that would switch a protection off are refused with file, line, the bound and what it protects", async () => {
  const { PHYSICAL_BOUNDS } = await import("../contracts/physicalBounds.ts");
  // Issue 24 item 9: these parsed and, in effect, disabled the step clamp and the watchdog.
  const cases: [string, string, keyof typeof PHYSICAL_BOUNDS][] = [
    ["safety:\n  max_step: 1e308\n", "safety.max_step", "step_clamp"],
    ["safety:\n  watchdog_sec: 1e300\n", "safety.watchdog_sec", "command_watchdog"],
    ["safety:\n  max_step: [0.1, 0.1, 1e308, 0.1, 0.1]\n", "safety.max_step.2", "step_clamp"],
    ["safety:\n  max_step: [0.1, -0.1]\n", "safety.max_step.1", "step_clamp"],
    ["safety:\n  max_velocity: 1e9\n", "safety.max_velocity", "joint_velocity"],
    ["safety:\n  max_acceleration: [1e9]\n", "safety.max_acceleration.0", "joint_acceleration"],
    ["control_hz: 1e-9\n", "control_hz", "control_rate"],
    ["reset:\n  max_speed: 100\n", "reset.max_speed", "homing_speed"],
    ["actor:\n  max_image_age_sec: 1e9\n", "actor.max_image_age_sec", "frame_age"],
    ["driver:\n  kind: ur_rtde\n  watchdog_sec: 60\n", "driver.watchdog_sec", "controller_watchdog"],
    ["driver:\n  kind: ros2_control\n  joints: [a]\n  lower: [-1]\n  upper: [1]\n  stale_sec: 1e9\n", "driver.stale_sec", "reading_age"],
    // Joint limits of 1e308 clamp nothing: every driver's limits are inside one turn.
    ["driver:\n  kind: feetech\n  joints:\n    - {name: a, id: 1, lower: -1, upper: 1e308}\n", "driver.joints.0.upper", "joint_range"],
    ["driver:\n  kind: dynamixel\n  joints:\n    - name: a\n      id: 1\n      lower: -1e308\n      upper: 1\n", "driver.joints.0.lower", "joint_range"],
    ["driver:\n  kind: ros2_control\n  joints: [a]\n  lower: [-1]\n  upper: [1e308]\n", "driver.upper.0", "joint_range"],
    ["driver:\n  kind: ur_rtde\n  host: 10.0.0.2\n  lower: [-1e308, -1, -1, -1, -1, -1]\n", "driver.lower.0", "joint_range"],
    ["driver:\n  kind: ur_rtde\n  host: 10.0.0.2\n  upper: [1, 1, 1, 1, 1, 7]\n", "driver.upper.5", "joint_range"],
  ];
  for (const [text, key, bound] of cases) {
    const line = text.split("\n").findIndex((l) => l.includes(key.split(".").filter((k) => !/^\d+$/.test(k)).pop()!)) + 1;
    assert.throws(() => parseLaunch(text, "limits.yaml"), (e: unknown) => {
      assert.ok(e instanceof LaunchConfigError);
      assert.match(e.message, new RegExp(`^limits\\.yaml:${line}: ${key.replaceAll(".", "\\.")}: .* is outside the bound ${bound} \\(in [(\\[].*\\] .*\\) that protects `), `${key}: ${e.message}`);
      assert.ok(e.message.includes(PHYSICAL_BOUNDS[bound].protects));
      return true;
    });
  }
  // Every shipped launch file is inside every bound.
  for (const f of ["sim_push", "so100", "koch", "ur5e", "ros2_control"]) parseLaunch(readFileSync(`launch/${f}.yaml`, "utf8"), `launch/${f}.yaml`);
  // The edges are allowed.
  const edge = parseLaunch("control_hz: 1000\nsafety: {max_step: 1, watchdog_sec: 2, max_velocity: 12}\n", "x.yaml");
  assert.equal(edge.safety.max_step, 1);
  // One turn each way is allowed (the UR default is ±2π).
  assert.deepEqual(parseLaunch("driver:\n  kind: ros2_control\n  joints: [a]\n  lower: [-6.3]\n  upper: [6.3]\n", "x.yaml").driver, parseLaunch("driver: {kind: ros2_control, joints: [a], lower: [-6.3], upper: [6.3]}\n", "x.yaml").driver);
});
