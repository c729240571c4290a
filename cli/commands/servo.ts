/**
 * `rlft servo-sim` (a simulated servo bus on a pseudo-terminal) and `rlft servo-scan` (which servos answer on a port).
 * servo-sim takes fault commands on stdin, one per line (how test/peers drives it): `fault <id> <kind>`,
 * `clear <id>`, `silent <id>`, `answer <id>`, `set <id> <register> <value>`, `get <id> <register>`, `stats`, `quit`.
 */
import type { Command } from "commander";
import { integer } from "../numberOption.ts";
import { createInterface } from "node:readline";
import type { ServoFault } from "../../hardware/servo/servoSimRules.ts";
import { openPtyPair } from "../../hardware/transport/PtyPair.ts";
import { SerialTransport } from "../../hardware/transport/SerialTransport.ts";
import { ServoBusSim } from "../../hardware/servo/ServoBusSim.ts";
import { ServoBus } from "../../hardware/servo/ServoBus.ts";
import { SERVO_MODELS, SERVO_PROTOCOLS, servoModel } from "../../hardware/servo/servoModels.ts";

type BusKind = keyof typeof SERVO_MODELS;

/** "1-6" or "1,2,5" → [1..6] / [1,2,5]. */
export function parseIds(text: string): number[] {
  const ids: number[] = [];
  for (const part of text.split(",")) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(part);
    if (!m) throw new Error(`--ids: expected a list like 1-6 or 1,2,5, got '${text}'`);
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    for (let i = a; i <= b; i++) ids.push(i);
  }
  if (ids.some((i) => i > 252)) throw new Error(`--ids: servo ids go up to 252, got '${text}'`);
  return ids;
}

function busKind(v: string): BusKind {
  if (v !== "feetech" && v !== "dynamixel") throw new Error(`--bus: expected feetech or dynamixel, got '${v}'`);
  return v;
}

const defaultModel = (bus: BusKind) => (bus === "feetech" ? "sts3215" : "xl330");

/** Applies one servo-sim stdin command; returns the answer line. */
export function servoSimCommand(sim: ServoBusSim, line: string): string {
  const [cmd, a, b, c] = line.trim().split(/\s+/);
  const id = Number(a);
  try {
    switch (cmd) {
      case "fault":
        sim.injectFault(id, b as ServoFault);
        return `ok: servo ${id} ${b}`;
      case "clear":
        sim.clearFault(id);
        return `ok: servo ${id} fault cause cleared`;
      case "silent":
        sim.silent.add(id);
        return `ok: servo ${id} silent`;
      case "answer":
        sim.silent.delete(id);
        return `ok: servo ${id} answers`;
      case "set":
        sim.set(id, b, Number(c));
        return `ok: servo ${id} ${b} = ${c}`;
      case "get":
        return `${sim.get(id, b)}`;
      case "stats":
        return JSON.stringify(sim.stats);
      case undefined:
      case "":
        return "";
      default:
        return `unknown command '${line.trim()}' (fault <id> <kind>, clear <id>, silent <id>, answer <id>, set <id> <register> <value>, get <id> <register>, stats, quit)`;
    }
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

/** Registers servo-sim and servo-scan. */
export function registerServoCommands(program: Command): void {
  program
    .command("servo-sim")
    .description("Simulate a servo bus (Feetech STS or Dynamixel 2.0) on a pseudo-terminal, so `rlft launch` can drive it without hardware")
    .option("--bus <kind>", "feetech | dynamixel", busKind, "feetech" as BusKind)
    .option("--ids <list>", "servo ids, e.g. 1-6 or 1,2,5", "1-6")
    .option("--model <name>", "servo model (feetech: sts3215; dynamixel: xl330, xl430)")
    .option("--port <path>", "serve on this existing serial device instead of creating a pty pair")
    .option("--speed <ticks>", "top servo speed in ticks/s", integer({ min: 1 }), 3000)
    .option("--boot-ms <ms>", "Dynamixel: how long a rebooting servo stays silent", integer({ min: 0 }), 20)
    .addHelpText("after", "\nExample:\n  rlft servo-sim --bus feetech --ids 1-6\n  # then, in another terminal, with the port it prints:\n  rlft launch launch/so100.yaml --port /dev/pts/3 --policy runs/so100/package\n")
    .action(async (o) => {
      const bus: BusKind = o.bus;
      const model = servoModel(bus, o.model ?? defaultModel(bus));
      const ids = parseIds(o.ids);
      const pty = o.port ? null : await openPtyPair();
      const transport = await SerialTransport.open(o.port ?? pty!.b, { baudRate: 1_000_000 });
      const sim = new ServoBusSim(transport, { protocol: SERVO_PROTOCOLS[bus], model, ids, maxSpeed: o.speed, bootMs: o.bootMs });
      console.log(`simulated ${bus} bus: ${ids.length} × ${model.name} (ids ${ids.join(", ")})`);
      console.log(pty ? `connect to: ${pty.a}` : `serving on ${o.port}`);
      console.log(process.stdin.isTTY ? "Ctrl-C to stop" : "commands on stdin: fault <id> <kind>, clear <id>, silent <id>, answer <id>, set/get <id> <register> [value], stats, quit");
      const tty = process.stdout.isTTY;
      const timer = tty
        ? setInterval(() => {
            const pos = ids.map((id) => sim.get(id, "Present_Position")).join(" ");
            process.stdout.write(`\rpackets ${sim.stats.packets}  goal writes ${sim.stats.goalWrites}  positions [${pos}]   `);
          }, 500)
        : null;
      let commands: ReturnType<typeof createInterface> | null = null;
      await new Promise<void>((resolve) => {
        process.once("SIGINT", () => resolve());
        process.once("SIGTERM", () => resolve());
        if (!process.stdin.isTTY) {
          commands = createInterface({ input: process.stdin });
          commands.on("line", (line) => {
            if (line.trim() === "quit") return resolve();
            const r = servoSimCommand(sim, line);
            if (r) console.log(r);
          });
        }
      });
      if (timer) clearInterval(timer);
      (commands as ReturnType<typeof createInterface> | null)?.close(); // an open stdin would keep the process alive after quit
      process.stdin.pause();
      console.log();
      sim.dispose();
      await transport.close();
      await pty?.close();
    });

  program
    .command("servo-scan")
    .description("Ping every id on a servo bus and list the servos that answer (model number, position)")
    .requiredOption("--port <path>", "serial port of the bus adapter")
    .option("--bus <kind>", "feetech | dynamixel", busKind, "feetech" as BusKind)
    .option("--baud <bps>", "baud rate", integer({ min: 1 }), 1_000_000)
    .option("--ids <list>", "ids to try", "0-20")
    .option("--model <name>", "register table to read positions with")
    .addHelpText("after", "\nExample:\n  rlft servo-scan --bus feetech --port /dev/ttyACM0 --ids 1-6\n")
    .action(async (o) => {
      const bus: BusKind = o.bus;
      const model = servoModel(bus, o.model ?? defaultModel(bus));
      const t = await SerialTransport.open(o.port, { baudRate: o.baud });
      const sb = new ServoBus(t, SERVO_PROTOCOLS[bus], model, { timeoutMs: 20, retries: 0 });
      let found = 0;
      try {
        for (const id of parseIds(o.ids)) {
          try {
            const m = await sb.ping(id);
            const pos = m === model.modelNumber ? await sb.read(id, "Present_Position") : NaN;
            console.log(`id ${id}: model ${m}${m === model.modelNumber ? ` (${model.name}), position ${pos}` : ""}`);
            found++;
          } catch {
            // silent id: not on the bus
          }
        }
      } finally {
        sb.dispose();
        await t.close();
      }
      console.log(found ? `${found} servo(s) answered on ${o.port}` : `no servo answered on ${o.port} at ${o.baud} bps — check power, cable, --bus and --baud`);
    });
}
