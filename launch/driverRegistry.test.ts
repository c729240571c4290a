/**
 * The driver registry (hardware/registry.ts): every registered kind parses its own example block, is reached from a
 * launch file's `driver:` block, builds its driver through the registry (no device is opened before configure), and
 * names the joints a policy commands.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { stringify } from "yaml";
import { DRIVERS, DRIVER_KINDS, createArmDriver, driverEntry, driverJoints, driverOwnsJointStates } from "../hardware/registry.ts";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { parseLaunch } from "./LaunchConfig.ts";

const quiet = { info: () => undefined, warn: () => undefined };
const ros2ControlExample = () => driverEntry("ros2_control").example;

test("driver kinds are unique and each entry's kind is its schema's literal", () => {
  assert.equal(new Set(DRIVER_KINDS).size, DRIVERS.length, `duplicate kinds: ${DRIVER_KINDS.join(", ")}`);
  for (const d of DRIVERS) assert.equal(d.configSchema.shape.kind.value, d.kind);
});

for (const entry of DRIVERS) {
  test(`driver ${entry.kind}: its example parses, a launch file reaches it, the registry builds it with the joints it declares`, async () => {
    const block = { kind: entry.kind, ...entry.example };
    const own = entry.configSchema.safeParse(block);
    assert.ok(own.success, `${entry.kind} example: ${own.success ? "" : own.error.message}`);
    const file = stringify({ clock: entry.kind === "sim" ? "sim" : "wall", actor: { kind: "policy", package: "unused" }, driver: block });
    const cfg = parseLaunch(file, `${entry.kind}.yaml`);
    assert.equal(cfg.driver.kind, entry.kind);
    assert.deepEqual(cfg.driver, own.data, "the launch file's driver block is the entry's own parse");
    const ctx = { robot: cfg.robot, task: cfg.task, armCalibration: cfg.calibration.arm };
    const joints = driverJoints(cfg.driver, ctx);
    assert.ok(joints.length > 0 && joints.every((j) => j.lower < j.upper), `${entry.kind}: joints ${JSON.stringify(joints)}`);
    const rt = await EmbeddedRuntime.create({ clock: "wall", logLevel: "error" });
    try {
      const driver = await createArmDriver(cfg.driver, { ...ctx, node: () => rt.createNode("arm_bridge"), logger: quiet, controlHz: cfg.control_hz });
      try {
        assert.equal(driver.state, "unconfigured");
        assert.deepEqual([...driver.jointNames], joints.map((j) => j.name));
        assert.deepEqual([...driver.jointLower], joints.map((j) => j.lower));
      } finally {
        await driver.close?.();
        (driver as { sim?: { close(): void } }).sim?.close();
      }
    } finally {
      await rt.shutdown();
    }
  });
}

test("only a driver whose device publishes /joint_states itself keeps the driver node from publishing them", () => {
  const owners = DRIVERS.filter((d) => driverOwnsJointStates(parseLaunch(stringify({ clock: "wall", driver: { kind: d.kind, ...d.example } })).driver)).map((d) => d.kind);
  assert.deepEqual(owners, ["ros2_control"]);
  const elsewhere = parseLaunch(stringify({ clock: "wall", driver: { kind: "ros2_control", ...ros2ControlExample(), state_topic: "/arm/joint_states" } })).driver;
  assert.equal(driverOwnsJointStates(elsewhere), false, "state read from another topic: the stack republishes /joint_states");
});

test("a driver kind that is not registered is refused with the registered kinds", () => {
  assert.throws(() => parseLaunch("driver:\n  kind: kuka\n", "bad.yaml"), new RegExp(`driver\\.kind.*${DRIVER_KINDS.slice(0, 2).join(".*")}`, "s"));
});
