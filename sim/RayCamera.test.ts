import { test } from "node:test";
import assert from "node:assert/strict";
import { ArmSim } from "./ArmSim.ts";
import { RayCamera } from "./RayCamera.ts";

function countColour(img: { rgb: Uint8Array }, pred: (r: number, g: number, b: number) => boolean): number {
  let n = 0;
  for (let i = 0; i < img.rgb.length; i += 3) if (pred(img.rgb[i], img.rgb[i + 1], img.rgb[i + 2])) n++;
  return n;
}
const isRed = (r: number, g: number, b: number): boolean => r > 120 && g < 60 && b < 60;
const isGreen = (r: number, g: number, b: number): boolean => g > 120 && r < 80 && b < 100;

test("default camera sees the red cube and the green target, with finite depth on the table", async () => {
  const sim = await ArmSim.create({ task: "push_cube" });
  for (const seed of [0, 1, 2]) {
    sim.reset(seed);
    const cam = new RayCamera(sim);
    const img = cam.render();
    assert.equal(img.width, 64);
    assert.equal(img.rgb.length, 64 * 64 * 3);
    assert.equal(img.depth.length, 64 * 64);
    assert.ok(countColour(img, isRed) >= 15, `seed ${seed}: only ${countColour(img, isRed)} red pixels`);
    assert.ok(countColour(img, isGreen) >= 15, `seed ${seed}: only ${countColour(img, isGreen)} green pixels`);
    // The centre ray goes to the look-at point on the table top, ~0.62 m away along the axis.
    const d = img.depth[32 * 64 + 32];
    assert.ok(Number.isFinite(d) && d > 0.4 && d < 0.9, `centre depth ${d}`);
    cam.close();
  }
  sim.close();
});

test("rays that hit nothing have infinite depth and background colour", async () => {
  const sim = await ArmSim.create({ task: "push_cube" });
  const cam = new RayCamera(sim, { width: 16, height: 8, position: [0.2, 0, 0.5], lookAt: [0.2, 0, 2] });
  const img = cam.render();
  assert.ok(img.depth.every((d) => d === Infinity));
  assert.equal(countColour(img, isRed), 0);
  cam.close();
  sim.close();
});

test("moving the cube out of view removes the red pixels", async () => {
  const sim = await ArmSim.create({ task: "push_cube" });
  sim.reset(0);
  const mj = sim.mujoco;
  const adr = (sim.model.jnt_qposadr as Int32Array)[mj.mj_name2id(sim.model, mj.mjtObj.mjOBJ_JOINT.value, "cube")];
  (sim.data.qpos as Float64Array).set([-1.5, 1.5, -0.4], adr);
  mj.mj_forward(sim.model, sim.data);
  const cam = new RayCamera(sim);
  assert.equal(countColour(cam.render(), isRed), 0);
  cam.close();
  sim.close();
});
