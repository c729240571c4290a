/**
 * Real-arm stacks end to end against protocol simulators. Acceptance: `rlft launch launch/so100.yaml --port <pty>`
 * drives a simulated Feetech bus end to end. The
 * servo-bus simulator holds one end of a socat pty pair; the rlft command (a child process, the real
 * serialport stack) opens the other. The policy node's commands must arrive as Feetech Goal_Position packets
 * and the joint states must come back into the recorded episode.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McapIndexedReader } from "@mcap/core";
import { MessageReader } from "@foxglove/rosmsg2-serialization";
import { parse } from "@foxglove/rosmsg";
import { openPtyPair, socatBin } from "../hardware/transport/PtyPair.ts";
import { SerialTransport } from "../hardware/transport/SerialTransport.ts";
import { ServoBusSim } from "../hardware/servo/ServoBusSim.ts";
import { feetechProtocol } from "../hardware/feetech/feetechProtocol.ts";
import { STS3215 } from "../hardware/feetech/STS3215.ts";
import { makeLearnerFixture, type LearnerFixture } from "../policies/testing/learnerFixture.ts";
import { loadLaunch } from "../launch/LaunchConfig.ts";
import { jointObservationNames } from "../nodes/JointObservationNode.ts";

const skip = socatBin() ? false : "socat is not installed (sudo apt-get install socat)";
const tmp = mkdtempSync(join(tmpdir(), "rlft-so100-"));
let fixture: LearnerFixture | undefined;
after(() => fixture?.cleanup());

function rlft(args: string[], onSpawn?: (child: ReturnType<typeof spawn>) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["bin/rlft.js", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    onSpawn?.(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test("rlft launch launch/so100.yaml --port <pty>: policy commands arrive as Feetech packets, joint states come back", { skip }, async () => {
  const cfg = loadLaunch("launch/so100.yaml");
  assert.equal(cfg.driver.kind, "feetech");
  const joints = cfg.driver.kind === "feetech" ? cfg.driver.joints : [];
  const names = joints.map((j) => j.name);
  // A real learner-exported package relabelled for the SO-100's joints.
  fixture = await makeLearnerFixture({ obsDim: names.length, actionDim: names.length });
  const pj = JSON.parse(readFileSync(join(fixture.dir, "policy.json"), "utf8"));
  pj.observation.names = jointObservationNames(names);
  pj.action.names = names;
  writeFileSync(join(fixture.dir, "policy.json"), JSON.stringify(pj, null, 2));

  const pty = await openPtyPair();
  const side = await SerialTransport.open(pty.b, { baudRate: 1_000_000 });
  const sim = new ServoBusSim(side, { protocol: feetechProtocol, model: STS3215, ids: joints.map((j) => j.id), maxSpeed: 4000 });
  const goalPackets: number[][] = [];
  sim.onPacket((p) => {
    // Sync write (0x83) to broadcast id 0xFE starting at Goal_Position (42), 2 bytes per servo.
    if (p.id === 0xfe && p.instruction === 0x83 && p.params[0] === STS3215.registers.Goal_Position.address) goalPackets.push([...p.params]);
  });
  const out = join(tmp, "episodes");
  try {
    const r = await rlft(["launch", "launch/so100.yaml", "--port", pty.a, "--policy", fixture.dir, "--episodes", "1", "--max-steps", "15", "--record-to", out, "--json"]);
    assert.equal(r.code, 0, `rlft launch failed:\n${r.stderr}\n${r.stdout}`);
    const summary = JSON.parse(r.stdout.trim().split("\n").pop()!);
    assert.equal(summary.episodes, 1);
    assert.equal(summary.outcomes.timeout, 1);
    assert.equal(summary.actorErrors, 0);
  } finally {
    sim.dispose();
    await side.close();
    await pty.close();
  }
  // The policy's commands reached the bus as Feetech packets, and some moved a servo off its start.
  assert.ok(goalPackets.length >= 5, `only ${goalPackets.length} Goal_Position sync writes arrived`);
  assert.equal(goalPackets[0].length, 2 + 6 * 3, "addr, len, then id + 2 bytes for each of 6 servos");
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => goalPackets[0][2 + 3 * i]), [1, 2, 3, 4, 5, 6]);
  assert.ok([...sim.goals.values()].some((g) => g !== 2048), "no goal differs from the start pose");
  // on_deactivate: torque_off
  assert.deepEqual(joints.map((j) => sim.get(j.id, "Torque_Enable")), [0, 0, 0, 0, 0, 0]);

  // The joint states read from the bus are in the recorded episode, next to the executed commands.
  const file = readdirSync(out).find((f) => f.endsWith(".mcap"))!;
  const bytes = new Uint8Array(readFileSync(join(out, file)));
  const reader = await McapIndexedReader.Initialize({ readable: { size: async () => BigInt(bytes.byteLength), read: async (o: bigint, n: bigint) => bytes.subarray(Number(o), Number(o + n)) } });
  const channels = new Map([...reader.channelsById.values()].map((c) => [c.topic, c]));
  for (const t of ["/joint_states", "/joint_command", "/observation"]) assert.ok(channels.has(t), `missing ${t}`);
  const schema = reader.schemasById.get(channels.get("/joint_states")!.schemaId)!;
  const dec = new MessageReader(parse(new TextDecoder().decode(schema.data), { ros2: true }));
  let states = 0;
  let moved = false;
  for await (const m of reader.readMessages({ topics: ["/joint_states"] })) {
    const js = dec.readMessage<{ name: string[]; position: ArrayLike<number> }>(m.data);
    assert.deepEqual(js.name, names);
    if (Array.from(js.position).some((q) => Math.abs(q) > 1e-3)) moved = true;
    states++;
  }
  assert.ok(states >= 10, `only ${states} joint states recorded`);
  assert.ok(moved, "the recorded joint states never left the start pose");
});

test("rlft launch on a port that does not exist says so and how to fix it", async () => {
  const r = await rlft(["launch", "launch/so100.yaml", "--port", "/dev/ttyRLFT_MISSING", "--policy", fixture?.dir ?? "/nonexistent", "--episodes", "1"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /policy\.json|Cannot open \/dev\/ttyRLFT_MISSING: no such device/);
});

/** launch/so100.yaml driving a simulated Feetech bus on a fresh pty pair, with the first test's policy package. */
async function so100OnSimulatedBus() {
  assert.ok(fixture, "needs the package of the first test");
  const cfg = loadLaunch("launch/so100.yaml");
  const pty = await openPtyPair();
  const side = await SerialTransport.open(pty.b, { baudRate: 1_000_000 });
  const sim = new ServoBusSim(side, { protocol: feetechProtocol, model: STS3215, ids: [1, 2, 3, 4, 5, 6] });
  if (cfg.driver.kind !== "feetech") throw new Error("so100.yaml must use the feetech driver");
  cfg.driver.port = pty.a;
  cfg.actor = { ...cfg.actor, package: fixture!.dir };
  const close = async () => {
    sim.dispose();
    await side.close();
    await pty.close();
  };
  return { cfg, driver: cfg.driver, sim, close };
}

test("a real-arm stack with a V4L2-kind camera (ffmpeg testsrc) records frames and the camera/robot clock offset", { skip }, async () => {
  const { runEpisodes } = await import("../app/runEpisodes.ts");
  const { cfg, close } = await so100OnSimulatedBus();
  const out = join(tmp, "camera");
  try {
    cfg.episodes.max_steps = 10;
    cfg.camera = { ...cfg.camera, enabled: true, kind: "v4l2", device: "lavfi:testsrc=size=32x24:rate=30", width: 32, height: 24, rate_hz: 10, capture_fps: 30 };
    const { summary } = await runEpisodes(cfg, { count: 1, seed: 0, label: "test", recordTo: out });
    assert.equal(summary.episodes, 1);
  } finally {
    await close();
  }
  const file = readdirSync(out).find((f) => f.endsWith(".mcap"))!;
  const bytes = new Uint8Array(readFileSync(join(out, file)));
  const reader = await McapIndexedReader.Initialize({ readable: { size: async () => BigInt(bytes.byteLength), read: async (o: bigint, n: bigint) => bytes.subarray(Number(o), Number(o + n)) } });
  const topics = new Set([...reader.channelsById.values()].map((c) => c.topic));
  assert.ok(topics.has("/camera/front/image"), `topics: ${[...topics].join(", ")}`);
  const meta = [];
  for await (const m of reader.readMetadata({ name: "rlft.episode" })) meta.push(m);
  const offset = Number(meta[0].metadata.get("camera.front.time_offset_sec"));
  assert.ok(Number.isFinite(offset) && offset > 1e9, `camera.front.time_offset_sec = ${meta[0].metadata.get("camera.front.time_offset_sec")}`);
  assert.equal(meta[0].metadata.get("driver"), "feetech");
});

test("Ctrl-C during rlft launch on a servo arm aborts the episode, switches torque off and keeps the recording", { skip }, async () => {
  assert.ok(fixture, "needs the package of the first test");
  const pty = await openPtyPair();
  const side = await SerialTransport.open(pty.b, { baudRate: 1_000_000 });
  const sim = new ServoBusSim(side, { protocol: feetechProtocol, model: STS3215, ids: [1, 2, 3, 4, 5, 6] });
  const out = join(tmp, "sigint");
  let goals = 0;
  let child: ReturnType<typeof spawn> | undefined;
  sim.onPacket((p) => {
    if (p.instruction === 0x83 && p.params[0] === 42 && ++goals === 3) child?.kill("SIGINT");
  });
  try {
    const r = await rlft(["launch", "launch/so100.yaml", "--port", pty.a, "--policy", fixture!.dir, "--episodes", "3", "--max-steps", "3000", "--record-to", out, "--json"], (c) => (child = c));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /stopping: aborting the episode/);
    const summary = JSON.parse(r.stdout.trim().split("\n").pop()!);
    assert.deepEqual(summary.outcomes, { abort: 1 });
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((id) => sim.get(id, "Torque_Enable")), [0, 0, 0, 0, 0, 0]);
  } finally {
    sim.dispose();
    await side.close();
    await pty.close();
  }
  assert.equal(readdirSync(out).filter((f) => f.endsWith(".mcap")).length, 1);
});

test("a servo overload during an episode ends it as aborted, names the joint, runs no further episode and keeps the recording", { skip }, async () => {
  const { runEpisodes } = await import("../app/runEpisodes.ts");
  const { cfg, driver, sim, close } = await so100OnSimulatedBus();
  let goals = 0;
  sim.onPacket((p) => {
    if (p.instruction === 0x83 && p.params[0] === STS3215.registers.Goal_Position.address && ++goals === 5) sim.injectFault(3, "overload");
  });
  const out = join(tmp, "fault");
  const warnings: string[] = [];
  const warn = console.warn;
  const error = console.error;
  console.warn = console.error = (...a: unknown[]) => void warnings.push(a.join(" "));
  try {
    cfg.episodes.max_steps = 3000;
    const { summary } = await runEpisodes(cfg, { count: 3, seed: 0, label: "test", recordTo: out });
    assert.deepEqual(summary.outcomes, { abort: 1 }, "aborted, and no further episode on a faulted arm");
  } finally {
    console.warn = warn;
    console.error = error;
    await close();
  }
  const name = driver.joints[2].name;
  assert.ok(warnings.some((w) => new RegExp(`${name} \\(feetech id 3, STS3215\\) reports overload`).test(w)), `the fault names the joint: ${warnings.join("\n")}`);
  assert.equal(readdirSync(out).filter((f) => f.endsWith(".mcap")).length, 1, "the aborted episode's recording is kept");
});

test("launch/ur5e.yaml drives the RTDE controller simulator: the policy's targets reach servoj through the input registers", async () => {
  const { cpSync } = await import("node:fs");
  const { runEpisodes } = await import("../app/runEpisodes.ts");
  const { RtdeControllerSim } = await import("../hardware/ur/RtdeControllerSim.ts");
  assert.ok(fixture, "needs the package of the first test");
  const cfg = loadLaunch("launch/ur5e.yaml");
  if (cfg.driver.kind !== "ur_rtde") throw new Error("ur5e.yaml must use ur_rtde");
  const pkg = join(tmp, "ur-package");
  cpSync(fixture!.dir, pkg, { recursive: true });
  const pj = JSON.parse(readFileSync(join(pkg, "policy.json"), "utf8"));
  pj.observation.names = jointObservationNames(cfg.driver.joints);
  pj.action.names = cfg.driver.joints;
  writeFileSync(join(pkg, "policy.json"), JSON.stringify(pj, null, 2));
  const sim = await RtdeControllerSim.start({ q0: [0, -1.2, 1.2, -1.5, -1.5, 0] });
  try {
    cfg.driver = { ...cfg.driver, host: "127.0.0.1", port: sim.rtdePort, script_port: sim.primaryPort };
    cfg.camera.enabled = false;
    cfg.recorder.enabled = false;
    cfg.actor = { ...cfg.actor, package: pkg, providers: ["cpu"] };
    cfg.episodes.max_steps = 20;
    const { summary } = await runEpisodes(cfg, { count: 1, seed: 0, label: "test" });
    assert.equal(summary.episodes, 1);
    assert.equal(summary.actorErrors, 0);
    assert.equal(sim.stats.scripts, 1, "rlft_servoj was sent to the primary interface");
    assert.ok(sim.stats.inputPackages > 100, `only ${sim.stats.inputPackages} input packages`);
    const targets = [24, 25, 26, 27, 28, 29].map((i) => Number(sim.registers.get(`input_double_register_${i}`)));
    assert.ok(targets.some((q, i) => Math.abs(q - [0, -1.2, 1.2, -1.5, -1.5, 0][i]) > 1e-3), `targets never left the start pose: ${targets}`);
    // The session ended with close(): mode 2, the program stopped.
    assert.equal(sim.registers.get("input_int_register_24"), 2);
  } finally {
    await sim.stop();
  }
});

/** Runs launch/ur5e.yaml against `rlft ur-sim` and types `command` (a safety stop) into it mid-episode. */
async function urStopMidEpisode(command: string, stop: string, reason: RegExp): Promise<void> {
  const { cpSync } = await import("node:fs");
  const { createInterface } = await import("node:readline");
  const { runEpisodes } = await import("../app/runEpisodes.ts");
  const cfg = loadLaunch("launch/ur5e.yaml");
  if (cfg.driver.kind !== "ur_rtde") throw new Error("ur5e.yaml must use ur_rtde");
  fixture ??= await makeLearnerFixture({ obsDim: 6, actionDim: 6 });
  const pkg = join(tmp, `ur-${command}-package`);
  cpSync(fixture.dir, pkg, { recursive: true });
  const pj = JSON.parse(readFileSync(join(pkg, "policy.json"), "utf8"));
  pj.observation.names = jointObservationNames(cfg.driver.joints);
  pj.action.names = cfg.driver.joints;
  writeFileSync(join(pkg, "policy.json"), JSON.stringify(pj, null, 2));

  // The simulator as a user runs it: its own process, faults typed on stdin.
  const sim = spawn(process.execPath, ["bin/rlft.js", "ur-sim", "--rtde-port", "0", "--primary-port", "0", "--secondary-port", "0", "--dashboard-port", "0"], { stdio: ["pipe", "pipe", "pipe"] });
  const lines = createInterface({ input: sim.stdout! });
  const pending: ((l: string) => void)[] = [];
  lines.on("line", (l) => pending.splice(0).forEach((f) => f(l)));
  const nextLine = (match: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`rlft ur-sim printed no line matching ${match}`)), 30_000);
      const wait = (l: string) => (match.test(l) ? (clearTimeout(timer), resolve(l)) : pending.push(wait));
      pending.push(wait);
    });
  const out = join(tmp, `ur-${command}`);
  const logged: string[] = [];
  const warn = console.warn;
  const error = console.error;
  console.warn = console.error = (...a: unknown[]) => void logged.push(a.join(" "));
  let stopped = false;
  try {
    const ports = /RTDE on [\d.]+:(\d+), primary on [\d.]+:(\d+)/.exec(await nextLine(/^simulated UR controller/))!;
    cfg.driver = { ...cfg.driver, host: "127.0.0.1", port: Number(ports[1]), script_port: Number(ports[2]) };
    cfg.camera.enabled = false;
    cfg.actor = { ...cfg.actor, package: pkg, providers: ["cpu"] };
    cfg.episodes.max_steps = 3000; // 150 s at 20 Hz: only the stop ends it within the test's time
    // Once rlft_servoj plays and rlft streams targets, a collision: protective stop.
    const injector = (async () => {
      for (let i = 0; i < 300 && !stopped; i++) {
        sim.stdin!.write("stats\n");
        const snap = JSON.parse(await nextLine(/^\{/));
        if (snap.runtimeState === "PLAYING" && snap.stats.inputPackages > 500) {
          sim.stdin!.write(`${command}\n`);
          return true;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      return false;
    })();
    const { summary } = await runEpisodes(cfg, { count: 3, seed: 0, label: "test", recordTo: out });
    stopped = true;
    assert.ok(await injector, `the ${command} was injected while the program played`);
    assert.deepEqual(summary.outcomes, { abort: 1 }, "aborted, and no further episode on a stopped arm");
  } finally {
    stopped = true;
    console.warn = warn;
    console.error = error;
    sim.stdin!.write("quit\n");
    await new Promise((r) => sim.once("exit", r));
  }
  // One error line carries the controller's reason (the pendant's code and text).
  const faultLines = logged.filter((l) => /arm fault:/.test(l));
  assert.equal(faultLines.length, 1, `expected one arm fault line:\n${logged.join("\n")}`);
  assert.ok(!faultLines[0].includes("\n"), faultLines[0]);
  assert.ok(faultLines[0].startsWith(`[ERROR] [arm_driver] arm fault: UR controller 127.0.0.1 is in ${stop}: `), faultLines[0]);
  assert.match(faultLines[0], reason);
  // The aborted episode's recording is kept, readable, and marked aborted.
  const files = readdirSync(out).filter((f) => f.endsWith(".mcap"));
  assert.equal(files.length, 1, "the aborted episode's recording is kept");
  const bytes = new Uint8Array(readFileSync(join(out, files[0])));
  const reader = await McapIndexedReader.Initialize({ readable: { size: async () => BigInt(bytes.byteLength), read: async (o: bigint, n: bigint) => bytes.subarray(Number(o), Number(o + n)) } });
  let states = 0;
  for await (const m of reader.readMessages({ topics: ["/joint_states"] })) states += m.data.byteLength > 0 ? 1 : 0;
  assert.ok(states >= 10, `only ${states} joint states in the kept recording`);
  const meta = [];
  for await (const m of reader.readMetadata({ name: "rlft.episode" })) meta.push(m);
  assert.equal(meta.length, 1);
  assert.equal(meta[0].metadata.get("driver"), "ur_rtde");
  const result = [];
  for await (const m of reader.readMetadata({ name: "rlft.episode_result" })) result.push(m);
  assert.equal(result.length, 1, "the recording was closed, not cut off");
  assert.equal(result[0].metadata.get("outcome"), "abort");
}

test("a UR protective stop in `rlft ur-sim` mid-episode: the episode ends as aborted, the controller's reason is one error line, the recording is kept and readable", () =>
  urStopMidEpisode("protective-stop", "PROTECTIVE_STOP", /\(controller: C153A0 Protective stop: collision detected\)$/));

test("a UR safeguard stop mid-episode: aborted, one error line with the controller's reason, recording kept", () => urStopMidEpisode("safeguard-stop", "SAFEGUARD_STOP", /\(controller: C156A0 Safeguard stop/));

test("a UR emergency stop mid-episode: aborted, one error line with the controller's reason, recording kept", () => urStopMidEpisode("estop", "ROBOT_EMERGENCY_STOP", /\(controller: C162A0 Robot emergency stop/));

test("episode reset on a Feetech arm: home at reset.max_speed through the safety supervisor, then the start gate waits", { skip }, async () => {
  const { Stack } = await import("../launch/Stack.ts");
  assert.ok(fixture, "needs the package of the first test");
  const cfg = loadLaunch("launch/so100.yaml");
  const pty = await openPtyPair();
  const side = await SerialTransport.open(pty.b, { baudRate: 1_000_000 });
  const sim = new ServoBusSim(side, { protocol: feetechProtocol, model: STS3215, ids: [1, 2, 3, 4, 5, 6] });
  const home = [0.3, -0.25, 0.2, 0, 0.1, 0.5];
  const speed = 0.4;
  const dt = 1 / cfg.control_hz;
  const rad = (t: number) => ((t - 2048) * 2 * Math.PI) / 4096;
  const goals: number[][] = [];
  let recording = false;
  sim.onPacket((p) => {
    if (!recording || p.id !== 0xfe || p.instruction !== 0x83 || p.params[0] !== STS3215.registers.Goal_Position.address) return;
    goals.push([0, 1, 2, 3, 4, 5].map((i) => rad(p.params[3 + 3 * i] | (p.params[4 + 3 * i] << 8))));
  });
  if (cfg.driver.kind !== "feetech") throw new Error("so100.yaml must use the feetech driver");
  cfg.driver.port = pty.a;
  cfg.actor = { ...cfg.actor, package: fixture!.dir };
  cfg.recorder.enabled = false;
  cfg.episodes.max_steps = 5;
  cfg.reset = { home, max_speed: speed, tolerance: 0.02, settle_sec: 3 };
  const stack = await Stack.create(cfg, { quiet: true, operatorGate: true });
  try {
    const move = stack.safety.moveThrough.bind(stack.safety);
    stack.safety.moveThrough = (pts, period, sleep) => {
      recording = true;
      return move(pts, period, sleep);
    };
    let homed = false;
    const goHome = stack.goHome.bind(stack);
    stack.goHome = async () => {
      const pts = await goHome();
      homed = true;
      return pts;
    };
    const run = stack.runEpisodes({ count: 1, seed: 0 });
    // The gate opens only after homing: wait until the operator could press Start.
    let gateReason: string | null = "";
    let released = 0;
    for (let k = 0; k < 1000 && gateReason !== null; k++) {
      await new Promise((r) => setTimeout(r, 10));
      if (stack.manager.running) break;
      if (homed) {
        assert.ok(stack.driver.read(0).reading?.position.every((q, i) => Math.abs(q - home[i]) < 0.02), "at home");
        // At home and holding: the policy's proposals are dropped while it waits for the operator.
        const before = goals.length;
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(stack.manager.running, false, "the episode waits for the operator's start");
        // Held: every goal while waiting is the same pose, within reset.tolerance of home (on a loaded machine the
        // last homing command can be step-clamped a few mrad short of home, relative to a lagging measurement).
        const waiting = goals.slice(before);
        for (const g of waiting)
          g.forEach((q, i) => {
            assert.ok(Math.abs(q - home[i]) < cfg.reset.tolerance, `goal ${q} while waiting (home ${home[i]}, tolerance ${cfg.reset.tolerance})`);
            assert.ok(Math.abs(q - waiting[0][i]) < 1e-3, `goal ${q} moved while waiting (first ${waiting[0][i]})`);
          });
        released = goals.length;
        gateReason = stack.releaseGate();
      }
    }
    assert.equal(gateReason, null, "the start gate was waiting after homing");
    const [r] = await run;
    assert.equal(r.outcome, "timeout");
    // Skip the policy's goal still in flight when homing began and the hold; then every step is within the speed limit.
    const way = goals.slice(2, released);
    assert.ok(way.length >= 10, `only ${way.length} goal writes on the way home`);
    const tick = (2 * Math.PI) / 4096;
    // The supervisor clamps each goal to within safety.max_step of the *measured* position, and the bus's read-back
    // lags the goal by a tick or more (more on a loaded machine): a clamped goal falls short of the plan and the next
    // one catches up, so one step can exceed speed·dt. What holds whatever the lag: over any j steps the goals never
    // advance more than j·speed·dt plus one max_step of catch-up (a 2× speed would break it within a few steps).
    const ms = cfg.safety.max_step;
    const maxStep = (i: number) => (typeof ms === "number" ? ms : ms[i]);
    for (let k = 1; k < way.length; k++)
      for (let j = 0; j < k; j++)
        way[k].forEach((q, i) => {
          const d = Math.abs(q - way[j][i]);
          assert.ok(d <= (k - j) * speed * dt + maxStep(i) + tick, `goals ${j}..${k}, joint ${i}: ${d.toFixed(4)} rad in ${k - j} ticks > ${k - j} × ${speed * dt} + max_step ${maxStep(i)}`);
        });
    // Home itself, or (the last point step-clamped against a lagging measurement, then settled) within reset.tolerance.
    assert.ok(goals.some((g) => g.every((q, i) => Math.abs(q - home[i]) <= cfg.reset.tolerance)), "home was commanded");
  } finally {
    await stack.shutdown();
    sim.dispose();
    await side.close();
    await pty.close();
  }
});

test("--operator leader: a Feetech leader arm on its own bus (torque off) moves the follower during takeover", { skip }, async () => {
  const { Stack } = await import("../launch/Stack.ts");
  const { openLeaderArm } = await import("../hardware/servo/openLeaderArm.ts");
  assert.ok(fixture, "needs the package of the first test");
  const cfg = loadLaunch("launch/so100.yaml");
  const ids = [1, 2, 3, 4, 5, 6];
  const fPty = await openPtyPair();
  const lPty = await openPtyPair();
  const fSide = await SerialTransport.open(fPty.b, { baudRate: 1_000_000 });
  const lSide = await SerialTransport.open(lPty.b, { baudRate: 1_000_000 });
  const follower = new ServoBusSim(fSide, { protocol: feetechProtocol, model: STS3215, ids });
  const leader = new ServoBusSim(lSide, { protocol: feetechProtocol, model: STS3215, ids });
  ids.forEach((id) => leader.set(id, "Torque_Enable", 1));
  if (cfg.driver.kind !== "feetech") throw new Error("so100.yaml must use the feetech driver");
  cfg.driver.port = fPty.a;
  cfg.actor = { ...cfg.actor, package: fixture!.dir };
  cfg.recorder.enabled = false;
  cfg.episodes.max_steps = 1000;
  cfg.operator = { ...cfg.operator, enabled: true, kind: "leader" };
  const source = await openLeaderArm(cfg, { port: lPty.a, bus: "feetech" });
  // Torque off is a broadcast sync write (no reply): give the simulator a moment to take it.
  for (let k = 0; k < 100 && ids.some((id) => leader.get(id, "Torque_Enable") !== 0); k++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(ids.map((id) => leader.get(id, "Torque_Enable")), [0, 0, 0, 0, 0, 0], "the leader goes limp for the operator's hand");
  const stack = await Stack.create(cfg, { quiet: true, leaderSource: source, operatorGate: false });
  const target = [0.3, -0.2, 0.25, 0.1, -0.15, 0.4];
  try {
    const run = stack.runEpisodes({ count: 1, seed: 0 });
    await new Promise((r) => setTimeout(r, 300));
    // The operator moves the leader: a motion takeover; the follower follows (step-clamped by the supervisor).
    const ticks = (q: number) => Math.round(2048 + (q * 4096) / (2 * Math.PI));
    for (let k = 1; k <= 5; k++) {
      ids.forEach((id, i) => leader.set(id, "Present_Position", ticks((target[i] * k) / 5)));
      await new Promise((r) => setTimeout(r, 150));
    }
    let at = false;
    for (let k = 0; k < 300 && !at; k++) {
      await new Promise((r) => setTimeout(r, 20));
      const q = stack.driver.read(0).reading?.position ?? [];
      at = target.every((t, i) => Math.abs((q[i] ?? NaN) - t) < 0.02);
    }
    assert.ok(at, `the follower did not reach the leader's pose: ${stack.driver.read(0).reading?.position.map((x) => x.toFixed(3))}`);
    assert.ok(stack.arbiter.counts.operator > 0, "the operator acted (takeover)");
    stack.manager.abort("test done");
    await run;
  } finally {
    await stack.shutdown();
    follower.dispose();
    leader.dispose();
    await fSide.close();
    await lSide.close();
    await fPty.close();
    await lPty.close();
  }
});
