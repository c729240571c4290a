import { test } from "node:test";
import assert from "node:assert/strict";
import { createRuntime } from "../index.ts";
import { ROS2_MISSING_MESSAGE, Ros2Runtime, Ros2UnavailableError } from "./Ros2Runtime.ts";

test("ros2 runtime without rclnodejs/ROS 2: one clear sentence", async () => {
  await assert.rejects(
    Ros2Runtime.create({ load: () => import("rclnodejs-not-installed" as string) }),
    (e: Error) => e instanceof Ros2UnavailableError && e.message === ROS2_MISSING_MESSAGE && e.cause !== undefined,
  );
  // The real lazy import: rclnodejs is not installed here.
  await assert.rejects(Ros2Runtime.create(), { message: ROS2_MISSING_MESSAGE });
  assert.match(ROS2_MISSING_MESSAGE, /source \/opt\/ros\/jazzy\/setup\.bash.*npm install rclnodejs.*runtime: embedded/);
});

test("createRuntime('ros2') on this machine (no ROS 2) fails with the same sentence", async () => {
  await assert.rejects(createRuntime("ros2", { load: async () => ({ init: async () => { throw new Error("RMW not sourced"); } }) }), { message: ROS2_MISSING_MESSAGE });
});

test("createRuntime('embedded') gives an embedded runtime", async () => {
  const rt = await createRuntime("embedded", { logLevel: "silent" });
  assert.equal(rt.kind, "embedded");
  await rt.shutdown();
});
