/** The driver block of launch files: per-kind settings, defaults, and errors that name file, line and key. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseLaunch, loadLaunch } from "./LaunchConfig.ts";

test("launch/so100.yaml parses to a Feetech driver with six joints", () => {
  const cfg = loadLaunch("launch/so100.yaml");
  assert.equal(cfg.driver.kind, "feetech");
  if (cfg.driver.kind !== "feetech") return;
  assert.deepEqual(cfg.driver.joints.map((j) => j.id), [1, 2, 3, 4, 5, 6]);
  assert.equal(cfg.driver.baud, 1_000_000);
  assert.equal(cfg.clock, "wall");
});

test("a driver block without kind is the sim (older launch files keep working)", () => {
  const cfg = parseLaunch("driver:\n  randomize_physics: true\n", "x.yaml");
  assert.deepEqual(cfg.driver, { kind: "sim", randomize_physics: true });
  assert.equal(parseLaunch("", "x.yaml").driver.kind, "sim");
});

test("per-kind defaults: ur_rtde at 500 Hz on 30004, ros2_control forward commands", () => {
  const ur = parseLaunch("driver:\n  kind: ur_rtde\n  host: 10.0.0.2\n", "x.yaml").driver;
  assert.ok(ur.kind === "ur_rtde" && ur.port === 30004 && ur.frequency === 500 && ur.joints.length === 6);
  const rc = parseLaunch("driver:\n  kind: ros2_control\n  joints: [a, b]\n  lower: [-1, -1]\n  upper: [1, 1]\n", "x.yaml").driver;
  assert.ok(rc.kind === "ros2_control" && rc.command === "forward" && rc.state_topic === "/joint_states");
});

test("driver errors name file, line and key, with the keys of that driver kind", () => {
  assert.throws(() => parseLaunch("driver:\n  kind: feetech\n  prot: /dev/ttyACM0\n  joints: [{name: a, id: 1, lower: -1, upper: 1}]\n", "bad.yaml"), /bad\.yaml:3: unknown key 'driver\.prot' \(allowed: kind, port, loop_hz/);
  assert.throws(() => parseLaunch("driver:\n  kind: ur_rtde\n  frequency: 250\n", "bad.yaml"), /bad\.yaml:3: driver\.frequency/);
  assert.throws(() => parseLaunch("driver:\n  kind: feetech\n  joints: [{name: a, id: 1, lower: 1, upper: -1}]\n", "bad.yaml"), /lower must be below upper/);
  assert.throws(() => parseLaunch("driver:\n  kind: kuka\n", "bad.yaml"), /bad\.yaml:\d+: driver\.kind/);
});

test("every shipped real-arm launch file parses, and its limits fit its joints", async () => {
  const { motionLimits } = await import("./safetyLimits.ts");
  for (const f of ["launch/so100.yaml", "launch/koch.yaml", "launch/ur5e.yaml", "launch/ros2_control.yaml"]) {
    const cfg = loadLaunch(f);
    assert.notEqual(cfg.driver.kind, "sim", f);
    assert.equal(cfg.clock, "wall", f);
    const d = cfg.driver;
    const names = d.kind === "feetech" || d.kind === "dynamixel" ? d.joints.map((j) => j.name) : d.kind === "ur_rtde" || d.kind === "ros2_control" ? d.joints : [];
    assert.ok(names.length >= 6, f);
    motionLimits(cfg.safety, names, cfg.control_hz);
  }
});
