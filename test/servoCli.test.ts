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
