/**
 * Both servo buses end to end through the real `serialport` stack: a pty pair from socat, the bus simulator
 * on one end, ServoBus / ServoArmDriver on the other. Covers ping / read / write / sync read / sync write,
 * torque handling, INACTIVE refusing commands, and the bad-input cases (silent servo, checksum errors, busy port).
 */
import { test, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { openPtyPair, socatBin, type PtyPair } from "../transport/PtyPair.ts";
import { SerialTransport } from "../transport/SerialTransport.ts";
import { TransportError } from "../transport/TransportError.ts";
import { ServoBus } from "./ServoBus.ts";
import { ServoBusSim } from "./ServoBusSim.ts";
import { ServoArmDriver, type ServoJoint } from "./ServoArmDriver.ts";
import { openServoBus } from "./openServoBus.ts";
import { ServoError } from "./ServoError.ts";
import { describeServoFault } from "./servoFaults.ts";
import { FAULT_BITS, type ServoFault } from "./servoSimRules.ts";
import { feetechProtocol } from "../feetech/feetechProtocol.ts";
import { dynamixelProtocol } from "../dynamixel/dynamixelProtocol.ts";
import { STS3215 } from "../feetech/STS3215.ts";
import { XL330 } from "../dynamixel/XL330.ts";
import { XL430 } from "../dynamixel/XL430.ts";

const skip = socatBin() ? false : "socat is not installed (sudo apt-get install socat)";
let pty: PtyPair;
let simSide: SerialTransport;

// A fresh pty pair per test: on a loaded machine, bytes still in flight when one test ends (a late reply, a
// retried request) would otherwise reach the next test's bus as noise.
beforeEach(async () => {
  if (skip) return;
  pty = await openPtyPair();
  simSide = await SerialTransport.open(pty.b, { baudRate: 1_000_000 });
});
afterEach(async () => {
  await simSide?.close();
  await pty?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await sleep(10);
  }
}

const joints = (ids: number[]): ServoJoint[] => ids.map((id, i) => ({ name: `j${i}`, id, zeroTicks: 2048, direction: i % 2 ? -1 : 1, lower: -2, upper: 2 }));

type DriverOptions = ConstructorParameters<typeof ServoArmDriver>[0];
/** A ServoArmDriver on the test's pty: 100 Hz, 0.5 s stale, hold on deactivate and fault, unless `o` says otherwise. */
function armDriver(bus: "feetech" | "dynamixel", ids: number[], o: Partial<DriverOptions> & { timeoutMs?: number; retries?: number } = {}): ServoArmDriver {
  const { timeoutMs = 1000, retries, ...rest } = o;
  const model = bus === "feetech" ? "sts3215" : "xl330";
  return new ServoArmDriver({
    openBus: () => openServoBus({ bus, port: pty.a, baudRate: 1_000_000, model, timeoutMs, ...(retries === undefined ? {} : { retries }) }),
    joints: joints(ids),
    loopHz: 100,
    staleSec: 0.5,
    onDeactivate: "hold",
    onFault: "hold",
    ...rest,
  });
}

test("Feetech STS3215 bus over a pty: ping, read, write, sync read/write against the simulator", { skip }, async () => {
  const sim = new ServoBusSim(simSide, { protocol: feetechProtocol, model: STS3215, ids: [1, 2, 3] });
  const { bus, close } = await openServoBus({ bus: "feetech", port: pty.a, baudRate: 1_000_000, model: "sts3215", timeoutMs: 1000 });
  try {
    assert.equal(await bus.ping(2), 777);
    assert.equal(await bus.read(1, "Present_Position"), 2048);
    await bus.write(3, "Torque_Enable", 1);
    assert.equal(sim.get(3, "Torque_Enable"), 1);
    await bus.syncWrite("Goal_Position", [
      { id: 1, value: 1000 },
      { id: 2, value: 3000 },
    ]);
    await until(() => sim.goals.get(2) === 3000);
    sim.set(1, "Present_Position", 1234);
    const v = await bus.syncRead([1, 2, 3], ["Present_Position", "Present_Velocity"]);
    assert.deepEqual(v.map((r) => r[0]), [1234, 2048, 2048]);
    assert.equal(sim.stats.syncReads, 1);
  } finally {
    await close();
    sim.dispose();
  }
});

test("Feetech bad input: a silent servo is named, checksum errors are retried then reported", { skip }, async () => {
  const sim = new ServoBusSim(simSide, { protocol: feetechProtocol, model: STS3215, ids: [1, 2, 3] });
  const t = await SerialTransport.open(pty.a, { baudRate: 1_000_000 });
  const bus = new ServoBus(t, feetechProtocol, STS3215, { timeoutMs: 300, retries: 2 });
  try {
    sim.silent.add(2);
    await assert.rejects(bus.syncRead([1, 2, 3], ["Present_Position"]), (e: ServoError) => e.code === "NO_REPLY" && e.ids.includes(2) && /servo 2.*did not answer.*powered/.test(e.message));
    sim.silent.clear();
    sim.corruptReplies = 1; // one flipped reply: the retry gets a good one
    assert.equal(await bus.read(1, "Model_Number"), 777);
    assert.ok(bus.stats.retries >= 1);
    sim.corruptReplies = 10;
    await assert.rejects(bus.read(1, "Model_Number"), (e: ServoError) => e.code === "CHECKSUM" && /checksum mismatch.*check the cable/.test(e.message));
    sim.corruptReplies = 0;
    // A latched hardware error (Status register bit 5, overload) comes back in every status packet.
    sim.set(3, "Status", 0x20);
    await assert.rejects(bus.read(3, "Present_Position"), (e: ServoError) => e.code === "SERVO_ERROR" && /servo 3 \(STS3215\).*reports: overload.*check the supply voltage and the load/.test(e.message));
    sim.set(3, "Status", 0);
    // The port is held exclusively: a second program gets a clear "busy".
    await assert.rejects(SerialTransport.open(pty.a, { baudRate: 1_000_000 }), (e: TransportError) => e.code === "PORT_BUSY" && /in use by another program/.test(e.message));
    await assert.rejects(SerialTransport.open("/dev/ttyRLFT_NOPE", { baudRate: 1_000_000 }), (e: TransportError) => e.code === "PORT_NOT_FOUND");
  } finally {
    bus.dispose();
    await t.close();
    sim.dispose();
  }
});

test("ServoArmDriver on Feetech: INACTIVE reads but refuses commands; active commands become Goal_Position packets; torque off on deactivate", { skip }, async () => {
  const sim = new ServoBusSim(simSide, { protocol: feetechProtocol, model: STS3215, ids: [1, 2, 3], maxSpeed: 20000 });
  const driver = armDriver("feetech", [1, 2, 3], { onDeactivate: "torque_off" });
  try {
    await driver.configure();
    assert.equal(driver.state, "inactive");
    const r0 = driver.read();
    assert.ok(r0.status.ok);
    assert.deepEqual(r0.reading!.position, [0, 0, 0]);
    const refused = driver.write([0.1, 0.1, 0.1]);
    assert.equal(refused.ok, false);
    assert.match((refused as { error: string }).error, /inactive: commands are not taken/);
    assert.equal(sim.stats.goalWrites, 0);

    await driver.activate();
    await until(() => [1, 2, 3].every((id) => sim.get(id, "Torque_Enable") === 1));
    assert.ok(driver.write([0.5, 0.5, -5]).ok);
    // 0.5 rad = 326 ticks; joint 1 turns the other way; joint 2 is clamped to its lower limit -2 rad.
    await until(() => sim.goals.get(1) === 2048 + 326 && sim.goals.get(2) === 2048 - 326 && sim.goals.get(3) === 2048 - 1304);
    await until(() => {
      const q = driver.read().reading!.position;
      return Math.abs(q[0] - 0.5) < 0.01 && Math.abs(q[2] + 2) < 0.01;
    });
    const r = driver.read().reading!;
    assert.ok(Math.abs(r.position[1] - 0.5) < 0.01 && Math.abs(r.position[2] + 2) < 0.01, `read back ${r.position}`);
    assert.equal(driver.write([NaN, 0, 0]).ok, false);

    await driver.deactivate();
    await until(() => [1, 2, 3].every((id) => sim.get(id, "Torque_Enable") === 0));
    assert.equal(driver.write([0, 0, 0]).ok, false);
  } finally {
    await driver.close();
    sim.dispose();
  }
});

test("ServoArmDriver configure names every servo that does not answer, and a wrong model", { skip }, async () => {
  const sim = new ServoBusSim(simSide, { protocol: feetechProtocol, model: STS3215, ids: [1, 2] });
  const open = () => openServoBus({ bus: "feetech", port: pty.a, baudRate: 1_000_000, model: "sts3215", timeoutMs: 300, retries: 0 });
  try {
    const d = new ServoArmDriver({ openBus: open, joints: joints([1, 2, 5, 6]), loopHz: 50, staleSec: 0.5, onDeactivate: "hold", onFault: "hold" });
    await assert.rejects(d.configure(), (e: ServoError) => e.code === "NO_REPLY" && /j2 \(id 5\), j3 \(id 6\) did not answer a ping.*power supply/.test(e.message));
    assert.equal(d.state, "unconfigured");
    // The port was released: the next driver can open it.
    const wrongModel = new ServoArmDriver({ openBus: open, joints: [{ ...joints([1])[0], model: { ...STS3215, modelNumber: 9999, name: "STS9999" } }], loopHz: 50, staleSec: 0.5, onDeactivate: "hold", onFault: "hold" });
    await assert.rejects(wrongModel.configure(), /model 777, expected 9999 \(STS9999\)/);
  } finally {
    sim.dispose();
  }
});

test("Dynamixel (Koch: XL430 + XL330 on one bus) through ServoArmDriver; the Bus Watchdog stops the servos when the host goes silent", { skip }, async () => {
  const sim = new ServoBusSim(simSide, { protocol: dynamixelProtocol, model: XL330, ids: [1, 2], maxSpeed: 20000 });
  const driver = armDriver("dynamixel", [1, 2], { onFault: "torque_off", busWatchdogMs: 100 });
  try {
    await driver.configure();
    await driver.activate();
    await until(() => sim.get(1, "Torque_Enable") === 1);
    assert.equal(sim.get(1, "Bus_Watchdog"), 5);
    assert.ok(driver.write([1, 1]).ok);
    await until(() => Math.abs(driver.read().reading!.position[0] - 1) < 0.01 && Math.abs(driver.read().reading!.position[1] - 1) < 0.01);
    assert.equal(sim.goals.get(1), 2048 + 652);
    await driver.deactivate(); // hold: torque stays on
    assert.equal(sim.get(1, "Torque_Enable"), 1);
    await driver.close();
    await sleep(150);
    assert.equal(sim.get(1, "Bus_Watchdog"), -1, "the watchdog trips once the host stops talking");
  } finally {
    await driver.close();
    sim.dispose();
  }
  // XL430 reports a different model number: configuring it as XL330 fails with both names.
  const sim430 = new ServoBusSim(simSide, { protocol: dynamixelProtocol, model: XL430, ids: [1] });
  try {
    const d = new ServoArmDriver({ openBus: () => openServoBus({ bus: "dynamixel", port: pty.a, baudRate: 1_000_000, model: "xl330", timeoutMs: 1000 }), joints: joints([1]), loopHz: 50, staleSec: 0.5, onDeactivate: "hold", onFault: "hold" });
    await assert.rejects(d.configure(), /model 1060, expected 1200 \(XL330-M288-T\)/);
  } finally {
    sim430.dispose();
  }
});

test("a servo that stops answering while active: read() names it, then the driver faults and switches torque off as configured", { skip }, async () => {
  const sim = new ServoBusSim(simSide, { protocol: feetechProtocol, model: STS3215, ids: [1, 2, 3] });
  const warnings: string[] = [];
  const driver = armDriver("feetech", [1, 2, 3], { timeoutMs: 300, retries: 0, staleSec: 0.05, onFault: "torque_off", faultAfter: 3, logger: { warn: (m) => warnings.push(m), info: () => undefined } });
  try {
    await driver.configure();
    await driver.activate();
    await until(() => sim.get(1, "Torque_Enable") === 1);
    sim.silent.add(2);
    await until(() => driver.stats.faults === 1);
    const w = driver.write([0, 0, 0]);
    assert.equal(w.ok, false);
    assert.match((w as { error: string }).error, /servo arm fault, commands are not taken: servo bus fault after 3 failed cycles on j1 \(id 2\): feetech servo 2 .* did not answer sync read/);
    await sleep(60);
    assert.match((driver.read().status as { error: string }).error, /no fresh servo reading .* servo 2/);
    // Torque off went out as a broadcast: the servos still listening let go.
    await until(() => sim.get(1, "Torque_Enable") === 0 && sim.get(3, "Torque_Enable") === 0);
    assert.match(warnings.join("\n"), /servo bus fault after 3 failed cycles.*switching torque off/);
  } finally {
    await driver.close();
    sim.dispose();
  }
});

test("a Feetech servo that still reports its fault keeps the arm inactive at activate, naming it, until the cause is gone", { skip }, async () => {
  const sim = new ServoBusSim(simSide, { protocol: feetechProtocol, model: STS3215, ids: [1, 2, 3] });
  const warnings: string[] = [];
  const driver = armDriver("feetech", [1, 2, 3], { timeoutMs: 500, loopHz: 50, logger: { warn: (m) => warnings.push(m), info: () => undefined } });
  try {
    await driver.configure();
    sim.injectFault(2, "overheating");
    await assert.rejects(driver.activate(), (e: ServoError) => e.code === "SERVO_ERROR" && /j1 \(feetech id 2, STS3215\) reports overheating .*the arm stays inactive/.test(e.message));
    assert.equal(driver.state, "inactive");
    sim.clearFault(2);
    await driver.activate();
    assert.equal(driver.state, "active");
  } finally {
    await driver.close();
    sim.dispose();
  }
});

test("goals beyond a servo's Min/Max_Position_Limit are clamped to them (read at configure), with one warning per servo naming it and its joint", { skip }, async () => {
  // Dynamixel in Position Control Mode refuses such a goal (Data Limit Error) and the sync write has no reply:
  // without the clamp the servo would silently stay where it is.
  const sim = new ServoBusSim(simSide, { protocol: dynamixelProtocol, model: XL330, ids: [1, 2], maxSpeed: 20000 });
  sim.set(1, "Max_Position_Limit", 2300);
  sim.set(2, "Min_Position_Limit", 1500);
  const warnings: string[] = [];
  const driver = armDriver("dynamixel", [1, 2], { logger: { warn: (m) => warnings.push(m), info: () => undefined } });
  try {
    await driver.configure();
    await driver.activate();
    // 1 rad = 652 ticks: servo 1 wants 2700 (> 2300), servo 2 turns the other way and wants 1396 (< 1500).
    assert.ok(driver.write([1, 1]).ok);
    await until(() => sim.goals.get(1) === 2300 && sim.goals.get(2) === 1500);
    const lim1 = ((2300 - 2048) * 2 * Math.PI) / 4096;
    await until(() => Math.abs(driver.read().reading!.position[0] - lim1) < 0.01 && Math.abs(driver.read().reading!.position[1] - lim1 * ((2048 - 1500) / (2300 - 2048))) < 0.01);
    assert.equal(driver.fault, "", "a clamped goal is no fault");
    assert.ok(driver.write([1.1, 1.1]).ok);
    await until(() => driver.stats.clampedGoals >= 2 * 2);
    const clampWarnings = warnings.filter((w) => /Min\/Max_Position_Limit/.test(w));
    assert.equal(clampWarnings.length, 2, clampWarnings.join("\n"));
    assert.match(clampWarnings.find((w) => w.startsWith("j0"))!, /^j0 \(dynamixel id 1\): goal 1\.000 rad = 2700 ticks is outside the servo's Min\/Max_Position_Limit \[0, 2300\]; clamped to 2300/);
    assert.match(clampWarnings.find((w) => w.startsWith("j1"))!, /^j1 \(dynamixel id 2\): goal 1\.000 rad = 1396 ticks is outside the servo's Min\/Max_Position_Limit \[1500, 4095\]; clamped to 1500/);
    // Within the limits nothing is clamped.
    const before = driver.stats.clampedGoals;
    assert.ok(driver.write([0.1, 0.1]).ok);
    await until(() => sim.goals.get(1) === 2048 + 65);
    assert.equal(driver.stats.clampedGoals, before);
  } finally {
    await driver.close();
    sim.dispose();
  }
});

test("every fault the simulators inject is named by the driver's fault line (Feetech status bits, Dynamixel Hardware Error Status)", { skip }, async () => {
  const names: Record<ServoFault, RegExp> = {
    voltage: /input voltage|Input Voltage Error/,
    angle_sensor: /angle sensor error/,
    overheating: /overheating|Overheating Error/,
    overcurrent: /overcurrent/,
    angle: /angle error/,
    overload: /overload|Overload Error/,
    encoder: /Motor Encoder Error/,
    electrical_shock: /Electrical Shock Error/,
  };
  for (const family of ["feetech", "dynamixel"] as const) {
    const faults = Object.keys(FAULT_BITS[family]) as ServoFault[];
    const ids = faults.map((_, i) => i + 1);
    const sim = new ServoBusSim(simSide, family === "feetech" ? { protocol: feetechProtocol, model: STS3215, ids } : { protocol: dynamixelProtocol, model: XL330, ids });
    const { bus, close } = await openServoBus({ bus: family, port: pty.a, baudRate: 1_000_000, model: family === "feetech" ? "sts3215" : "xl330", timeoutMs: 1000 });
    try {
      for (const [i, f] of faults.entries()) sim.injectFault(ids[i], f);
      const { errors } = await bus.syncReadStatus(ids, ["Present_Position"]);
      for (const [i, f] of faults.entries()) {
        assert.notEqual(errors[i], 0, `${family} ${f}: no status error bit`);
        const line = await describeServoFault(bus, { name: `joint_${f}`, id: ids[i] }, errors[i]);
        assert.match(line, new RegExp(`^joint_${f} \\(${family} id ${ids[i]}, `), line);
        assert.match(line, names[f], `${family} ${f}: ${line}`);
        for (const g of faults) if (g !== f) assert.doesNotMatch(line.split(" — ")[0], names[g], `${family} ${f} also reads as ${g}: ${line}`);
      }
    } finally {
      await close();
      sim.dispose();
    }
  }
});
