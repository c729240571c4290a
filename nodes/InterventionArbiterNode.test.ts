import { test } from "node:test";
import assert from "node:assert/strict";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import type { Intervention } from "../contracts/msgs.generated.ts";
import { ARBITER_TOPICS, CommandArbiter, InterventionArbiterNode } from "./InterventionArbiterNode.ts";
import { OPERATOR_INTERVENTION } from "./OperatorNode.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header, jointState, sameTime, type JointStateMsg } from "../contracts/msgs.ts";

const NAMES = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "gripper"];

test("CommandArbiter: the operator wins; the hand-back blends with per-tick change ≤ the policy's own step + offset / blend ticks", () => {
  const arb = new CommandArbiter({ blendSec: 0.5, controlHz: 10 });
  const policy = (t: number): number[] => [0.02 * t, 0.5, 1.0, 1.0, 0.01];
  assert.deepEqual(arb.decide(policy(0), null), { command: policy(0), operatorActed: false, blending: false });
  const op = [0.4, 0.7, 1.2, 0.9, 0.0];
  assert.deepEqual(arb.decide(policy(1), op), { command: op, operatorActed: true, blending: false });
  assert.deepEqual(arb.decide(null, op), { command: op, operatorActed: true, blending: false }, "the operator needs no policy command");
  const sent = [op];
  const flags: boolean[] = [];
  for (let t = 3; t < 12; t++) {
    const d = arb.decide(policy(t), null)!;
    sent.push(d.command);
    flags.push(d.operatorActed);
    if (t >= 7) assert.deepEqual(d.command, policy(t), `tick ${t}: blend over, the policy's own command`);
  }
  // 0.5 s at 10 Hz = 5 ticks: 4 blended (operator) ticks, then the policy's.
  assert.deepEqual(flags, [true, true, true, true, false, false, false, false, false]);
  const offset = op.map((v, i) => Math.abs(v - policy(3)[i]));
  for (let k = 1; k < sent.length; k++) {
    for (let i = 0; i < 5; i++) {
      const step = Math.abs(sent[k][i] - sent[k - 1][i]);
      const policyStep = k === 1 ? 0 : Math.abs(policy(k + 2)[i] - policy(k + 1)[i]);
      assert.ok(step <= policyStep + offset[i] / 5 + 1e-12, `tick ${k}, joint ${i}: step ${step}`);
    }
  }
  assert.equal(arb.decide(null, null), null);
});

/** Runtime with probe nodes created in the lead's order: actor, operator, arbiter. */
async function setUp(opts: { withOperator: boolean; operatorActive?: (tick: number) => boolean }) {
  const rt = await EmbeddedRuntime.create({ clock: "sim", logLevel: "error" });
  const hz = 10;
  let tick = 0;
  const policyCmd = (t: number): number[] => [0.01 * t, 0.5, 1.0, 1.0, 0.01];
  const opCmd = [0.5, 0.6, 1.1, 0.9, 0.0];
  const actor = rt.createNode("actor");
  const pubPolicy = actor.createPublisher(TOPICS.proposedCommand.type, TOPICS.proposedCommand.topic);
  actor.createTimer(1 / hz, () => {
    tick++;
    pubPolicy.publish(jointState(actor.clock.stamp(), NAMES, policyCmd(tick)));
  });
  if (opts.withOperator) {
    const operator = rt.createNode("operator");
    const pubOp = operator.createPublisher<Intervention>(OPERATOR_INTERVENTION.type, OPERATOR_INTERVENTION.topic);
    operator.createTimer(1 / hz, () => {
      const active = opts.operatorActive?.(tick) ?? false;
      pubOp.publish({ header: header(operator.clock.stamp()), active, source: "scripted_operator", action: active ? opCmd : [] });
    });
  }
  const arbiter = new InterventionArbiterNode(rt.createNode("intervention_arbiter"), { withOperator: opts.withOperator, blendSec: 0.5, controlHz: hz });
  await arbiter.configure();
  await arbiter.activate();
  const probe = rt.createNode("probe");
  const cmds: JointStateMsg[] = [];
  const flags: Intervention[] = [];
  probe.createSubscription<JointStateMsg>(ARBITER_TOPICS.command.type, ARBITER_TOPICS.command.topic, (m) => cmds.push(m));
  probe.createSubscription<Intervention>(ARBITER_TOPICS.intervention.type, ARBITER_TOPICS.intervention.topic, (m) => flags.push(m));
  return { rt, arbiter, cmds, flags, policyCmd, opCmd };
}

test("arbiter node on the sim clock: one command per tick, stamped with the tick; operator wins; blended hand-back is flagged", async () => {
  // Operator in control on ticks 5–9 (its messages are published after the actor's on each tick).
  const s = await setUp({ withOperator: true, operatorActive: (t) => t >= 5 && t < 10 });
  await s.rt.simClock.advance(2.0);
  assert.equal(s.cmds.length, 20, "one command per tick");
  assert.equal(s.flags.length, 20);
  s.cmds.forEach((m, i) => {
    assert.ok(sameTime(m.header.stamp, { sec: Math.floor((i + 1) / 10), nanosec: ((i + 1) % 10) * 1e8 }), `tick ${i + 1} stamp ${JSON.stringify(m.header.stamp)}`);
    assert.ok(sameTime(m.header.stamp, s.flags[i].header.stamp));
    assert.deepEqual(Array.from(s.flags[i].action), Array.from(m.position), "the intervention's action is the command sent");
  });
  const active = s.flags.map((f) => f.active);
  // Ticks 1–4 policy, 5–9 operator, 10–13 blending (flagged as the operator's), 14+ policy.
  assert.deepEqual(active, [false, false, false, false, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false]);
  assert.deepEqual(s.flags.map((f) => f.source).slice(3, 14), ["policy", ...Array(9).fill("scripted_operator"), "policy"]);
  for (let t = 5; t <= 9; t++) assert.deepEqual(Array.from(s.cmds[t - 1].position), s.opCmd);
  for (let t = 14; t <= 20; t++) assert.deepEqual(Array.from(s.cmds[t - 1].position), s.policyCmd(t));
  // No jump at hand-back: each step ≤ the policy's own step (0.01 on joint 0) + offset / 5.
  const offset = s.opCmd.map((v, i) => Math.abs(v - s.policyCmd(10)[i]));
  for (let t = 10; t <= 14; t++) {
    const a = Array.from(s.cmds[t - 2].position);
    const b = Array.from(s.cmds[t - 1].position);
    b.forEach((v, i) => assert.ok(Math.abs(v - a[i]) <= (i === 0 ? 0.01 : 0) + offset[i] / 5 + 1e-9, `tick ${t} joint ${i}: ${Math.abs(v - a[i])}`));
  }
  assert.deepEqual(s.arbiter.counts, { policy: 11, operator: 5, blend: 4 });
  await s.rt.shutdown();
});

test("without an operator node the arbiter forwards every policy command as it comes", async () => {
  const s = await setUp({ withOperator: false });
  await s.rt.simClock.advance(0.5);
  assert.equal(s.cmds.length, 5);
  s.cmds.forEach((m, i) => assert.deepEqual(Array.from(m.position), s.policyCmd(i + 1)));
  assert.ok(s.flags.every((f) => !f.active && f.source === "policy"));
  await s.arbiter.deactivate();
  await s.rt.simClock.advance(0.3);
  assert.equal(s.cmds.length, 5, "an inactive arbiter forwards nothing");
  await s.rt.shutdown();
});
