import { test } from "node:test";
import assert from "node:assert/strict";
import { sampleEpisode } from "./sampleEpisode.ts";
import { ARM_SPEC } from "./armSpec.ts";

test("push_cube layouts: target 10–20 cm from the cube, both on the table in front of the arm", () => {
  for (let seed = 0; seed < 300; seed++) {
    const e = sampleEpisode("push_cube", seed);
    assert.ok(e.cube);
    const d = Math.hypot(e.target[0] - e.cube.x, e.target[1] - e.cube.y);
    assert.ok(d >= 0.1 && d <= 0.2, `seed ${seed}: distance ${d}`);
    for (const [x, y] of [[e.cube.x, e.cube.y], [e.target[0], e.target[1]]]) {
      assert.ok(x > 0.05 && x < ARM_SPEC.table.xMax && Math.abs(y) < ARM_SPEC.table.yHalf, `seed ${seed}: (${x}, ${y})`);
    }
    e.q.forEach((v, i) => assert.ok(v >= ARM_SPEC.jointLower[i] && v <= ARM_SPEC.jointUpper[i]));
  }
});

test("layouts are a pure function of the seed", () => {
  assert.deepEqual(sampleEpisode("push_cube", 42), sampleEpisode("push_cube", 42));
  assert.deepEqual(sampleEpisode("reach", 42), sampleEpisode("reach", 42));
  assert.notDeepEqual(sampleEpisode("push_cube", 42), sampleEpisode("push_cube", 43));
});

test("peg_insert layouts: hole 16–26 cm out in front, fixture facing the base, peg squeezed by the gripper command", () => {
  for (let seed = 0; seed < 300; seed++) {
    const e = sampleEpisode("peg_insert", seed);
    const r = Math.hypot(e.target[0], e.target[1]);
    assert.ok(r >= 0.16 && r <= 0.26, `seed ${seed}: hole at ${r} m`);
    assert.equal(e.target[2], 0);
    assert.ok(Math.abs((e.targetYaw ?? NaN) - Math.atan2(e.target[1], e.target[0])) < 1e-12);
    assert.equal(e.q[4], ARM_SPEC.peg.grip);
  }
});
