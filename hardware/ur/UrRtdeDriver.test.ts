/**
 * The UR driver against the RTDE controller simulator over loopback TCP: setup sequence, 500 / 125 Hz,
 * servoj through input registers, the script's RTDE watchdog, and the bad cases (recipe rejected, old
 * protocol, protective stop, arm not powered).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { RtdeControllerSim } from "./RtdeControllerSim.ts";
import { UrRtdeDriver, renderServojScript, SERVOJ_SCRIPT } from "./UrRtdeDriver.ts";
import { RtdeError } from "./RtdeError.ts";
import { TcpTransport } from "../transport/TcpTransport.ts";
import type { ByteTransport } from "../transport/ByteTransport.ts";
import { encodeValues, decodeValues, splitPackages, rtdePackage } from "./rtdeProtocol.ts";

const UR = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await sleep(5);
  }
}

function driverFor(sim: RtdeControllerSim, extra: Partial<ConstructorParameters<typeof UrRtdeDriver>[0]> = {}) {
  const transports: ByteTransport[] = [];
  const d = new UrRtdeDriver({
    host: "127.0.0.1",
    port: sim.rtdePort,
    scriptPort: sim.primaryPort,
    frequency: 500,
    joints: UR,
    lower: Array(6).fill(-6),
    upper: Array(6).fill(6),
    timeoutMs: 1500,
    connect: async (h, p, what) => {
      const t = await TcpTransport.connect(h, p, { what });
      transports.push(t);
      return t;
    },
    ...extra,
  });
  return { d, transports };
}

test("RTDE wire format: package header, recipe values round trip (guide §Header, §Data types)", () => {
  const pkg = rtdePackage(86, Uint8Array.from([0, 2]));
  assert.deepEqual([...pkg], [0, 5, 86, 0, 2]);
  const types = ["DOUBLE", "VECTOR6D", "INT32", "UINT32", "BOOL"] as const;
  const vals = [1.5, [1, 2, 3, 4, 5, 6], -7, 4000000000, true];
  assert.deepEqual(decodeValues([...types], encodeValues([...types], vals)), vals);
  const two = new Uint8Array([...pkg, ...rtdePackage(80), 0]);
  const r = splitPackages(two);
  assert.equal(r.packages.length, 2);
  assert.equal(r.rest.length, 1);
});

test("UR driver on the RTDE simulator: v2 setup at 500 Hz, INACTIVE refuses, servoj through registers, hold, stop", async () => {
  const sim = await RtdeControllerSim.start({ maxSpeed: 4 });
  const { d } = driverFor(sim);
  try {
    await d.configure();
    assert.equal(d.state, "inactive");
    assert.equal(d.client!.controllerVersion, "5.15.0.0");
    const r0 = d.read();
    assert.ok(r0.status.ok);
    assert.deepEqual(r0.reading!.position, [0, -1.57, 1.57, -1.57, -1.57, 0]);
    assert.match((d.write([0, 0, 0, 0, 0, 0]) as { error: string }).error, /inactive: commands are not taken/);
    assert.equal(sim.program, null);

    await d.activate();
    assert.equal(sim.stats.scripts, 1);
    const prog = sim.program as RtdeControllerSim["program"];
    assert.ok(prog && prog.servo && Math.abs(prog.servo.dt - 0.002) < 1e-9 && prog.servo.gain === 300 && prog.watchdogHz === 10);
    assert.match(sim.scripts[0], /rtde_set_watchdog\("input_int_register_25", 10\.0, "stop"\)/);
    const target = [0.2, -1.4, 1.4, -1.5, -1.6, 0.3];
    assert.ok(d.write(target).ok);
    await until(() => d.read().reading!.position.every((q, i) => Math.abs(q - target[i]) < 1e-6));
    assert.ok(sim.stats.inputPackages > 10);

    await d.deactivate();
    await sleep(20);
    assert.equal(sim.registers.get("input_int_register_24"), 0, "deactivate: mode 0, the program idles and the arm holds");
    assert.equal(sim.runtimeState, 2);
    await d.close();
    await until(() => sim.runtimeState === 1);
    assert.equal(sim.program, null, "close: mode 2 ends the program");
  } finally {
    await d.close();
    await sim.stop();
  }
});

test("a stall of the simulator's own process (host and controller both frozen) is not host silence: no watchdog stop", async () => {
  const sim = await RtdeControllerSim.start();
  const { d } = driverFor(sim, { frequency: 125 });
  try {
    await d.configure();
    await d.activate();
    assert.ok(d.write([1, -1, 1, -1, -1, 1]).ok);
    await sleep(30);
    for (const ms of [300, 1500]) {
      const end = performance.now() + ms; // the event loop frozen: the simulator's cycles come due all at once after
      while (performance.now() < end);
      await sleep(100);
    }
    assert.equal(sim.stats.watchdogStops, 0, "the 10 Hz watchdog counted the simulator's own backlog");
    assert.equal(sim.runtimeState, 2);
    assert.equal(d.fault ?? "", "");
  } finally {
    await d.close().catch(() => undefined);
    await sim.stop();
  }
});

test("the script's RTDE watchdog stops the arm when rlft dies mid-motion", async () => {
  const sim = await RtdeControllerSim.start();
  const { d, transports } = driverFor(sim, { frequency: 125 });
  try {
    await d.configure();
    await d.activate();
    assert.ok(d.write([1, -1, 1, -1, -1, 1]).ok);
    await sleep(30);
    transports[0].close(); // the RTDE link drops without a goodbye
    await until(() => sim.stats.watchdogStops === 1, 2000);
    assert.equal(sim.runtimeState, 1);
    assert.deepEqual(sim.qd, [0, 0, 0, 0, 0, 0]);
  } finally {
    await d.close().catch(() => undefined);
    await sim.stop();
  }
});

test("protective stop: commands refused with the fix; re-activation refused until it is cleared", async () => {
  const sim = await RtdeControllerSim.start();
  const { d } = driverFor(sim);
  try {
    await d.configure();
    await d.activate();
    sim.protectiveStop();
    await until(() => d.safetyMode === "PROTECTIVE_STOP");
    await sleep(10);
    const w = d.write([0, 0, 0, 0, 0, 0]);
    assert.equal(w.ok, false);
    assert.match((w as { error: string }).error, /PROTECTIVE_STOP: commands are refused — .*clear the protective stop on the teach pendant/);
    assert.equal(sim.registers.get("input_int_register_24"), 0, "the driver switched to hold");
    await d.deactivate();
    await assert.rejects(d.activate(), (e: RtdeError) => e.code === "PROTECTIVE_STOP");
    sim.clearProtectiveStop();
    await sleep(10);
    await d.activate();
    assert.ok(d.write([0, -1.5, 1.5, -1.5, -1.5, 0]).ok);
  } finally {
    await d.close();
    await sim.stop();
  }
});

test("bad setups: inputs owned by a fieldbus (IN_USE), old protocol, CB3 at 500 Hz, arm powered off, nothing listening", async () => {
  const sim = await RtdeControllerSim.start();
  try {
    sim.inUse.add("input_int_register_24");
    await assert.rejects(driverFor(sim).d.configure(), (e: RtdeError) => e.code === "RECIPE_REJECTED" && /input_int_register_24 IN_USE — another RTDE client or a fieldbus/.test(e.message));
    sim.inUse.clear();
    sim.robotMode = 3; // POWER_OFF
    const { d } = driverFor(sim);
    await d.configure();
    await assert.rejects(d.activate(), /POWER_OFF, not RUNNING — power it on and release the brakes/);
    await d.close();
  } finally {
    await sim.stop();
  }
  const old = await RtdeControllerSim.start({ maxProtocolVersion: 1 });
  await assert.rejects(driverFor(old).d.configure(), (e: RtdeError) => e.code === "VERSION_REJECTED");
  await old.stop();
  const cb3 = await RtdeControllerSim.start({ version: [3, 15, 7, 0] });
  await assert.rejects(driverFor(cb3).d.configure(), /at most 125 Hz — set driver.frequency: 125/);
  await cb3.stop();
  await assert.rejects(driverFor({ rtdePort: 1, primaryPort: 1 } as RtdeControllerSim).d.configure(), /Cannot connect to the UR controller's RTDE interface at 127\.0\.0\.1:1: ECONNREFUSED/);
});

test("the shipped URScript has every placeholder filled in", () => {
  assert.ok(existsSync(SERVOJ_SCRIPT));
  const s = renderServojScript({ dt: 0.008, lookaheadTime: 0.1, gain: 300, watchdogHz: 10 });
  assert.doesNotMatch(s, /\{\{/);
  assert.match(s, /servoj\(q, 0, 0, 0\.0080, 0\.100, 300\)/);
});
