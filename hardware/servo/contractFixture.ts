/**
 * The servo drivers' ArmDriver contract fixture: three servos of ServoBusSim behind a socat pty pair, through the real
 * serialport stack, with the faults the simulated servos report (overload, voltage, silence, Bus Watchdog).
 */
import type { ContractFixture } from "../driverEntry.ts";
import type { DriverHarness } from "../contract.ts";
import { openPtyPair, socatBin } from "../transport/PtyPair.ts";
import { SerialTransport } from "../transport/SerialTransport.ts";
import { ServoBusSim } from "./ServoBusSim.ts";
import { ServoArmDriver } from "./ServoArmDriver.ts";
import { openServoBus } from "./openServoBus.ts";
import { feetechProtocol } from "../feetech/feetechProtocol.ts";
import { dynamixelProtocol } from "../dynamixel/dynamixelProtocol.ts";
import { STS3215 } from "../feetech/STS3215.ts";
import { XL330 } from "../dynamixel/XL330.ts";

const quiet = { warn: () => undefined, info: () => undefined };

/** A servo arm of three joints over a fresh pty pair. */
async function servoHarness(bus: "feetech" | "dynamixel"): Promise<DriverHarness & { sim: ServoBusSim }> {
  const pty = await openPtyPair();
  const side = await SerialTransport.open(pty.b, { baudRate: 1_000_000 });
  const sim = new ServoBusSim(side, { protocol: bus === "feetech" ? feetechProtocol : dynamixelProtocol, model: bus === "feetech" ? STS3215 : XL330, ids: [1, 2, 3], maxSpeed: 20000 });
  const driver = new ServoArmDriver({
    openBus: () => openServoBus({ bus, port: pty.a, baudRate: 1_000_000, model: bus === "feetech" ? "sts3215" : "xl330", timeoutMs: 500 }),
    joints: [1, 2, 3].map((id, i) => ({ name: `j${i}`, id, zeroTicks: 2048, direction: 1, lower: -1.5, upper: 1.5 })),
    loopHz: 100,
    staleSec: 0.5,
    onDeactivate: "hold",
    // Feetech: the driver switches every servo off (limp); Dynamixel: the others keep holding.
    onFault: bus === "feetech" ? "torque_off" : "hold",
    busWatchdogMs: bus === "dynamixel" ? 100 : undefined,
    logger: quiet,
  });
  const torque = () => [1, 3].map((id) => sim.get(id, "Torque_Enable"));
  const common = {
    driver,
    sim,
    target: [0.3, -0.2, 0.25],
    tolerance: 0.01,
    close: async () => {
      sim.dispose();
      await side.close();
      await pty.close();
    },
  };
  if (bus === "feetech") {
    return {
      ...common,
      holding: () => torque().every((t) => t === 1),
      faults: [
        { name: "overload on servo 2", inject: () => sim.injectFault(2, "overload"), expect: /j1 \(feetech id 2, STS3215\) reports overload/, after: "limp", clear: () => sim.clearFault(2) },
        { name: "input voltage out of range on servo 3", inject: () => sim.injectFault(3, "voltage"), expect: /j2 \(feetech id 3, STS3215\) reports input voltage out of range.*supply voltage/, after: "limp", clear: () => sim.clearFault(3) },
        { name: "servo 2 stops answering", inject: () => sim.silent.add(2), expect: /j1 \(id 2\).*did not answer/, after: "limp", clear: () => sim.silent.delete(2) },
      ],
    };
  }
  return {
    ...common,
    holding: () => torque().every((t) => t === 1),
    faults: [
      // e-Manual Shutdown(63): the servo switches its own torque off; the driver holds the others, reboots it on re-activation.
      { name: "overload shutdown on servo 2", inject: () => sim.injectFault(2, "overload"), expect: /j1 \(dynamixel id 2, XL330-M288-T\) reports Overload Error.*shut down.*reboots the servo/, after: "held", clear: () => undefined },
      { name: "Bus Watchdog tripped on servo 1", inject: () => sim.set(1, "Bus_Watchdog", -1), expect: /j0 \(dynamixel id 1\) tripped its Bus Watchdog/, after: "held", clear: () => undefined },
    ],
    watchdog: {
      silence: () => driver.close(),
      stopped: () => sim.get(1, "Bus_Watchdog") === -1,
    },
  };
}

/** The fixture of one bus. */
export function servoFixture(bus: "feetech" | "dynamixel"): ContractFixture {
  return {
    name: bus === "feetech" ? "feetech (STS3215 over servo-sim)" : "dynamixel (XL330 over servo-sim)",
    make: () => servoHarness(bus),
    skip: socatBin() ? false : "socat is not installed (sudo apt-get install socat)",
    faults: bus === "feetech" ? ["overload on servo 2", "input voltage out of range on servo 3", "servo 2 stops answering"] : ["overload shutdown on servo 2", "Bus Watchdog tripped on servo 1"],
  };
}
