// An episode boundary or a shutdown while the actor's decision is in flight (the pixel-policy bench on the wall clock
// aborted the process there): the decision finishes first, its action is never published into the next episode, the
// actor is reset only after it, and shutdown returns only once it is done (so its inference worker is idle when closed).
import { test } from "node:test";
import assert from "node:assert/strict";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { ActorNode } from "./ActorNode.ts";
import type { Actor } from "../policies/actors/Actor.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header, type JointStateMsg } from "../contracts/msgs.ts";

/** An actor whose decisions finish when the test says so; it records what happens, in order. */
class SlowActor implements Actor {
  readonly jointNames = ["a", "b"];
  readonly log: string[] = [];
  #settle: { resolve(a: number[]): void; reject(e: Error): void } | null = null;
  reset(seed: number): void {
    this.log.push(`reset ${seed}`);
  }
  act(obs: { values: number[] }): Promise<number[]> {
    this.log.push(`act ${obs.values[0]}`);
    return new Promise((resolve, reject) => (this.#settle = { resolve, reject }));
  }
  finish(action: number[] | Error): void {
    const s = this.#settle!;
    this.#settle = null;
    this.log.push("settled");
    if (action instanceof Error) s.reject(action);
    else s.resolve(action);
  }
}

async function setUp(opts: { clock?: "sim" | "wall"; trigger?: "observation" | "timer" } = {}) {
  const rt = await EmbeddedRuntime.create({ clock: opts.clock ?? "sim", logLevel: "error" });
  const actor = new SlowActor();
  const node = new ActorNode(rt.createNode("policy"), actor, { controlHz: 10, trigger: opts.trigger });
  await node.configure();
  const probe = rt.createNode("probe");
  const pubObs = probe.createPublisher(TOPICS.observation.type, TOPICS.observation.topic);
  const pubEvent = probe.createPublisher(TOPICS.episodeEvent.type, TOPICS.episodeEvent.topic);
  const commands: number[][] = [];
  probe.createSubscription<JointStateMsg>(TOPICS.proposedCommand.type, TOPICS.proposedCommand.topic, (m) => commands.push(Array.from(m.position)));
  let t = 0;
  const observe = (v: number) => pubObs.publish({ header: header({ sec: ++t, nanosec: 0 }), names: ["q.a", "q.b"], values: [v, 0] });
  const reset = (seed: number) => pubEvent.publish({ header: header({ sec: t, nanosec: 0 }), episode: seed, event: "reset", seed: BigInt(seed), task: "push_cube", detail: "" });
  return { rt, actor, node, observe, reset, commands };
}

test("ActorNode: a reset during an in-flight decision waits for it, drops its action and then resets the actor", async () => {
  const { rt, actor, node, observe, reset, commands } = await setUp();
  try {
    observe(1);
    const first = node.tick();
    reset(7); // the episode ends while the policy computes
    observe(2);
    await node.tick(); // no second decision while one is in flight
    assert.deepEqual(actor.log, ["act 1"], "the actor is neither reset nor asked again under a running decision");
    actor.finish([0.5, 0.5]);
    await first;
    assert.deepEqual(actor.log, ["act 1", "settled", "reset 7"]);
    assert.deepEqual(commands, [], "the old episode's action never reaches the new episode (the arm holds)");
    assert.equal(node.dropped, 1);
    assert.equal(node.errors, 0);

    // The same when the dropped decision fails (e.g. its inference was cancelled): not an error of the new episode.
    observe(3);
    const second = node.tick();
    reset(8);
    actor.finish(new Error("ActionChunker: reset() during next()"));
    await second;
    assert.equal(node.errors, 0);
    assert.equal(node.dropped, 2);

    // The new episode acts normally.
    observe(4);
    const third = node.tick();
    actor.finish([0.1, 0.2]);
    await third;
    assert.deepEqual(commands, [[0.1, 0.2]]);
    assert.deepEqual(actor.log.slice(-3), ["reset 8", "act 4", "settled"]);
  } finally {
    await node.shutdown();
    await rt.shutdown();
  }
});

test("ActorNode: shutdown during an in-flight decision returns only after it finished", async () => {
  const { rt, actor, node, observe } = await setUp();
  observe(1);
  const tick = node.tick();
  const down = node.shutdown().then(() => actor.log.push("shut down"));
  await new Promise((r) => setImmediate(r));
  actor.finish([0, 0]);
  await Promise.all([tick, down]);
  assert.deepEqual(actor.log, ["act 1", "settled", "shut down"]);
  await rt.shutdown();
});

/** Resolves after the microtasks and one macrotask turn: what a subscription-triggered decision needs to start or finish. */
const settle = () => new Promise((r) => setImmediate(r));

test("ActorNode on a wall clock acts when the observation arrives (no timer), one decision at a time, then the newest", async () => {
  const { rt, actor, node, observe, commands } = await setUp({ clock: "wall" });
  await node.activate();
  try {
    observe(1);
    await settle();
    assert.deepEqual(actor.log, ["act 1"], "the observation's callback started the decision");
    observe(2);
    observe(3); // both arrive while it runs
    await settle();
    assert.deepEqual(actor.log, ["act 1"]);
    actor.finish([1, 1]);
    await settle();
    assert.deepEqual(actor.log, ["act 1", "settled", "act 3"], "then the newest observation, once");
    actor.finish([3, 3]);
    await settle();
    assert.deepEqual(commands, [[1, 1], [3, 3]]);
    assert.deepEqual(actor.log, ["act 1", "settled", "act 3", "settled"]);
  } finally {
    await node.shutdown();
    await rt.shutdown();
  }
});

test("ActorNode with trigger timer leaves the observation to its control timer", async () => {
  const { rt, actor, node, observe } = await setUp({ trigger: "timer" });
  await node.activate();
  observe(1);
  await settle();
  assert.deepEqual(actor.log, [], "nothing until the (sim) clock fires the timer");
  const advanced = rt.simClock.advance(0.1); // the stepped clock awaits the decision
  await settle();
  assert.deepEqual(actor.log, ["act 1"]);
  actor.finish([0, 0]);
  await advanced;
  await node.shutdown();
  await rt.shutdown();
});
