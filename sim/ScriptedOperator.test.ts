import { test } from "node:test";
import assert from "node:assert/strict";
import { ArmSim } from "./ArmSim.ts";
import { ScriptedExpert } from "./ScriptedExpert.ts";
import { ScriptedOperator } from "./ScriptedOperator.ts";
import type { TaskName } from "./tasks.ts";

type Obs = { names: string[]; values: number[] };
interface TestActor {
  reset(seed: number): void;
  act(o: Obs): number[];
}

function expertActor(task: TaskName, quality: number): TestActor {
  const e = new ScriptedExpert({ task, quality });
  return { reset: (s) => e.reset(s), act: (o) => e.act(o) };
}

/** A policy that froze: holds the start pose (gripper closed, so a held peg stays held). */
function idleActor(task: TaskName): TestActor {
  let hold: number[] | null = null;
  return {
    reset: () => (hold = null),
    act: (o) => (hold ??= [...o.values.slice(0, 4), task === "peg_insert" ? 0 : o.values[4]]),
  };
}

/** A confidently wrong policy: a clean expert that misreads the hole by 6 mm, so it keeps jamming on the rim. */
function misreadHoleActor(): TestActor {
  const e = new ScriptedExpert({ task: "peg_insert", quality: 1 });
  return {
    reset: (s) => e.reset(s),
    act: (o) => {
      const v = o.values.slice();
      const i = o.names.indexOf("hole.x");
      const a = Math.atan2(v[i + 1], v[i]) + 1;
      v[i] += 0.006 * Math.cos(a);
      v[i + 1] += 0.006 * Math.sin(a);
      return e.act({ names: o.names, values: v });
    },
  };
}

interface RunStats {
  successRate: number;
  takeoverEpisodes: number;
  takeovers: number;
  firstTakeoverTicks: number[];
  controlFraction: number;
}

/** Runs seeds 0..n-1 with the operator watching (and acting when `withOperator`). */
async function run(task: TaskName, actor: TestActor, n: number, withOperator: boolean): Promise<RunStats> {
  const sim = await ArmSim.create({ task });
  const op = new ScriptedOperator({ task });
  let wins = 0;
  let takeovers = 0;
  let episodes = 0;
  let ticks = 0;
  let control = 0;
  const first: number[] = [];
  for (let seed = 0; seed < n; seed++) {
    sim.reset(seed);
    actor.reset(seed);
    op.reset(seed);
    for (let t = 0; t < sim.task.maxSteps; t++) {
      const s = sim.status();
      if (s.success) wins++;
      if (s.success || s.failed) break;
      const o = sim.observation();
      const a = actor.act(o);
      const d = op.observe(o);
      if (d.takeOver && op.takeovers === 1 && op.stepsInControl === 1) first.push(t);
      sim.setCommand(withOperator && d.takeOver ? d.action! : a);
      sim.stepControl();
      ticks++;
    }
    takeovers += op.takeovers;
    if (op.takeovers > 0) episodes++;
    control += op.stepsInControl;
  }
  sim.close();
  return { successRate: wins / n, takeoverEpisodes: episodes, takeovers, firstTakeoverTicks: first, controlFraction: control / ticks };
}

test("the operator leaves a quality-1 expert alone (push_cube and peg_insert)", async (t) => {
  for (const task of ["push_cube", "peg_insert"] as const) {
    const n = task === "push_cube" ? 12 : 20;
    const r = await run(task, expertActor(task, 1), n, true);
    t.diagnostic(`${task}: takeovers in ${r.takeoverEpisodes}/${n} expert episodes, success ${r.successRate}`);
    assert.ok(r.takeoverEpisodes <= n * 0.1, `${task}: took over in ${r.takeoverEpisodes} of ${n} clean episodes`);
    assert.equal(r.successRate, 1);
  }
});

test("push_cube: the operator takes over from a frozen policy after its patience, and the episode then succeeds", async (t) => {
  const without = await run("push_cube", idleActor("push_cube"), 8, false);
  const withOp = await run("push_cube", idleActor("push_cube"), 8, true);
  t.diagnostic(`frozen policy: success ${without.successRate} alone, ${withOp.successRate} with the operator; ${withOp.takeovers} takeovers, operator in control ${(withOp.controlFraction * 100).toFixed(0)}% of ticks`);
  assert.equal(withOp.takeoverEpisodes, 8);
  assert.ok(withOp.successRate > without.successRate + 0.2, `${withOp.successRate} vs ${without.successRate}`);
  // No progress for 3 s plus a 0.2–0.5 s reaction: never in the first second, never before patience runs out.
  for (const tick of withOp.firstTakeoverTicks) assert.ok(tick >= 30 + 2 && tick <= 30 + 6, `first takeover at tick ${tick}`);
  assert.ok(withOp.controlFraction < 0.6, "the operator corrects and hands back; it does not run whole episodes");
});

test("peg_insert: the operator rescues a frozen policy and one that keeps jamming the peg on the rim", async (t) => {
  for (const [label, actor] of [["frozen", idleActor("peg_insert")], ["misreads the hole", misreadHoleActor()]] as const) {
    const without = await run("peg_insert", actor, 10, false);
    const withOp = await run("peg_insert", actor, 10, true);
    t.diagnostic(`${label}: success ${without.successRate} alone, ${withOp.successRate} with the operator (${withOp.takeovers} takeovers)`);
    assert.ok(withOp.takeoverEpisodes >= 9, `${label}: took over in ${withOp.takeoverEpisodes}/10`);
    assert.ok(withOp.successRate >= without.successRate + 0.2, `${label}: ${withOp.successRate} vs ${without.successRate}`);
  }
});

test("never in the first second, reacts after a delay, hands back after correctionSec, counts reset with reset()", () => {
  const names = ["q.shoulder_pan", "q.shoulder_lift", "q.elbow_flex", "q.wrist_flex", "q.gripper", "ee.x", "ee.y", "ee.z", "cube.x", "cube.y", "target.x", "target.y"];
  const still = { names, values: [0, 0.5, 1.5, 1.1, 0, 0.12, 0, 0.12, 0.2, 0, 0.3, 0] };
  const op = new ScriptedOperator({ task: "push_cube", patienceSec: 0.1, correctionSec: 0.5, reactionSec: 0.3, controlHz: 10 });
  const log: boolean[] = [];
  for (let t = 0; t < 40; t++) log.push(op.observe(still).takeOver);
  // Nothing moves, patience 1 tick: trouble from tick 10 (grace), acting 3 ticks later, for 5 ticks.
  assert.equal(log.indexOf(true), 13);
  assert.deepEqual(log.slice(13, 19), [true, true, true, true, true, false]);
  assert.ok(op.takeovers >= 2, "it takes over again when the policy still does nothing");
  assert.match(op.lastReason, /no progress/);
  op.reset(1);
  assert.equal(op.takeovers, 0);
  assert.equal(op.stepsInControl, 0);
  assert.equal(op.active, false);
  assert.throws(() => new ScriptedOperator({ task: "push_cube", patienceSec: 0 }), /patienceSec must be a positive number/);
  assert.throws(() => op.observe({ names: ["ee.x"], values: [0] }), /no "ee.y"/);
});

test("push_cube: a cube pushed away from the target brings the operator in before its patience runs out", () => {
  const names = ["q.shoulder_pan", "q.shoulder_lift", "q.elbow_flex", "q.wrist_flex", "q.gripper", "ee.x", "ee.y", "ee.z", "cube.x", "cube.y", "target.x", "target.y"];
  const op = new ScriptedOperator({ task: "push_cube", reactionSec: 0.2 });
  let first = -1;
  for (let t = 0; t < 30 && first < 0; t++) {
    // The cube slides away from the target at 1 cm per tick from tick 5 on (the ee follows it: no stall).
    const x = 0.2 - 0.01 * Math.max(0, t - 5);
    if (op.observe({ names, values: [0, 0.5, 1.5, 1.1, 0, x - 0.03, 0, 0.02, x, 0, 0.3, 0] }).takeOver) first = t;
  }
  assert.ok(first >= 10 && first < 20, `took over at tick ${first}`);
  assert.match(op.lastReason, /away from the target/);
});
