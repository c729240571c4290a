/** `rlft ur-sim`: a simulated UR e-Series controller (RTDE + secondary interface) on loopback, to try launch/ur5e.yaml without a robot. */
import type { Command } from "commander";
import { tcpPort } from "../numberOption.ts";
import { RtdeControllerSim } from "../../hardware/ur/RtdeControllerSim.ts";
import { ROBOT_MODE, RUNTIME_STATE, SAFETY_MODE } from "../../hardware/ur/rtdeProtocol.ts";

/** Registers ur-sim. */
export function registerUrSimCommand(program: Command): void {
  program
    .command("ur-sim")
    .description("Simulate a UR e-Series controller's RTDE (30004) and secondary (30002) interfaces on 127.0.0.1; press p for a protective stop, c to clear it")
    .option("--rtde-port <n>", "RTDE port", tcpPort({ allowZero: true }), 30004)
    .option("--secondary-port <n>", "secondary interface port (where the script goes)", tcpPort({ allowZero: true }), 30002)
    .addHelpText("after", "\nExample:\n  rlft ur-sim\n  # then, in another terminal (driver.host: 127.0.0.1):\n  rlft launch launch/ur5e.yaml --policy runs/ur5e/package\n")
    .action(async (o) => {
      const sim = await RtdeControllerSim.start({ rtdePort: o.rtdePort, secondaryPort: o.secondaryPort });
      console.log(`simulated UR controller: RTDE on 127.0.0.1:${sim.rtdePort}, secondary interface on 127.0.0.1:${sim.secondaryPort}`);
      console.log("keys: p protective stop, c clear it, q quit");
      const timer = setInterval(() => {
        const q = sim.q.map((x) => x.toFixed(3)).join(" ");
        process.stdout.write(`\r${ROBOT_MODE[sim.robotMode]} ${SAFETY_MODE[sim.safetyMode]} program ${RUNTIME_STATE[sim.runtimeState]}  q [${q}]   `);
      }, 250);
      await new Promise<void>((resolve) => {
        process.once("SIGINT", () => resolve());
        if (process.stdin.isTTY) {
          process.stdin.setRawMode(true);
          process.stdin.on("data", (d: Buffer) => {
            const k = d.toString();
            if (k === "p") sim.protectiveStop();
            if (k === "c") sim.clearProtectiveStop();
            if (k === "q" || k === "\u0003") resolve();
          });
        }
      });
      clearInterval(timer);
      if (process.stdin.isTTY) process.stdin.setRawMode(false);
      process.stdin.pause();
      console.log();
      await sim.stop();
    });
}
