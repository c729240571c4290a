/**
 * The SO-101's multi_push: two cubes, two targets, an instruction. The layout is feasible for every cube → target
 * pair, the world follows the instruction (the seed's or a fixed one), the scripted expert pushes the instructed
 * cube home without touching the other, and both cameras see both cubes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ArmSim } from "../ArmSim.ts";
import { createScriptedExpert } from "../createExpert.ts";
import { createRng } from "../rng.ts";
import { sampleSo101Episode, sampleSo101MultiPush } from "./sampleSo101Episode.ts";
import { SO101_SPEC } from "./so101Spec.ts";
import { taskSpec } from "../tasks.ts";
import { SimCameras } from "../render/SimCameras.ts";
import { so101CameraSpecs } from "../render/so101Cameras.ts";

const at = (o: { names: string[]; values: number[] }, n: string): number => o.values[o.names.indexOf(n)];

test("multi_push layouts: cubes apart, a target on each side, the instruction names the goal, any seed replays", () => {
  for (let seed = 0; seed < 40; seed++) {
    const a = sampleSo101MultiPush(createRng(seed));
    assert.deepEqual(sampleSo101MultiPush(createRng(seed)), a);
    const { red, blue } = a.cubes;
    assert.ok(Math.hypot(red.x - blue.x, red.y - blue.y) > 0.06, `seed ${seed}: cubes ${Math.hypot(red.x - blue.x, red.y - blue.y)} m apart`);
    assert.ok(a.targets.left[1] > 0.1 && a.targets.right[1] < -0.1, `seed ${seed}: targets ${a.targets.left} / ${a.targets.right}`);
    assert.match(a.instruction, new RegExp(`${a.goal.color} (cube|block)`));
    assert.match(a.instruction, new RegExp(a.goal.side));
    const init = sampleSo101Episode("multi_push", seed);
    assert.deepEqual(init.cube, init.multi!.cubes[init.multi!.goal.color]);
    assert.deepEqual(init.target, init.multi!.targets[init.multi!.goal.side]);
    assert.ok(init.q[5] <= 0.05, "the gripper starts closed, for pushing");
  }
});

test("multi_push world: cube.*/target.* are the instructed pair; a fixed instruction sets the goal, words it lacks come from the seed", async () => {
  const spec = taskSpec("so101", "multi_push");
  assert.deepEqual(spec.privileged, spec.observationNames.slice(6), "everything but the joints is sim-only");
  const sim = await ArmSim.create({ robot: "so101", task: "multi_push" });
  try {
    for (let seed = 0; seed < 6; seed++) {
      sim.reset(seed);
      const o = sim.observation();
      const g = sim.goal!;
      assert.equal(sim.instruction, sampleSo101Episode("multi_push", seed).multi!.instruction);
      assert.equal(at(o, "cube.x"), at(o, `${g.color}.x`));
      assert.equal(at(o, "target.y"), at(o, `${g.side}.y`));
      assert.deepEqual(sim.cubePosition().slice(0, 2), [at(o, "cube.x"), at(o, "cube.y")]);
    }
  } finally {
    sim.close();
  }
  const fixed = await ArmSim.create({ robot: "so101", task: "multi_push", instruction: "Push the BLUE block to the left, please" });
  try {
    fixed.reset(3);
    assert.deepEqual(fixed.goal, { color: "blue", side: "left" });
    assert.equal(fixed.instruction, "Push the BLUE block to the left, please");
    const o = fixed.observation();
    assert.equal(at(o, "cube.x"), at(o, "blue.x"));
    assert.equal(at(o, "target.y"), at(o, "left.y"));
  } finally {
    fixed.close();
  }
  const partial = await ArmSim.create({ robot: "so101", task: "multi_push", instruction: "the red one" });
  try {
    partial.reset(5);
    assert.equal(partial.goal!.color, "red");
    assert.equal(partial.goal!.side, sampleSo101Episode("multi_push", 5).multi!.goal.side);
  } finally {
    partial.close();
  }
});

test("the quality-1 expert pushes the instructed cube onto its target and leaves the other where it was", async () => {
  const sim = await ArmSim.create({ robot: "so101", task: "multi_push" });
  try {
    let wins = 0;
    for (let seed = 0; seed < 10; seed++) {
      sim.reset(seed);
      const other = sim.goal!.color === "red" ? "blue" : "red";
      const o0 = sim.observation();
      const ex = createScriptedExpert({ robot: "so101", task: "multi_push", quality: 1, seed });
      let s = sim.status();
      for (let t = 0; t < 180 && !s.success && !s.failed; t++) {
        sim.setCommand(ex.act(sim.observation()));
        sim.stepControl();
        s = sim.status();
      }
      wins += s.success ? 1 : 0;
      const o = sim.observation();
      const moved = Math.hypot(at(o, `${other}.x`) - at(o0, `${other}.x`), at(o, `${other}.y`) - at(o0, `${other}.y`));
      assert.ok(moved < 0.01, `seed ${seed}: the ${other} cube moved ${moved.toFixed(3)} m`);
    }
    assert.ok(wins >= 9, `${wins}/10 quality-1 demos succeed`);
  } finally {
    sim.close();
  }
});

test("either cube off the table fails the episode", async () => {
  const sim = await ArmSim.create({ robot: "so101", task: "multi_push" });
  try {
    sim.reset(0);
    const other = sim.goal!.color === "red" ? "blue" : "red";
    // Move the cube that was not asked for past the table's far edge.
    const joint = sim.mujoco.mj_name2id(sim.model, sim.mujoco.mjtObj.mjOBJ_JOINT.value, `cube_${other}`);
    const adr = (sim.model.jnt_qposadr as Int32Array)[joint];
    (sim.data.qpos as Float64Array)[adr] = SO101_SPEC.table.xMax + 0.05;
    sim.mujoco.mj_forward(sim.model, sim.data);
    assert.equal(sim.status().failed, true);
  } finally {
    sim.close();
  }
});

test("the front and the wrist camera see the two cubes in their own colours", async () => {
  const sim = await ArmSim.create({ robot: "so101", task: "multi_push" });
  try {
    sim.reset(2);
    const cams = SimCameras.create(sim.mujoco, sim.model, sim.data, so101CameraSpecs(sim.mujoco, sim.model, sim.data));
    try {
      const front = cams.render("front");
      const geom = (n: string): number => sim.mujoco.mj_name2id(sim.model, sim.mujoco.mjtObj.mjOBJ_GEOM.value, n);
      const pixels = (g: number): number[] => [...front.segmentation.keys()].filter((p) => front.segmentation[p] === g);
      for (const [name, channel] of [["cube_red", 0], ["cube_blue", 2]] as const) {
        const seen = pixels(geom(name));
        assert.ok(seen.length >= 4, `front sees ${seen.length} pixels of ${name}`);
        // The colour that names it dominates its pixels.
        const mean = [0, 1, 2].map((c) => seen.reduce((a, p) => a + front.rgb[3 * p + c], 0) / seen.length);
        assert.ok(mean[channel] > 1.5 * Math.max(...mean.filter((_, c) => c !== channel)), `${name}: mean rgb ${mean.map(Math.round)}`);
      }
      for (const side of ["left", "right"]) assert.ok(pixels(geom(`target_${side}`)).length >= 4, `front sees target_${side}`);
      assert.equal(cams.render("wrist").width, 84);
    } finally {
      cams.close();
    }
  } finally {
    sim.close();
  }
});
