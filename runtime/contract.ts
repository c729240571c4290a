/**
 * The one behavioural contract every Runtime must meet. embedded.test.ts runs it on the embedded
 * runtime; the ROS 2 image runs it on ros2 with a harness that drives /clock.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Runtime } from "./Runtime.ts";
import { Lifecycle } from "./Lifecycle.ts";
import type { JointState } from "../contracts/msgs.generated.ts";

/** A runtime plus a way to move its sim clock. */
export interface RuntimeHarness {
  runtime: Runtime;
  /** Moves sim time forward by dtSec, awaiting timer callbacks. */
  advance(dtSec: number): Promise<void>;
}

/** Waits (without asserting on time) until `cond` holds; fails after a generous deadline. */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Registers the contract tests for one runtime. `make` must return a fresh sim-clock runtime. */
export function runtimeContract(name: string, make: () => Promise<RuntimeHarness>): void {
  const withRuntime = (title: string, fn: (h: RuntimeHarness) => Promise<void>) =>
    test(`${name}: ${title}`, async () => {
      const h = await make();
      try {
        await fn(h);
      } finally {
        await h.runtime.shutdown();
      }
    });

  withRuntime("publishes and receives sensor_msgs/JointState", async ({ runtime }) => {
    const a = runtime.createNode("talker");
    const b = runtime.createNode("listener");
    const got: JointState[] = [];
    b.createSubscription<JointState>("sensor_msgs/JointState", "/joint_states", (m) => got.push(m));
    const pub = a.createPublisher<Partial<JointState>>("sensor_msgs/JointState", "/joint_states");
    const msg = { header: { stamp: { sec: 1, nanosec: 5 }, frame_id: "base" }, name: ["a", "b"], position: [0.5, -1.25] };
    await waitFor(() => {
      if (got.length === 0) pub.publish(msg);
      return got.length > 0;
    }, "a JointState");
    assert.deepEqual(got[0]!.name, ["a", "b"]);
    assert.deepEqual(Array.from(got[0]!.position), [0.5, -1.25]);
    assert.equal(got[0]!.header.frame_id, "base");
  });

  withRuntime("transient_local: a late joiner gets the last message", async ({ runtime }) => {
    const a = runtime.createNode("latcher");
    const qos = { durability: "transient_local" as const, depth: 1 };
    const pub = a.createPublisher("rlft_interfaces/PolicyStatus", "/policy/status", qos);
    pub.publish({ policy_version: "v1", state: "ready" });
    pub.publish({ policy_version: "v2", state: "ready" });
    const b = runtime.createNode("late");
    const got: { policy_version: string }[] = [];
    b.createSubscription<{ policy_version: string }>("rlft_interfaces/PolicyStatus", "/policy/status", (m) => got.push(m), qos);
    await waitFor(() => got.length > 0, "the latched PolicyStatus");
    assert.equal(got[got.length - 1]!.policy_version, "v2");
  });

  withRuntime("sim-clock timers fire the right number of times, in order", async ({ runtime, advance }) => {
    const n = runtime.createNode("timers");
    const log: string[] = [];
    n.createTimer(0.1, () => void log.push(`fast@${n.clock.now().toFixed(2)}`));
    n.createTimer(0.25, () => void log.push(`slow@${n.clock.now().toFixed(2)}`));
    await advance(0.5);
    assert.equal(log.filter((x) => x.startsWith("fast")).length, 5);
    assert.equal(log.filter((x) => x.startsWith("slow")).length, 2);
    const times = log.map((x) => Number(x.split("@")[1]));
    assert.deepEqual(times, [...times].sort((x, y) => x - y));
  });

  withRuntime("async timer callbacks are awaited before sim time moves on", async ({ runtime, advance }) => {
    const n = runtime.createNode("async_timer");
    const seen: number[] = [];
    let running = 0;
    let overlapped = false;
    n.createTimer(0.1, async () => {
      running++;
      if (running > 1) overlapped = true;
      const t = n.clock.now();
      await new Promise((r) => setTimeout(r, 2));
      seen.push(n.clock.now() - t);
      running--;
    });
    await advance(0.3);
    assert.equal(seen.length, 3);
    assert.ok(seen.every((dt) => dt === 0), "sim time must not move while a callback is pending");
    assert.equal(overlapped, false);
  });

  withRuntime("parameters: defaults, overrides, wrong type", async ({ runtime }) => {
    const n = runtime.createNode("params", { parameters: { rate_hz: 20, joints: ["a", "b"] } });
    assert.equal(n.declareParameter("rate_hz", 10), 20);
    assert.deepEqual(n.declareParameter("joints", [] as string[]), ["a", "b"]);
    assert.equal(n.declareParameter("task", "reach"), "reach");
    assert.equal(n.getParameter<string>("task"), "reach");
    assert.throws(() => n.getParameter("nope"), /not declared/);
    const bad = runtime.createNode("bad_params", { parameters: { rate_hz: "fast" } });
    assert.throws(() => bad.declareParameter("rate_hz", 10), /rate_hz/);
  });

  withRuntime("lifecycle transitions, invalid ones throw", async ({ runtime }) => {
    const calls: string[] = [];
    const lc = new Lifecycle(runtime.createNode("managed"), {
      onConfigure: () => void calls.push("configure"),
      onActivate: () => void calls.push("activate"),
      onDeactivate: () => void calls.push("deactivate"),
      onShutdown: () => void calls.push("shutdown"),
    });
    assert.equal(lc.state, "unconfigured");
    await assert.rejects(lc.activate(), /Cannot activate node "managed": it is unconfigured/);
    await lc.configure();
    assert.equal(lc.state, "inactive");
    await lc.activate();
    assert.equal(lc.state, "active");
    await assert.rejects(lc.configure(), /Cannot configure/);
    await lc.deactivate();
    await lc.activate();
    await lc.shutdown();
    assert.equal(lc.state, "finalized");
    assert.deepEqual(calls, ["configure", "activate", "deactivate", "activate", "deactivate", "shutdown"]);
  });

  withRuntime("unknown message type → clear error", async ({ runtime }) => {
    const n = runtime.createNode("typos");
    assert.throws(() => n.createPublisher("sensor_msgs/JointStates", "/x"), /Unknown message type "sensor_msgs\/JointStates"/);
    assert.throws(() => n.createSubscription("foo/Bar", "/y", () => undefined), /Unknown message type "foo\/Bar"/);
  });
}
