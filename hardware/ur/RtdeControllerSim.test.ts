/**
 * The UR controller simulator against the RTDE guide, the client interfaces and the URScript program format,
 * with rlft's own clients (the vendor client checks are in test/peers/test_ur_rtde.py): recipe ids per
 * connection, IN_USE, the field list, the output rate counted against `timestamp`, programs as units, Local
 * control, the driver's view of a refused program, and hostile bytes on every port.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { RtdeControllerSim } from "./RtdeControllerSim.ts";
import { RtdeClient } from "./RtdeClient.ts";
import { RtdeError } from "./RtdeError.ts";
import { TcpTransport } from "../transport/TcpTransport.ts";
import { RTDE_INPUTS, RTDE_OUTPUTS } from "./rtdeFields.ts";
import { assemble, compile } from "./urScript.ts";
import { PrimaryClient } from "./PrimaryClient.ts";
import { UrRtdeDriver } from "./UrRtdeDriver.ts";
import { waitFor } from "../../runtime/contract.ts";

const until = (cond: () => boolean, ms = 3000) => waitFor(cond, "the simulator", ms);

async function client(sim: RtdeControllerSim): Promise<{ c: RtdeClient; t: TcpTransport }> {
  const t = await TcpTransport.connect("127.0.0.1", sim.rtdePort);
  const c = new RtdeClient(t);
  await c.negotiateVersion();
  await c.getControllerVersion();
  return { c, t };
}

test("recipe ids are per connection: the 300th session still gets id 1 and its inputs reach the controller", async () => {
  const sim = await RtdeControllerSim.start();
  try {
    for (let k = 0; k < 300; k++) {
      const { c, t } = await client(sim);
      const out = await c.setupOutputs(["timestamp"], 125);
      const inp = await c.setupInputs(["input_int_register_30"]);
      assert.deepEqual([out.id, inp.id], [1, 2], `session ${k}`);
      if (k === 299) {
        await c.send(inp, { input_int_register_30: 42 });
        await until(() => sim.registers.get("input_int_register_30") === 42);
      }
      await t.close();
    }
  } finally {
    await sim.stop();
  }
});

test("IN_USE: an input another connection writes is refused, and released when that connection closes", async () => {
  const sim = await RtdeControllerSim.start();
  try {
    const a = await client(sim);
    await a.c.setupInputs(["input_double_register_24", "speed_slider_mask", "speed_slider_fraction"]);
    const b = await client(sim);
    await assert.rejects(b.c.setupInputs(["input_double_register_24"]), (e: RtdeError) => e.code === "RECIPE_REJECTED" && /input_double_register_24 IN_USE/.test(e.message));
    await a.t.close();
    await until(() => sim.snapshot().rtde !== undefined && (sim.snapshot().rtde as unknown[]).length === 1);
    const r = await b.c.setupInputs(["input_double_register_24"]);
    assert.equal(r.id, 1);
    await b.t.close();
  } finally {
    await sim.stop();
  }
});

test("the guide's field list: every output and input name is found with its type; unknown names are NOT_FOUND", async () => {
  const sim = await RtdeControllerSim.start();
  try {
    const { c, t } = await client(sim);
    const outs = Object.keys(RTDE_OUTPUTS);
    // One recipe cannot hold them all (a package's size is a uint16): in slices.
    for (let i = 0; i < outs.length; i += 60) {
      const r = await c.setupOutputs(outs.slice(i, i + 60), 125);
      assert.deepEqual(r.types, outs.slice(i, i + 60).map((n) => RTDE_OUTPUTS[n]));
    }
    for (const n of ["input_double_register_0", "input_int_register_0", "speed_slider_mask", "standard_digital_output", "input_bit_register_64"]) assert.ok(n in RTDE_INPUTS);
    await assert.rejects(c.setupOutputs(["timestamp", "actual_q_typo"], 125), /actual_q_typo NOT_FOUND/);
    await assert.rejects(c.setupInputs(["input_int_register_48"]), /input_int_register_48 NOT_FOUND/);
    await t.close();
  } finally {
    await sim.stop();
  }
});

test("output rate: at 500 Hz every package is one controller cycle apart; packages per controller second = 500", async () => {
  const sim = await RtdeControllerSim.start();
  try {
    const { c, t } = await client(sim);
    await c.setupOutputs(["timestamp", "actual_q"], 500);
    const stamps: number[] = [];
    c.onData((v) => stamps.push(v.timestamp as number));
    await c.start();
    await until(() => stamps.length > 1 && stamps[stamps.length - 1] - stamps[0] >= 1, 10000);
    await c.pause();
    const gaps = stamps.slice(1).map((s, i) => Math.round((s - stamps[i]) * 500));
    assert.ok(gaps.every((g) => g === 1), `gaps in cycles: ${[...new Set(gaps)]}`);
    const rate = (stamps.length - 1) / (stamps[stamps.length - 1] - stamps[0]);
    assert.ok(Math.abs(rate - 500) < 5, `${rate} Hz`);
    await t.close();
  } finally {
    await sim.stop();
  }
});

test("URScript program format: def/sec blocks and bare statements are separate programs; unknown calls do not compile", () => {
  const { programs, rest } = assemble('def rlft():\n  while True:\n    sync()\n  end\nend\nrlft()\nsec s():\n  textmsg("x")\nend\ndef partial():\n  sync()\n');
  assert.deepEqual(
    programs.map((p) => [p.kind, p.name]),
    [
      ["def", "rlft"],
      ["bare", "rlft_"],
      ["sec", "s"],
    ],
  );
  assert.match(rest, /^def partial\(\):/);
  assert.ok("body" in compile(programs[0]));
  const second = compile(programs[1]);
  assert.ok("error" in second && /compile_error_name_not_found: rlft is not defined/.test(second.error));
});

test("programs start when received; a trailing call replaces the program; Local control refuses; the driver says why", async () => {
  const sim = await RtdeControllerSim.start();
  try {
    const pc = new PrimaryClient(await TcpTransport.connect("127.0.0.1", sim.primaryPort));
    await until(() => pc.version !== "" && pc.mode !== null);
    assert.equal(pc.version, "5.15.0.0");
    await pc.send("def wait():\n  while True:\n    sync()\n  end\nend\n");
    await until(() => sim.runtimeState === 2 && pc.started("wait") && pc.mode!.programRunning);
    await pc.send("def wait2():\n  sync()\nend\nwait2()\n");
    await until(() => /compile_error_name_not_found: wait2/.test(pc.refusal()));
    assert.equal(sim.runtimeState, 1, "the failed second program replaced the first");
    pc.dispose();
    await pc.transport.close();

    sim.setControlMode("local");
    const d = new UrRtdeDriver({ host: "127.0.0.1", port: sim.rtdePort, scriptPort: sim.primaryPort, frequency: 125, joints: ["a", "b", "c", "d", "e", "f"], lower: Array(6).fill(-6), upper: Array(6).fill(6), timeoutMs: 2000 });
    await d.configure();
    await assert.rejects(d.activate(), /did not start rlft_servoj: rlft_servoj not started: the robot is in Local control.*switch the robot to Remote Control on the teach pendant/);
    await d.close();
  } finally {
    await sim.stop();
  }
});

test("hostile bytes: garbage on the RTDE, primary and dashboard ports is refused without stopping the controller", async () => {
  const sim = await RtdeControllerSim.start();
  try {
    const junk = (port: number, data: Buffer) =>
      new Promise<string>((resolve) => {
        let got = "";
        const s = connect(port, "127.0.0.1", () => s.write(data));
        s.on("data", (d) => (got += d.toString("latin1")));
        s.on("error", () => undefined);
        setTimeout(() => {
          s.destroy();
          resolve(got);
        }, 150);
      });
    await junk(sim.rtdePort, Buffer.from([0, 1, 0xff, 0, 2, 9, 9, 9])); // size 1 < 3: out of sync, connection closed
    await junk(sim.rtdePort, Buffer.from([0, 6, 85, 7, 1, 2])); // data package for a recipe that does not exist
    await junk(sim.primaryPort, Buffer.concat([Buffer.alloc(70000, 0x41)])); // 70 kB without a newline
    const dash = await junk(sim.dashboardPort, Buffer.from("rm -rf /\nrobotmode\n"));
    assert.match(dash, /could not understand: 'rm -rf \/'/);
    assert.match(dash, /Robotmode: RUNNING/);
    const { c, t } = await client(sim);
    assert.equal((await c.setupOutputs(["timestamp"], 125)).id, 1, "still serving");
    await t.close();
  } finally {
    await sim.stop();
  }
});
