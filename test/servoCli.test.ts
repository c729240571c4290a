/** `rlft servo-scan` and `rlft servo-sim` as a user runs them. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { openPtyPair, socatBin } from "../hardware/transport/PtyPair.ts";
import { SerialTransport } from "../hardware/transport/SerialTransport.ts";
import { ServoBusSim } from "../hardware/servo/ServoBusSim.ts";
import { dynamixelProtocol } from "../hardware/dynamixel/dynamixelProtocol.ts";
import { XL330 } from "../hardware/dynamixel/XL330.ts";
import { ServoBus } from "../hardware/servo/ServoBus.ts";
import { feetechProtocol } from "../hardware/feetech/feetechProtocol.ts";
import { STS3215 } from "../hardware/feetech/STS3215.ts";

const skip = socatBin() ? false : "socat is not installed (sudo apt-get install socat)";
const rlftSync = (args: string[]) => spawnSync(process.execPath, ["bin/rlft.js", ...args], { encoding: "utf8", timeout: 60_000 });

test("servo-sim, servo-scan and ur-sim have --help with an example", () => {
  for (const c of ["servo-sim", "servo-scan", "ur-sim"]) {
    const r = rlftSync([c, "--help"]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Example/);
  }
});

test("rlft servo-scan lists the servos that answer on a (simulated) Dynamixel bus", { skip }, async () => {
  const pty = await openPtyPair();
  const side = await SerialTransport.open(pty.b, { baudRate: 1_000_000 });
  const sim = new ServoBusSim(side, { protocol: dynamixelProtocol, model: XL330, ids: [2, 4] });
  try {
    const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const c = spawn(process.execPath, ["bin/rlft.js", "servo-scan", "--bus", "dynamixel", "--port", pty.a, "--ids", "1-5"], { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      c.stdout.on("data", (d: Buffer) => (out += d));
      c.stderr.on("data", (d: Buffer) => (out += d));
      c.on("exit", (code) => resolve({ code, out }));
    });
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /id 2: model 1200 \(XL330-M288-T\), position 2048/);
    assert.match(r.out, /id 4: model 1200/);
    assert.doesNotMatch(r.out, /id 3:/);
    assert.match(r.out, /2 servo\(s\) answered/);
  } finally {
    sim.dispose();
    await side.close();
    await pty.close();
  }
});

test("rlft servo-sim prints a port that a driver can use", { skip }, async () => {
  const child = spawn(process.execPath, ["bin/rlft.js", "servo-sim", "--bus", "feetech", "--ids", "1-3"], { stdio: ["ignore", "pipe", "pipe"] });
  try {
    const port = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d;
        const m = /connect to: (\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      child.on("exit", (code) => reject(new Error(`servo-sim exited ${code}: ${out}`)));
    });
    const t = await SerialTransport.open(port, { baudRate: 1_000_000 });
    const bus = new ServoBus(t, feetechProtocol, STS3215);
    assert.equal(await bus.ping(3), 777);
    bus.dispose();
    await t.close();
  } finally {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGINT");
    await exited;
  }
});

test("rlft calibrate arm --source feetech on a (simulated) bus: middle, then full range, file usable by the driver", { skip }, async () => {
  const { mkdtempSync, readFileSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { loadArmCalibration, ticksToRadians } = await import("../calibration/ArmCalibration.ts");
  const out = join(mkdtempSync(join(tmpdir(), "rlft-cal-")), "so100.json");
  const pty = await openPtyPair();
  const side = await SerialTransport.open(pty.b, { baudRate: 1_000_000 });
  const ids = [1, 2, 3, 4, 5, 6];
  const sim = new ServoBusSim(side, { protocol: feetechProtocol, model: STS3215, ids });
  const middle = [2100, 1830, 2260, 1990, 2048, 2500];
  const half = [1200, 1000, 1050, 1100, 1900, 600];
  ids.forEach((id, i) => sim.set(id, "Present_Position", middle[i]));
  // A Homing_Offset left in EEPROM (LeRobot writes one): Present = Actual − offset, which the source undoes.
  sim.set(2, "Homing_Offset", 30);
  sim.set(2, "Present_Position", middle[1] - 30);
  try {
    const r = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const c = spawn(process.execPath, ["bin/rlft.js", "calibrate", "arm", "--robot", "so100_test", "--source", "feetech", "--port", pty.a, "--yes", "--sweep-seconds", "2", "--out", out], { stdio: ["ignore", "pipe", "pipe"] });
      let o = "";
      let e = "";
      let swept = false;
      c.stdout.on("data", (d: Buffer) => (o += d));
      c.stderr.on("data", (d: Buffer) => {
        e += d;
        if (swept || !/ENTIRE range/.test(e)) return;
        swept = true;
        // The "person" moves each joint to both end stops and back (torque is off, so the servos stay put).
        void (async () => {
          for (const [k, x] of [-1, 1, 0].entries()) {
            ids.forEach((id, i) => i !== 4 && sim.set(id, "Present_Position", middle[i] + x * half[i] - (id === 2 ? 30 : 0)));
            await new Promise((res) => setTimeout(res, 250 + 50 * k));
          }
        })();
      });
      c.on("exit", (code) => resolve({ code, out: o, err: e }));
    });
    assert.equal(r.code, 0, r.err + r.out);
    assert.deepEqual(ids.map((id) => sim.get(id, "Torque_Enable")), [0, 0, 0, 0, 0, 0], "torque off for the person");
    assert.match(r.out, /wrote .*so100\.json/);
    assert.match(r.out, /- \{name: shoulder_pan, id: 1, zero_ticks: 2100, direction: 1, lower: -1\.841, upper: 1\.841\}/);
    const cal = loadArmCalibration(out);
    assert.ok(JSON.parse(readFileSync(out, "utf8")).format === "rlft-arm-calibration");
    const names = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];
    names.forEach((n, i) => {
      const j = cal.joints[n];
      assert.equal(j.homing_offset, middle[i] - 2047, n);
      assert.equal(ticksToRadians(middle[i], j), 0);
      if (n === "wrist_roll") assert.deepEqual([j.range_min, j.range_max], [0, 4095]);
      else assert.deepEqual([j.range_min, j.range_max], [2047 - half[i], 2047 + half[i]], n);
    });
  } finally {
    sim.dispose();
    await side.close();
    await pty.close();
  }
});
