/**
 * `rlft ur-sim`: a simulated UR e-Series controller (RTDE, primary/secondary interfaces, dashboard server) on
 * loopback, to try launch/ur5e.yaml without a robot. Faults are injected with keys on a terminal, or with one
 * command per line on a piped stdin (how test/peers drives it): protective-stop, safeguard-stop, estop, clear,
 * local, remote, power-off, quit.
 */
import type { Command } from "commander";
import { tcpPort } from "../numberOption.ts";
import { createInterface } from "node:readline";
import { RtdeControllerSim } from "../../hardware/ur/RtdeControllerSim.ts";

function loopback(v: string): string {
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v) && v !== "localhost") throw new Error(`--host: the simulator listens on loopback only (127.x.y.z), got '${v}'`);
  return v;
}

function version(v: string): [number, number, number, number] {
  const p = v.split(".").map(Number);
  if (p.length !== 4 || p.some((x) => !Number.isInteger(x) || x < 0)) throw new Error(`--controller-version: expected major.minor.bugfix.build (e.g. 5.15.0.0), got '${v}'`);
  return p as [number, number, number, number];
}

/** Applies one fault/control command; returns what happened, or an error line. */
export function urSimCommand(sim: RtdeControllerSim, cmd: string): string {
  switch (cmd.trim()) {
    case "p":
    case "protective-stop":
      sim.protectiveStop();
      break;
    case "s":
    case "safeguard-stop":
      sim.safeguardStop();
      break;
    case "e":
    case "estop":
      sim.emergencyStop();
      break;
    case "c":
    case "clear":
      sim.clearProtectiveStop();
      break;
    case "l":
    case "local":
      sim.setControlMode("local");
      break;
    case "r":
    case "remote":
      sim.setControlMode("remote");
      break;
    case "power-off":
      sim.powerOff();
      break;
    case "stats":
      return JSON.stringify(sim.snapshot());
    case "":
      return "";
    default:
      return `unknown command '${cmd.trim()}' (protective-stop, safeguard-stop, estop, clear, local, remote, power-off, stats, quit)`;
  }
  return `ok: ${sim.describe()}`;
}

/** Registers ur-sim. */
export function registerUrSimCommand(program: Command): void {
  program
    .command("ur-sim")
    .description("Simulate a UR e-Series controller (RTDE 30004, primary 30001, secondary 30002, dashboard 29999) on loopback; keys: p protective stop, s safeguard stop, e e-stop, c clear, l/r local/remote, q quit")
    .option("--host <addr>", "loopback address to listen on (127.x.y.z)", loopback, "127.0.0.1")
    .option("--rtde-port <n>", "RTDE port", tcpPort({ allowZero: true }), 30004)
    .option("--primary-port <n>", "primary interface port (scripts in, robot state and messages out)", tcpPort({ allowZero: true }), 30001)
    .option("--secondary-port <n>", "secondary interface port (scripts in, robot state out)", tcpPort({ allowZero: true }), 30002)
    .option("--dashboard-port <n>", "dashboard server port", tcpPort({ allowZero: true }), 29999)
    .option("--controller-version <v>", "URControl version reported (3.x: CB3 at 125 Hz)", version, [5, 15, 0, 0])
    .option("--local", "start in Local control (programs from the network are refused)")
    .addHelpText("after", "\nExample:\n  rlft ur-sim\n  # then, in another terminal (driver.host: 127.0.0.1):\n  rlft launch launch/ur5e.yaml --policy runs/ur5e/package\n")
    .action(async (o) => {
      const sim = await RtdeControllerSim.start({
        host: o.host,
        rtdePort: o.rtdePort,
        primaryPort: o.primaryPort,
        secondaryPort: o.secondaryPort,
        dashboardPort: o.dashboardPort,
        version: o.controllerVersion,
        controlMode: o.local ? "local" : "remote",
      });
      // One parsable line per port: tests read them (ports may be ephemeral).
      console.log(`simulated UR controller ${o.controllerVersion.join(".")}: RTDE on ${o.host}:${sim.rtdePort}, primary on ${o.host}:${sim.primaryPort}, secondary on ${o.host}:${sim.secondaryPort}, dashboard on ${o.host}:${sim.dashboardPort}`);
      const tty = process.stdin.isTTY;
      console.log(tty ? "keys: p protective stop, s safeguard stop, e e-stop, c clear, l local, r remote, q quit" : "commands on stdin, one per line: protective-stop, safeguard-stop, estop, clear, local, remote, power-off, stats, quit");
      const timer = tty
        ? setInterval(() => {
            const q = sim.q.map((x) => x.toFixed(3)).join(" ");
            process.stdout.write(`\r${sim.describe()}  q [${q}]   `);
          }, 250)
        : null;
      await new Promise<void>((resolve) => {
        process.once("SIGINT", () => resolve());
        process.once("SIGTERM", () => resolve());
        if (tty) {
          process.stdin.setRawMode(true);
          process.stdin.on("data", (d: Buffer) => {
            const k = d.toString();
            if (k === "q" || k === "\u0003") return resolve();
            urSimCommand(sim, k);
          });
        } else {
          const rl = createInterface({ input: process.stdin });
          rl.on("line", (line) => {
            if (line.trim() === "quit") return resolve();
            const r = urSimCommand(sim, line);
            if (r) console.log(r);
          });
          // stdin closed (a service, `< /dev/null`): keep running until a signal.
        }
      });
      if (timer) clearInterval(timer);
      if (tty) process.stdin.setRawMode(false);
      process.stdin.pause();
      console.log();
      await sim.stop();
    });
}
