import { test } from "node:test";
import assert from "node:assert/strict";
import { ArmSim } from "../ArmSim.ts";
import { So101Expert } from "./So101Expert.ts";
import { ScriptedOperator } from "../ScriptedOperator.ts";
import { createScriptedExpert } from "../createExpert.ts";
import type { So101TaskName } from "../tasks.ts";

type Obs = { names: string[]; values: number[] };

/** Runs seeds [from, from + n) of `task`; `act` answers each observation. Episodes end at success, failure or the limit. */
async function run(task: So101TaskName, n: number, make: () => { reset(seed: number): void; act(o: Obs): number[] }, opts: { controlHz?: number; operator?: ScriptedOperator; from?: number } = {}) {
  const sim = await ArmSim.create({ robot: "so101", task, controlHz: opts.controlHz });
  const actor = make();
  let wins = 0;
  let takeoverEpisodes = 0;
  let control = 0;
  let ticks = 0;
  try {
    for (let seed = opts.from ?? 0; seed < (opts.from ?? 0) + n; seed++) {
      sim.reset(seed);
      actor.reset(seed);
      opts.operator?.reset(seed);
      for (let t = 0; t < sim.task.maxSteps; t++, ticks++) {
        const s = sim.status();
        if (s.success) wins++;
        if (s.success || s.failed) break;
        const o = sim.observation();
        const a = actor.act(o);
        const d = opts.operator?.observe(o);
        sim.setCommand(d?.takeOver ? d.action! : a);
        sim.stepControl();
      }
      if (opts.operator?.takeovers) takeoverEpisodes++;
      control += opts.operator?.stepsInControl ?? 0;
    }
  } finally {
    sim.close();
  }
  return { rate: wins / n, takeoverEpisodes, controlFraction: control / Math.max(ticks, 1) };
}

const expert = (task: So101TaskName, quality: number, controlHz = 10) => () => new So101Expert({ task, quality, controlHz });

test("the SO-101 expert at quality 1 solves reach, push_cube and pick_place", async (t) => {
  for (const task of ["reach", "push_cube", "pick_place"] as const) {
    const r = await run(task, 5, expert(task, 1));
    t.diagnostic(`${task}: ${r.rate * 100}% of 5 seeds`);
    assert.equal(r.rate, 1, task);
  }
});

test("at 30 Hz the same expert (speeds in SI units) still picks and places", async () => {
  const r = await run("pick_place", 2, expert("pick_place", 1, 30), { controlHz: 30 });
  assert.equal(r.rate, 1);
});

test("at the demo quality 0.7 the expert is good but imperfect", async (t) => {
  const r = await run("push_cube", 20, expert("push_cube", 0.7));
  t.diagnostic(`push_cube at 0.7: ${r.rate * 100}% of 20 seeds`);
  assert.ok(r.rate >= 0.6 && r.rate < 1, `success rate ${r.rate}`);
});

test("the expert refuses what it cannot do, naming it", () => {
  assert.throws(() => new So101Expert({ task: "pick_place", quality: 1.5 }), /quality must be in \[0, 1\], got 1.5/);
  assert.throws(() => new So101Expert({ task: "peg_insert" as So101TaskName }), /the SO-101 has reach, push_cube, pick_place, multi_push/);
  assert.throws(() => createScriptedExpert({ robot: "so101", task: "peg_insert" }), /robot so101 has no task "peg_insert"/);
  const e = new So101Expert({ task: "push_cube" });
  assert.throws(() => e.act({ names: ["q.shoulder_pan"], values: [0] }), /So101Expert: observation has no "q.shoulder_lift".*so101 push_cube layout/);
});

test("the scripted operator rescues a frozen policy on the SO-101 (push_cube, pick_place) and hands back", async (t) => {
  /** A policy that froze: holds its first observation's joints. */
  const frozen = () => {
    let hold: number[] | null = null;
    return { reset: () => (hold = null), act: (o: Obs) => (hold ??= o.values.slice(0, 6)) };
  };
  for (const task of ["push_cube", "pick_place"] as const) {
    const alone = await run(task, 4, frozen);
    // A frozen policy opens the jaws again when it gets the arm back, so a pick must fit in one correction.
    const operator = new ScriptedOperator({ robot: "so101", task, patienceSec: 1, correctionSec: task === "pick_place" ? 7 : 4, controlHz: 10 });
    const helped = await run(task, 4, frozen, { operator });
    t.diagnostic(`${task}: frozen policy ${alone.rate * 100}% alone, ${helped.rate * 100}% with the operator (in control ${(helped.controlFraction * 100).toFixed(0)}% of ticks)`);
    assert.equal(alone.rate, 0);
    assert.equal(helped.takeoverEpisodes, 4);
    assert.ok(helped.rate >= 0.75, `${task}: ${helped.rate}`);
    assert.ok(helped.controlFraction < 0.9, "the operator corrects and hands back");
  }
});
