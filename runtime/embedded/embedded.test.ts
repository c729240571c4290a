import { test } from "node:test";
import assert from "node:assert/strict";
import { runtimeContract, waitFor } from "../contract.ts";
import { EmbeddedRuntime } from "./EmbeddedRuntime.ts";
import { SimClock } from "./SimClock.ts";
import { ZmqProxy } from "./ZmqProxy.ts";

runtimeContract("embedded", async () => {
  const runtime = await EmbeddedRuntime.create({ clock: "sim", logLevel: "silent" });
  return { runtime, advance: (dt) => runtime.simClock.advance(dt) };
});

test("embedded: a topic has one type; publish checks fields", async () => {
  const rt = await EmbeddedRuntime.create({ logLevel: "silent" });
  const n = rt.createNode("n");
  const pub = n.createPublisher("sensor_msgs/JointState", "/joint_states");
  assert.throws(() => n.createPublisher("std_msgs/String", "/joint_states"), /carries sensor_msgs\/JointState, but this publisher uses std_msgs\/String/);
  assert.throws(() => pub.publish({ positions: [1] }), /unknown field "positions"/);
  await rt.shutdown();
});

test("embedded: a throwing subscriber is logged, others still receive", async () => {
  const lines: string[] = [];
  const rt = await EmbeddedRuntime.create({ logLevel: "error", logSink: (_l, line) => lines.push(line) });
  const n = rt.createNode("n");
  let ok = 0;
  n.createSubscription("std_msgs/String", "/s", () => {
    throw new Error("boom");
  });
  n.createSubscription("std_msgs/String", "/s", () => void ok++);
  n.createPublisher("std_msgs/String", "/s").publish({ data: "x" });
  assert.equal(ok, 1);
  assert.match(lines[0]!, /\[ERROR\] \[n\] subscription callback on \/s threw: Error: boom/);
  await rt.shutdown();
});

test("SimClock: runUntil, cancel, and a failing timer rejects advance with its name", async () => {
  const c = new SimClock();
  let n = 0;
  const t = c.createTimer(1, () => void n++);
  await c.runUntil(3.5);
  assert.equal(n, 3);
  assert.equal(c.now(), 3.5);
  t.cancel();
  await c.advance(5);
  assert.equal(n, 3);
  c.createTimer(1, () => {
    throw new Error("bad");
  }, "timer of node x");
  await assert.rejects(c.advance(1), /timer of node x failed at sim time 9\.5/);
});

test("wall clock timers run on real time", async () => {
  const rt = await EmbeddedRuntime.create({ clock: "wall", logLevel: "silent" });
  const n = rt.createNode("w");
  let ticks = 0;
  n.createTimer(0.005, () => void ticks++);
  await waitFor(() => ticks >= 2, "two wall-clock ticks");
  assert.equal(rt.clock.kind, "wall");
  await rt.shutdown();
});

test("ZeroMQ bridge: two runtimes share topics through a proxy on 127.0.0.1", async () => {
  const proxy = await ZmqProxy.start();
  const bus = { xsub: proxy.xsubEndpoint, xpub: proxy.xpubEndpoint };
  const a = await EmbeddedRuntime.create({ logLevel: "silent", bus: { ...bus, publish: ["/joint_states"], subscribe: ["/joint_command"] } });
  const b = await EmbeddedRuntime.create({ logLevel: "silent", bus: { ...bus, publish: ["/joint_command"], subscribe: ["/joint_states"] } });
  try {
    const got: { name: string[]; position: number[] }[] = [];
    const cmds: unknown[] = [];
    b.createNode("listener").createSubscription<{ name: string[]; position: number[] }>("sensor_msgs/JointState", "/joint_states", (m) => got.push(m));
    a.createNode("cmd_listener").createSubscription("sensor_msgs/JointState", "/joint_command", (m) => cmds.push(m));
    const pubA = a.createNode("driver").createPublisher("sensor_msgs/JointState", "/joint_states");
    const pubB = b.createNode("policy").createPublisher("sensor_msgs/JointState", "/joint_command");
    // PUB/SUB drops messages until the subscription has propagated: publish until one arrives.
    await waitFor(() => {
      pubA.publish({ name: ["j1"], position: [0.25] });
      pubB.publish({ name: ["j1"], position: [1.5] });
      return got.length > 0 && cmds.length > 0;
    }, "messages across the bridge");
    assert.deepEqual(got[0], { header: { stamp: { sec: 0, nanosec: 0 }, frame_id: "" }, name: ["j1"], position: [0.25], velocity: [], effort: [] });
    // Own messages do not come back: a's local /joint_states only has what a published.
    assert.ok(a.bridge!.stats.sent > 0 && b.bridge!.stats.received > 0);
  } finally {
    await a.shutdown();
    await b.shutdown();
    await proxy.close();
  }
});
