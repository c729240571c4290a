import { test } from "node:test";
import assert from "node:assert/strict";
import { ArmSim } from "./ArmSim.ts";
import { ScriptedExpert } from "./ScriptedExpert.ts";
import { goalFromInstruction, instructionFor, taskVocabulary } from "./multiPush.ts";

test("goalFromInstruction reads colour and side from free text; missing parts come from the fallback and are listed", () => {
  const fb = { color: "red", side: "right" } as const;
  assert.deepEqual(goalFromInstruction("Push the BLUE cube to the left target, please", fb), { goal: { color: "blue", side: "left" }, missing: [] });
  assert.deepEqual(goalFromInstruction("shove the azure block leftwards", fb), { goal: fb, missing: ["color", "side"] });
  assert.equal(instructionFor({ color: "blue", side: "left" }), "push the blue cube to the left target");
  assert.ok(taskVocabulary().includes("block") && taskVocabulary().includes("goal"));
});

test("multi_push: seeded instructions, the instructed pair in cube.*/target.*, expert at quality 1 succeeds", async () => {
  const sim = await ArmSim.create({ task: "multi_push" });
  const expert = new ScriptedExpert({ task: "multi_push", quality: 1 });
  const goals = new Set<string>();
  let wins = 0;
  const n = 8;
  for (let seed = 0; seed < n; seed++) {
    sim.reset(seed);
    expert.reset(seed);
    const g = sim.goal!;
    goals.add(`${g.color}/${g.side}`);
    assert.equal(goalFromInstruction(sim.instruction!, { color: "red", side: "left" }).goal.color, g.color);
    const o = sim.observation();
    const v = (name: string) => o.values[o.names.indexOf(name)];
    assert.equal(v("cube.x"), v(`${g.color}.x`));
    assert.equal(v("target.y"), v(`${g.side}.y`));
    assert.ok((g.side === "left") === v("target.y") > 0, "left is the robot's +y");
    for (let t = 0; t < sim.task.maxSteps; t++) {
      const s = sim.status();
      if (s.success) wins++;
      if (s.success || s.failed) break;
      sim.setCommand(expert.act(sim.observation()));
      sim.stepControl();
    }
  }
  sim.close();
  assert.ok(goals.size >= 3, `goals drawn: ${[...goals].join(", ")}`);
  assert.ok(wins >= n - 1, `expert successes ${wins}/${n}`);
});

test("a fixed instruction sets the goal of every episode", async () => {
  const sim = await ArmSim.create({ task: "multi_push", instruction: "push the blue cube to the left target" });
  for (const seed of [0, 1, 2]) {
    sim.reset(seed);
    assert.deepEqual(sim.goal, { color: "blue", side: "left" });
    assert.equal(sim.instruction, "push the blue cube to the left target");
  }
  sim.close();
});
