import { test } from "node:test";
import assert from "node:assert/strict";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import type { Intervention } from "../contracts/msgs.generated.ts";
import { ArmSim } from "../sim/ArmSim.ts";
import { ActorNode } from "./ActorNode.ts";
import type { Actor } from "../policies/actors/Actor.ts";
import { ARBITER_TOPICS, InterventionArbiterNode } from "./InterventionArbiterNode.ts";
import { OPERATOR_INTERVENTION, OperatorNode } from "./OperatorNode.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header, sameTime, type JointStateMsg, type ObservationMsg } from "../contracts/msgs.ts";

/** A policy that froze: it keeps sending the first pose it saw. */
class FrozenActor implements Actor {
  readonly jointNames = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "gripper"];
  #hold: number[] | null = null;
  reset(): void {
    this.#hold = null;
  }
  act(obs: { names: string[]; values: number[] }): number[] {
    return (this.#hold ??= obs.values.slice(0, 5));
  }
}

test("operator node on the sim clock: watches /observation, takes over a frozen policy, the arbiter hands its commands on", async () => {
  const hz = 10;
  const rt = await EmbeddedRuntime.create({ clock: "sim", logLevel: "error" });
  const sim = await ArmSim.create({ task: "push_cube" });
  // A bare sim driver (first in tick order): apply the arbiter's last command, step, publish the observation.
  const driver = rt.createNode("driver");
  const pubObs = driver.createPublisher(TOPICS.observation.type, TOPICS.observation.topic);
  const pubEvent = driver.createPublisher(TOPICS.episodeEvent.type, TOPICS.episodeEvent.topic);
  let command: number[] | null = null;
  driver.createSubscription<JointStateMsg>(ARBITER_TOPICS.command.type, ARBITER_TOPICS.command.topic, (m) => (command = Array.from(m.position)));
  const observations: ObservationMsg[] = [];
  driver.createTimer(1 / hz, () => {
    if (command) sim.setCommand(command);
    sim.stepControl();
    const o = sim.observation();
    const msg = { header: header(driver.clock.stamp()), names: o.names, values: o.values };
    observations.push(msg);
    pubObs.publish(msg);
  });
  const actor = new ActorNode(rt.createNode("actor"), new FrozenActor(), { controlHz: hz });
  const operator = new OperatorNode(rt.createNode("operator"), { task: "push_cube", controlHz: hz, seed: 0 });
  const arbiter = new InterventionArbiterNode(rt.createNode("intervention_arbiter"), { withOperator: true, controlHz: hz });
  for (const n of [actor, operator, arbiter]) {
    await n.configure();
    await n.activate();
  }
  const probe = rt.createNode("probe");
  const fromOperator: Intervention[] = [];
  const fromArbiter: Intervention[] = [];
  probe.createSubscription<Intervention>(OPERATOR_INTERVENTION.type, OPERATOR_INTERVENTION.topic, (m) => fromOperator.push(m));
  probe.createSubscription<Intervention>(ARBITER_TOPICS.intervention.type, ARBITER_TOPICS.intervention.topic, (m) => fromArbiter.push(m));

  sim.reset(2);
  pubEvent.publish({ header: header(driver.clock.stamp()), episode: 0, event: "reset", seed: 2n, task: "push_cube", detail: "" });
  const d0 = Math.hypot(observationOf(sim, "cube.x") - observationOf(sim, "target.x"), observationOf(sim, "cube.y") - observationOf(sim, "target.y"));
  await rt.simClock.advance(8.0);

  assert.equal(fromOperator.length, 80, "one Intervention per tick");
  fromOperator.forEach((m, i) => {
    assert.ok(sameTime(m.header.stamp, observations[i].header.stamp), `tick ${i}: stamped with the observation's time`);
    assert.equal(m.source, "scripted_operator");
    assert.equal(m.action.length, m.active ? 5 : 0);
  });
  const first = fromOperator.findIndex((m) => m.active);
  // 3 s without progress plus a 0.2–0.5 s reaction.
  assert.ok(first >= 31 && first <= 36, `first takeover at tick ${first}`);
  assert.ok(operator.operator.takeovers >= 1);
  assert.equal(arbiter.counts.operator, operator.operator.stepsInControl, "every operator tick went out as the operator's command");
  for (let i = 0; i < fromArbiter.length; i++) {
    if (fromOperator[i].active) assert.deepEqual(Array.from(fromArbiter[i].action), Array.from(fromOperator[i].action));
    if (fromOperator[i].active) assert.equal(fromArbiter[i].active, true);
  }
  const d1 = Math.hypot(observationOf(sim, "cube.x") - observationOf(sim, "target.x"), observationOf(sim, "cube.y") - observationOf(sim, "target.y"));
  assert.ok(d1 < d0 - 0.03, `the correction moved the cube towards the target: ${d0.toFixed(3)} → ${d1.toFixed(3)} m`);

  pubEvent.publish({ header: header(driver.clock.stamp()), episode: 1, event: "reset", seed: 3n, task: "push_cube", detail: "" });
  assert.equal(operator.operator.takeovers, 0, "reset clears the counts");
  for (const n of [actor, operator, arbiter]) await n.shutdown();
  sim.close();
  await rt.shutdown();
});

function observationOf(sim: ArmSim, name: string): number {
  const o = sim.observation();
  return o.values[o.names.indexOf(name)];
}
