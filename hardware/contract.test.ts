/**
 * The ArmDriver contract (contract.ts) against every driver over its simulator, with the faults each simulator can
 * inject: sim (MuJoCo push_cube arm), feetech and dynamixel (ServoBusSim behind a socat pty pair, through the real
 * serialport stack), ur_rtde (RtdeControllerSim on loopback TCP), ros2_control (a controller_manager double).
 */
import { connect } from "node:net";
import { armDriverContract, type DriverHarness } from "./contract.ts";
import { SimArmDriver } from "./sim/SimArmDriver.ts";
import { openPtyPair, socatBin } from "./transport/PtyPair.ts";
import { SerialTransport } from "./transport/SerialTransport.ts";
import { ServoBusSim } from "./servo/ServoBusSim.ts";
import { ServoArmDriver } from "./servo/ServoArmDriver.ts";
import { openServoBus } from "./servo/openServoBus.ts";
import { feetechProtocol } from "./feetech/feetechProtocol.ts";
import { dynamixelProtocol } from "./dynamixel/dynamixelProtocol.ts";
import { STS3215 } from "./feetech/STS3215.ts";
import { XL330 } from "./dynamixel/XL330.ts";
import { RtdeControllerSim } from "./ur/RtdeControllerSim.ts";
import { UrRtdeDriver } from "./ur/UrRtdeDriver.ts";
import { TcpTransport } from "./transport/TcpTransport.ts";
import type { ByteTransport } from "./transport/ByteTransport.ts";
import { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import { Ros2ControlDriver } from "./ros2control/Ros2ControlDriver.ts";
import { FAKE_ARM, fakeRos2Control } from "./ros2control/fakeRos2Control.ts";

const quiet = { warn: () => undefined, info: () => undefined };
const noSocat = socatBin() ? false : "socat is not installed (sudo apt-get install socat)";

armDriverContract("sim", async (): Promise<DriverHarness> => {
  const driver = await SimArmDriver.create({ task: "push_cube", controlHz: 20 });
  const mid = driver.jointLower.map((lo, i) => (lo + driver.jointUpper[i]) / 2);
  return { driver, target: mid.map((m, i) => Math.min(driver.jointUpper[i] - 0.1, m + 0.15)), tolerance: 0.05, advance: () => driver.advance(), faults: [], close: async () => driver.sim.close() };
});

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

armDriverContract("feetech (STS3215 over servo-sim)", () => servoHarness("feetech"), {
  skip: noSocat,
  faults: ["overload on servo 2", "input voltage out of range on servo 3", "servo 2 stops answering"],
});
armDriverContract("dynamixel (XL330 over servo-sim)", () => servoHarness("dynamixel"), { skip: noSocat, faults: ["overload shutdown on servo 2", "Bus Watchdog tripped on servo 1"] });

armDriverContract(
  "ur_rtde (over ur-sim)",
  async (): Promise<DriverHarness> => {
    const sim = await RtdeControllerSim.start({ maxSpeed: 6 });
    const transports: ByteTransport[] = [];
    const driver = new UrRtdeDriver({
      host: "127.0.0.1",
      port: sim.rtdePort,
      scriptPort: sim.primaryPort,
      frequency: 500,
      joints: ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"],
      lower: Array(6).fill(-3),
      upper: Array(6).fill(3),
      timeoutMs: 2000,
      logger: quiet,
      connect: async (h, p, what) => {
        const t = await TcpTransport.connect(h, p, { what });
        transports.push(t);
        return t;
      },
    });
    const still = () => sim.qd.every((v) => v === 0);
    return {
      driver,
      target: [0.2, -1.4, 1.4, -1.5, -1.6, 0.3],
      tolerance: 1e-3,
      holding: () => still() && sim.robotMode === 7,
      faults: [
        { name: "protective stop", inject: () => sim.protectiveStop(), expect: /PROTECTIVE_STOP: commands are refused.*collision detected/, after: "held", clear: () => sim.clearProtectiveStop() },
        { name: "safeguard stop", inject: () => sim.safeguardStop(), expect: /SAFEGUARD_STOP.*safeguard/, after: "held", clear: () => sim.clearProtectiveStop() },
        {
          name: "emergency stop",
          inject: () => sim.emergencyStop(),
          expect: /ROBOT_EMERGENCY_STOP.*emergency stop/,
          after: "limp",
          clear: () => {
            sim.clearProtectiveStop();
            sim.robotMode = 7; // reset, power on, brake release on the pendant
          },
        },
        {
          name: "another program replaces rlft_servoj",
          inject: () =>
            new Promise<void>((resolve) => {
              const s = connect(sim.primaryPort, "127.0.0.1", () => s.end('def other():\n  textmsg("hello")\n  sleep(5)\nend\n', () => resolve()));
            }),
          expect: /rlft_servoj stopped on UR controller 127\.0\.0\.1: rlft_servoj: replaced by other/,
          after: "held",
          clear: () => undefined,
        },
      ],
      watchdog: {
        // The RTDE link drops without a goodbye: the script's rtde_set_watchdog stops the program.
        silence: async () => void (await transports[0].close()),
        stopped: () => sim.stats.watchdogStops > 0 && still(),
      },
      close: () => sim.stop(),
    };
  },
  { faults: ["protective stop", "safeguard stop", "emergency stop", "another program replaces rlft_servoj"] },
);

armDriverContract(
  "ros2_control (controller_manager double)",
  async (): Promise<DriverHarness> => {
    const rt = await EmbeddedRuntime.create({ clock: "wall", logLevel: "error" });
    const fake = fakeRos2Control(rt.createNode("controller_manager"), "forward");
    const driver = new Ros2ControlDriver({ node: rt.createNode("arm_bridge"), joints: FAKE_ARM, lower: [-1, -1, -1], upper: [1, 1, 1], command: "forward", staleSec: 0.3 });
    return {
      driver,
      target: [0.5, -0.5, 0.25],
      tolerance: 1e-9,
      faults: [{ name: "joint_state_broadcaster stops", inject: () => fake.stop(), expect: /no joint state on \/joint_states for .* is the ros2_control node alive/ }],
      close: async () => {
        fake.stop();
        await rt.shutdown();
      },
    };
  },
  { faults: ["joint_state_broadcaster stops"] },
);
