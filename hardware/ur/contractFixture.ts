/**
 * The UR driver's ArmDriver contract fixture: RtdeControllerSim (RTDE + primary interface) on loopback TCP, with its
 * protective, safeguard and emergency stops, a replaced program, and the script's RTDE watchdog.
 */
import { connect } from "node:net";
import type { ContractFixture } from "../driverEntry.ts";
import type { DriverHarness } from "../contract.ts";
import { RtdeControllerSim } from "./RtdeControllerSim.ts";
import { UrRtdeDriver } from "./UrRtdeDriver.ts";
import { TcpTransport } from "../transport/TcpTransport.ts";
import type { ByteTransport } from "../transport/ByteTransport.ts";

const quiet = { warn: () => undefined, info: () => undefined };

export const urFixture: ContractFixture = {
  name: "ur_rtde (over ur-sim)",
  faults: ["protective stop", "safeguard stop", "emergency stop", "another program replaces rlft_servoj"],
  make: async (): Promise<DriverHarness> => {
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
      timeoutMs: 5000,
      // The simulator shares this process (and, in CI, two cores) with the driver: a stall of both must not read as
      // rlft going silent. The watchdog row below still proves the stop (its silence is indefinite).
      watchdogSec: 0.5,
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
};
