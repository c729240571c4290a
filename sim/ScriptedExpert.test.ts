import { test } from "node:test";
import assert from "node:assert/strict";
import { ArmSim } from "./ArmSim.ts";
import { ScriptedExpert } from "./ScriptedExpert.ts";
import type { TaskName } from "./tasks.ts";

/** Success rate of the expert over seeds 0..n-1, an episode ending at its first success, failure or maxSteps. */
async function successRate(task: TaskName, quality: number, n: number): Promise<{ rate: number; meanLength: number }> {
  const sim = await ArmSim.create({ task });
  const expert = new ScriptedExpert({ task, quality });
  let wins = 0;
  let steps = 0;
  for (let seed = 0; seed < n; seed++) {
    sim.reset(seed);
    expert.reset(seed);
    for (let t = 0; t < sim.task.maxSteps; t++, steps++) {
      const s = sim.status();
      if (s.success) wins++;
      if (s.success || s.failed) break;
      sim.setCommand(expert.act(sim.observation()));
      sim.stepControl();
    }
  }
  sim.close();
  return { rate: wins / n, meanLength: steps / n };
}

test("push_cube expert at quality 1 succeeds on ≥ 95% of seeds", async (t) => {
  const { rate, meanLength } = await successRate("push_cube", 1, 20);
  t.diagnostic(`quality 1.0: success ${(rate * 100).toFixed(0)}%, mean length ${meanLength.toFixed(1)} ticks`);
  assert.ok(rate >= 0.95, `success rate ${rate}`);
});

test("push_cube expert at quality 0.7 is good but imperfect", async (t) => {
  const { rate, meanLength } = await successRate("push_cube", 0.7, 20);
  t.diagnostic(`quality 0.7: success ${(rate * 100).toFixed(0)}%, mean length ${meanLength.toFixed(1)} ticks`);
  assert.ok(rate >= 0.6 && rate < 1, `success rate ${rate}`);
});

test("peg_insert expert at quality 1 succeeds on ≥ 95% of seeds", async (t) => {
  const { rate, meanLength } = await successRate("peg_insert", 1, 50);
  t.diagnostic(`quality 1.0: success ${(rate * 100).toFixed(0)}%, mean length ${meanLength.toFixed(1)} ticks`);
  assert.ok(rate >= 0.95, `success rate ${rate}`);
});

test("peg_insert expert at quality 0.7 is good but imperfect, and worse at 0.4", async (t) => {
  const r7 = await successRate("peg_insert", 0.7, 50);
  const r4 = await successRate("peg_insert", 0.4, 50);
  t.diagnostic(`quality 0.7: success ${(r7.rate * 100).toFixed(0)}%, mean length ${r7.meanLength.toFixed(1)} ticks`);
  t.diagnostic(`quality 0.4: success ${(r4.rate * 100).toFixed(0)}%, mean length ${r4.meanLength.toFixed(1)} ticks`);
  assert.ok(r7.rate >= 0.65 && r7.rate <= 0.9, `success rate ${r7.rate}`);
  assert.ok(r4.rate < r7.rate, `quality 0.4 (${r4.rate}) should do worse than 0.7 (${r7.rate})`);
});

test("reach expert at quality 1 always reaches", async () => {
  const { rate } = await successRate("reach", 1, 10);
  assert.equal(rate, 1);
});

test("the expert is deterministic per seed and respects limits and its step size", async () => {
  const sim = await ArmSim.create({ task: "push_cube" });
  const runs: number[][][] = [];
  for (let r = 0; r < 2; r++) {
    const expert = new ScriptedExpert({ task: "push_cube", quality: 0.5 });
    sim.reset(11);
    expert.reset(11);
    const actions: number[][] = [];
    for (let t = 0; t < 30; t++) {
      const a = expert.act(sim.observation());
      a.forEach((v, i) => assert.ok(v >= sim.jointLower[i] && v <= sim.jointUpper[i], `${sim.jointNames[i]} = ${v}`));
      if (actions.length > 0) {
        const prev = actions[actions.length - 1];
        // 0.25 rad/tick step limit plus the quality-0.5 noise (σ = 0.02 rad) with a wide margin.
        for (let i = 0; i < 4; i++) assert.ok(Math.abs(a[i] - prev[i]) < 0.4, `tick ${t}: ${sim.jointNames[i]} jumped ${a[i] - prev[i]}`);
      }
      actions.push(a);
      sim.setCommand(a);
      sim.stepControl();
    }
    runs.push(actions);
  }
  assert.deepEqual(runs[0], runs[1]);
  sim.close();
});

test("an observation without the task's names is rejected with the missing name", () => {
  const expert = new ScriptedExpert({ task: "push_cube" });
  assert.throws(() => expert.act({ names: ["q.shoulder_pan"], values: [0] }), /no "q.shoulder_lift"/);
  assert.throws(() => new ScriptedExpert({ task: "push_cube", quality: 2 }), /quality must be in \[0, 1\]/);
  assert.throws(() => new ScriptedExpert({ task: "peg_insert" }).act({ names: ["q.shoulder_pan"], values: [0] }), /no "q.shoulder_lift"/);
  assert.throws(() => new ScriptedExpert({ task: "stack" as "reach" }), /unknown task "stack"/);
});
