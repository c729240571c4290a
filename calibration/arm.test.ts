import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRng } from "../sim/rng.ts";
import { SimServoArm, SO100_SIM_MOTORS } from "./SimServoArm.ts";
import { runArmCalibration, type CalibrationPrompter } from "./runArmCalibration.ts";
import { type JointCalibration, jointLimits, loadArmCalibration, parseArmCalibration, radiansToTicks, saveArmCalibration, ticksToRadians } from "./ArmCalibration.ts";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { EpisodeReader } from "../recording/EpisodeReader.ts";

const tmp = mkdtempSync(join(tmpdir(), "rlft-armcal-"));

/** A scripted person: moves the sim arm to the middle, then sweeps, confirming when the sweep is over. */
function scriptedPerson(arm: SimServoArm): CalibrationPrompter & { messages: string[]; progressCalls: number } {
  let step = 0;
  const p = {
    messages: [] as string[],
    progressCalls: 0,
    async confirm(message: string) {
      p.messages.push(message);
      if (step++ === 0) {
        arm.setPhase("middle");
        return;
      }
      arm.setPhase("sweep");
      while (!arm.sweepDone) await new Promise((r) => setTimeout(r, 1));
    },
    progress() {
      p.progressCalls++;
    },
  };
  return p;
}

test("arm calibration (middle, then full range): homing offsets make the middle read 0 rad, ranges match the end stops", async () => {
  const arm = new SimServoArm(SO100_SIM_MOTORS, { readsPerJoint: 12 });
  const person = scriptedPerson(arm);
  const cal = await runArmCalibration(arm, person, { robot: "so100_test", fullTurn: ["wrist_roll"], periodMs: 0, ids: [1, 2, 3, 4, 5, 6], now: () => "2026-01-01T00:00:00Z" });
  assert.ok(arm.torqueOff, "torque is off so a person can move the arm");
  assert.match(person.messages[0], /MIDDLE/);
  assert.match(person.messages[1], /ENTIRE range/);
  assert.ok(person.progressCalls > 0);
  for (const m of SO100_SIM_MOTORS) {
    const j = cal.joints[m.name];
    assert.equal(j.homing_offset, m.middleRaw - 2047, m.name);
    assert.equal(ticksToRadians(m.middleRaw, j), 0, `${m.name} middle → 0 rad`);
    if (m.name === "wrist_roll") {
      assert.deepEqual([j.range_min, j.range_max], [0, 4095]);
    } else {
      assert.equal(j.range_min, 2047 - m.halfRange, `${m.name} min`);
      assert.equal(j.range_max, 2047 + m.halfRange, `${m.name} max`);
    }
  }
  assert.equal(cal.joints.shoulder_pan.id, 1);
  const file = join(tmp, "so100_test.json");
  saveArmCalibration(file, cal);
  assert.deepEqual(loadArmCalibration(file), cal);
});

test("arm calibration: a joint that was not swept → error naming it and the fix", async () => {
  const motors = SO100_SIM_MOTORS.map((m) => (m.name === "elbow_flex" ? { ...m, halfRange: 20 } : m));
  const arm = new SimServoArm(motors, { readsPerJoint: 8 });
  await assert.rejects(runArmCalibration(arm, scriptedPerson(arm), { robot: "x", periodMs: 0, fullTurn: ["wrist_roll"] }), /barely moved during the sweep: elbow_flex \(4°\).*Run the calibration again/);
  await assert.rejects(runArmCalibration(arm, scriptedPerson(arm), { robot: "x", fullTurn: ["wrist_rol"] }), /--full-turn names "wrist_rol", which is not a motor/);
});

test("property: radians ↔ ticks round-trip inside the range and clamp outside it, either drive mode", () => {
  const rng = createRng(5);
  for (let k = 0; k < 200; k++) {
    const lo = Math.round(rng.uniform(200, 1800));
    const j: JointCalibration = { homing_offset: Math.round(rng.uniform(-2000, 2000)), range_min: lo, range_max: lo + Math.round(rng.uniform(400, 2000)), resolution: 4096, drive_mode: k % 2 === 0 ? 0 : 1 };
    const [a, b] = jointLimits(j);
    const x = rng.uniform(a, b);
    assert.ok(Math.abs(ticksToRadians(radiansToTicks(x, j), j) - x) <= Math.PI / 4096 + 1e-12);
    const beyond = ticksToRadians(radiansToTicks(b + 1, j), j);
    assert.ok(Math.abs(beyond - b) < 1e-9, "clamped to the range");
  }
});

test("calibration files: LeRobot's format loads; bad files name the file and the fix", () => {
  const lerobot = { shoulder_pan: { id: 1, drive_mode: 0, homing_offset: -1024, range_min: 800, range_max: 3300 } };
  const cal = parseArmCalibration(JSON.stringify(lerobot), "lerobot.json", "so100_follower");
  assert.equal(cal.robot, "so100_follower");
  assert.equal(cal.joints.shoulder_pan.resolution, 4096);
  assert.throws(() => parseArmCalibration("{", "broken.json"), /broken\.json: not JSON .*rlft calibrate arm/);
  assert.throws(() => parseArmCalibration(JSON.stringify({ a: { homing_offset: 0, range_min: 10, range_max: 5 } }), "bad.json"), /bad\.json: invalid arm calibration \(joints\.a: range_max must be greater/);
  assert.throws(() => loadArmCalibration(join(tmp, "missing.json")), /Cannot read arm calibration .*missing\.json: ENOENT; run `rlft calibrate arm/);
});

test("calibration ranges wider than one turn are refused, naming the file, the joint and the turn", () => {
  // Issue 24's physical bounds: a range of 1e9 ticks made limits of ±1.5e6 rad, which clamp nothing.
  const cal = (j: object) => JSON.stringify({ elbow_flex: { id: 3, drive_mode: 0, homing_offset: 0, ...j } });
  assert.throws(
    () => parseArmCalibration(cal({ range_min: -1e9, range_max: 1e9 }), "wide.json"),
    /wide\.json: invalid arm calibration \(joints\.elbow_flex\.range_max: range_min -1000000000 \.\. range_max 1000000000 spans 2000000000 ticks, wider than one turn \(4096 ticks = 2π rad\)/,
  );
  assert.throws(() => parseArmCalibration(cal({ range_min: 0, range_max: 5000 }), "wide.json"), /elbow_flex\.range_max: .*spans 5000 ticks, wider than one turn/);
  assert.throws(() => parseArmCalibration(cal({ range_min: 0, range_max: 600, resolution: 512 }), "wide.json"), /spans 600 ticks, wider than one turn \(512 ticks/);
  // Narrow but far from home (a turn or more away): its limits lie beyond one turn.
  assert.throws(() => parseArmCalibration(cal({ range_min: 20000, range_max: 20100 }), "far.json"), /far\.json: .*elbow_flex\.range_min: the calibrated range is \[[\d.]+, [\d.]+\] rad, outside the bound joint_range/);
  // A full-turn joint (0..resolution-1, as `rlft calibrate arm --full-turn` writes it) and a LeRobot range pass.
  const [lo, hi] = jointLimits(parseArmCalibration(cal({ range_min: 0, range_max: 4095 }), "ok.json").joints.elbow_flex);
  assert.ok(lo >= -Math.PI - 1e-9 && hi <= Math.PI, `${lo} ${hi}`);
});

test("the launch file's calibration is recorded into every episode's metadata", async () => {
  const arm = new SimServoArm(SO100_SIM_MOTORS, { readsPerJoint: 6 });
  const cal = await runArmCalibration(arm, scriptedPerson(arm), { robot: "rlft_arm5", periodMs: 0, fullTurn: ["wrist_roll"] });
  const file = join(tmp, "arm.json");
  saveArmCalibration(file, cal);
  const cfg = parseLaunch(`task: reach\nactor: {kind: expert}\ncamera: {enabled: false}\nepisodes: {max_steps: 5}\ncalibration: {arm: ${file}}\n`, "t.yaml");
  const out = join(tmp, "episodes");
  await runEpisodes(cfg, { count: 2, seed: 1, label: "test", recordTo: out, quiet: true });
  for (const f of ["episode_000000.mcap", "episode_000001.mcap"]) {
    const r = await EpisodeReader.open(join(out, f));
    const meta = r.metadata.get("rlft.episode")!;
    assert.deepEqual(JSON.parse(meta.calibration_arm), cal);
    assert.match(meta.calibration_arm_sha256, /^[0-9a-f]{64}$/);
    assert.equal(meta.calibration_arm_path, file);
  }
  const bad = join(tmp, "bad.json");
  writeFileSync(bad, "{}");
  const cfgBad = parseLaunch(`task: reach\nactor: {kind: expert}\ncamera: {enabled: false}\ncalibration: {camera: ${bad}}\n`, "t.yaml");
  await assert.rejects(runEpisodes(cfgBad, { count: 1, seed: 1, label: "test", recordTo: out, quiet: true }), /bad\.json: not a valid camera intrinsics file .*rlft calibrate intrinsics/);
});
