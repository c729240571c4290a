import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { parse } from "@foxglove/rosmsg";
import { MessageRegistry, RLFT_INTERFACES_DIR } from "./MessageRegistry.ts";
import { GENERATED_PATH, generateTypes } from "./generate.ts";

const reg = MessageRegistry.default();
const header = { stamp: { sec: 12, nanosec: 345 }, frame_id: "base_link" };

const samples: Record<string, Record<string, unknown>> = {
  "rlft_interfaces/Observation": { header, names: ["q.a", "ee.x"], values: [0.5, -1] },
  "rlft_interfaces/ActionChunk": { header, policy_version: "v1", joint_names: ["a", "b"], horizon: 2, execute_steps: 1, positions: [1, 2, 3, 4], inference_ms: 3.5 },
  "rlft_interfaces/Intervention": { header, active: true, source: "spacemouse", action: [0.1, 0.2] },
  "rlft_interfaces/Reward": { header, reward: 1, terminal: true, source: "sim" },
  "rlft_interfaces/EpisodeEvent": { header, episode: 3, event: "success", seed: -42n, task: "push_cube", detail: "" },
  "rlft_interfaces/PolicyStatus": { header, policy_version: "v1", kind: "diffusion", state: "running", latency_p50_ms: 1.5, latency_p99_ms: 4, chunks: 99n },
  "rlft_interfaces/SafetyEvent": { header, kind: "joint_limit", detail: "x", joint_names: ["a"], requested: [3], applied: [2.6] },
  "rlft_interfaces/PolicyAction": { header, policy_version: "res-1", base_action: [0.1, -0.2], residual_action: [0.01, 0], action: [0.11, -0.2] },
  "sensor_msgs/JointState": { header, name: ["a"], position: [1], velocity: [2], effort: [3] },
  "sensor_msgs/Image": { header, height: 1, width: 2, encoding: "rgb8", is_bigendian: 0, step: 6, data: new Uint8Array([1, 2, 3, 4, 5, 6]) },
  "std_msgs/Float64MultiArray": { layout: { dim: [{ label: "x", size: 2, stride: 2 }], data_offset: 0 }, data: [1.5, 2.5] },
  "geometry_msgs/PoseStamped": { header, pose: { position: { x: 1, y: 2, z: 3 }, orientation: { x: 0, y: 0, z: 0, w: 1 } } },
  "diagnostic_msgs/DiagnosticArray": { header, status: [{ level: 1, name: "arm", message: "warm", hardware_id: "x", values: [{ key: "t", value: "41" }] }] },
};

for (const [type, msg] of Object.entries(samples)) {
  test(`CDR round trip: ${type}`, () => {
    assert.deepEqual(reg.decode(type, reg.encode(type, msg)), msg);
  });
}

test("every rlft_interfaces .msg is registered, listed in CMakeLists.txt, and has a round-trip sample", () => {
  const files = readdirSync(RLFT_INTERFACES_DIR).filter((f) => f.endsWith(".msg"));
  const cmake = readFileSync(new URL("../../interfaces/rlft_interfaces/CMakeLists.txt", import.meta.url), "utf8");
  for (const f of files) {
    const type = `rlft_interfaces/${f.slice(0, -4)}`;
    assert.ok(reg.has(type), type);
    assert.ok(cmake.includes(`"msg/${f}"`), `${f} missing from CMakeLists.txt`);
    assert.ok(samples[type], `no round-trip sample for ${type}`);
  }
});

test("schemaText is the ros2msg complete definition and parses back to the same fields", () => {
  const text = reg.schemaText("sensor_msgs/JointState");
  assert.ok(text.startsWith("std_msgs/Header header\nstring[] name\n"));
  assert.match(text, /\n={80}\nMSG: std_msgs\/Header\nbuiltin_interfaces\/Time stamp\n/);
  assert.match(text, /\n={80}\nMSG: builtin_interfaces\/Time\nint32 sec\nuint32 nanosec/);
  assert.equal(reg.schemaName("sensor_msgs/JointState"), "sensor_msgs/msg/JointState");
  for (const type of reg.types()) {
    const defs = parse(reg.schemaText(type), { ros2: true });
    const names = (d: { definitions: { name: string }[] }) => d.definitions.map((f) => f.name);
    assert.deepEqual(names(defs[0]!), names(reg.definition(type)), type);
  }
  assert.match(reg.schemaText("rlft_interfaces/EpisodeEvent"), /^# Episode lifecycle events/);
});

test("unknown type → clear error", () => {
  assert.throws(() => reg.encode("sensor_msgs/JointStates", {}), /Unknown message type "sensor_msgs\/JointStates".*rlft_interfaces\/Observation/);
});

test("contracts/msgs.generated.ts is up to date with the .msg files", () => {
  assert.equal(readFileSync(GENERATED_PATH, "utf8"), generateTypes(), "run `node --import tsx runtime/msgs/generate.ts`");
});
