/**
 * Every teleop device fed recorded raw input (byte streams in the documented formats, fixtures/*.hex: one
 * read() per line) through its real parser, plus the shaping, takeover and mapping rules.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { KeyboardParser } from "./KeyboardParser.ts";
import { KeyboardTeleop, type KeyInput } from "./KeyboardTeleop.ts";
import { JoystickParser } from "./JoystickParser.ts";
import { GamepadTeleop } from "./GamepadTeleop.ts";
import { SpaceMouseParser } from "./SpaceMouseParser.ts";
import { SpaceMouseTeleop, type HidReportSource } from "./SpaceMouseTeleop.ts";
import { findSpaceMouseModel } from "./spaceMouseDevices.ts";
import { LeaderArmTeleop } from "./LeaderArmTeleop.ts";
import { ScriptedJointSource } from "./testing/ScriptedJointSource.ts";
import { TakeoverGesture } from "./TakeoverGesture.ts";
import { TeleopMapper } from "./TeleopMapper.ts";
import { ARM5_KINEMATICS } from "./arm5Kinematics.ts";
import { deadzone, shapeTwist } from "./shaping.ts";
import { TELEOP_DEFAULTS } from "./TeleopConfig.ts";
import { idleSample, TeleopDeviceError } from "./TeleopDevice.ts";
import { ARM_SPEC } from "../../sim/armSpec.ts";

const fixture = (name: string): Buffer[] =>
  readFileSync(join(import.meta.dirname, "fixtures", name), "utf8")
    .split("\n")
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => Buffer.from(l, "hex"));

test("keyboard parser: keys, escape sequences split across reads, a lone ESC on flush", () => {
  const p = new KeyboardParser();
  const keys = fixture("keyboard-terminal.hex").flatMap((c) => p.feed(c));
  assert.deepEqual(keys, ["n", "up", "up", "pageup", ",", "g", "t", "s", "escape", "ctrl-c"]);
  assert.deepEqual(p.feed(Buffer.from([0x1b])), [], "a lone ESC may start a sequence: it waits …");
  assert.deepEqual(p.flush(), ["escape"], "… until a pause shows it was the Escape key");
});

test("keyboard teleop: jogs per press, motion keys take over, episode keys become commands, Ctrl-C raises the interrupt", () => {
  let interrupted = 0;
  const kb = new KeyboardTeleop({ config: TELEOP_DEFAULTS, onInterrupt: () => interrupted++ });
  for (const c of fixture("keyboard-terminal.hex")) kb.feed(c);
  const s = kb.poll(0.1);
  assert.ok(Math.abs(s.linear[0] - 2 * TELEOP_DEFAULTS.keyboard.jog_step) < 1e-12, "two ↑ presses jog x by two steps");
  assert.equal(s.linear[2], TELEOP_DEFAULTS.keyboard.jog_step);
  assert.equal(s.angular[1], -TELEOP_DEFAULTS.keyboard.jog_angle);
  assert.equal(s.gripper, 0, "g closes the (initially open) gripper");
  assert.equal(s.takeover, true);
  assert.deepEqual(s.commands, ["start", "success"]);
  assert.equal(interrupted, 1);
  assert.deepEqual(kb.poll(0.1), idleSample(), "a poll consumes what happened");
  // Web UI keys are held: velocity × dt while down.
  kb.keyDown("left");
  assert.ok(Math.abs(kb.poll(0.5).linear[1] - 0.5 * TELEOP_DEFAULTS.linear_speed) < 1e-12);
  kb.keyUp("left");
  assert.equal(kb.poll(0.5).moving, false);
  kb.keyDown("space");
  assert.deepEqual(kb.poll(0.1).commands, ["estop"]);
});

test("joystick parser: js_event structs (kernel joystick-api.rst), init flag, events split across reads", () => {
  const p = new JoystickParser();
  const chunks = fixture("gamepad-js0.hex");
  const init = p.feed(chunks[0]);
  assert.equal(init.length, 16);
  assert.ok(init.every((e) => e.init));
  assert.equal(p.state.axes[2], -1, "xpad triggers rest at -32767");
  p.feed(chunks[1]);
  assert.equal(p.state.buttons[5], true);
  assert.equal(p.feed(chunks[2]).length, 1, "11 bytes: one whole event, three kept");
  assert.equal(p.feed(chunks[3]).length, 1);
  assert.equal(p.state.axes[1], -1);
  const bad = Buffer.alloc(8);
  bad[6] = 0x04;
  p.feed(bad);
  assert.equal(p.unknown, 1);
});

test("gamepad teleop: deadman held = in control, stick past the deadzone moves, drift does not, buttons give commands", async () => {
  const stream = new PassThrough();
  const pad = new GamepadTeleop({ config: TELEOP_DEFAULTS, openStream: () => stream });
  await pad.open();
  const gesture = new TakeoverGesture({ mode: pad.takeoverMode, releaseSec: 0 });
  const chunks = fixture("gamepad-js0.hex");
  const feed = async (i: number) => {
    stream.write(chunks[i]);
    await new Promise((r) => setImmediate(r));
  };
  for (let i = 0; i <= 4; i++) await feed(i);
  const s = pad.poll(0.1);
  assert.equal(gesture.update(s, 0.1), true, "deadman down");
  assert.ok(Math.abs(s.linear[0] - TELEOP_DEFAULTS.linear_speed * 0.1) < 1e-9, "full forward on the left stick → +x at linear_speed");
  assert.equal(s.linear[1], 0, "1200/32767 of drift stays inside the deadzone");
  for (let i = 5; i <= 7; i++) await feed(i);
  const s2 = pad.poll(0.1);
  assert.equal(s2.gripper, 0);
  assert.equal(s2.moving, true);
  await feed(8);
  assert.equal(gesture.update(pad.poll(0.1), 0.1), false, "deadman released → the policy gets the arm back");
  await feed(9);
  assert.deepEqual(pad.poll(0.1).commands, ["success"]);
  stream.end();
  await new Promise((r) => setImmediate(r));
  assert.match(pad.error ?? "", /unplugged/);
  await pad.close();
});

test("gamepad open errors name the device path and the permission/udev fix", async () => {
  const denied = Object.assign(new Error("EACCES: permission denied, open '/dev/input/js0'"), { code: "EACCES" });
  const missing = Object.assign(new Error("ENOENT"), { code: "ENOENT" });
  for (const [err, re] of [
    [denied, /\/dev\/input\/js0: permission denied — add your user to the 'input' group.*udev/],
    [missing, /\/dev\/input\/js0: no such device — is it plugged in\? \(check with: ls \/dev\/input\/js\*\)/],
  ] as const) {
    const s = new PassThrough();
    const pad = new GamepadTeleop({ config: TELEOP_DEFAULTS, openStream: () => (queueMicrotask(() => s.emit("error", err)), Object.assign(s, { pending: true })) });
    await assert.rejects(pad.open(), (e: Error) => e instanceof TeleopDeviceError && re.test(e.message));
  }
});

test("SpaceMouse parser: split layout (SpaceNavigator) and combined layout (SpaceMouse Wireless), unknown reports counted", () => {
  const sn = new SpaceMouseParser(findSpaceMouseModel(0x046d, 0xc626)!);
  const r = fixture("spacemouse-c626.hex");
  sn.feed(r[0]);
  assert.deepEqual(sn.state.axes.slice(0, 3), [0, 1, 0], "HID −Y (pushed away from the user) is +forward");
  sn.feed(r[1]);
  assert.ok(Math.abs(sn.state.axes[5] + 120 / 350) < 1e-12);
  sn.feed(r[2]);
  assert.equal(sn.pressed(0), true);
  assert.equal(sn.feed(r[7]), false);
  assert.equal(sn.rejected, 1);
  const sw = new SpaceMouseParser(findSpaceMouseModel(0x256f, 0xc652)!);
  const w = fixture("spacemouse-c652.hex");
  sw.feed(w[0]);
  assert.deepEqual(sw.state.axes, [0, 1, -0.5, 0, 0, 0]);
  assert.equal(sw.feed(w[4]), false, "a 3-byte report 1 is too short for the combined layout");
});

test("SpaceMouse teleop: motion takes over, the gripper button toggles, release hands back after release_sec", async () => {
  const handlers: Record<string, (x: never) => void> = {};
  const source: HidReportSource = {
    on: (ev: string, cb: (x: never) => void) => (handlers[ev] = cb),
    close: () => undefined,
  } as HidReportSource;
  const sm = new SpaceMouseTeleop({ config: TELEOP_DEFAULTS, open: async () => ({ source, info: { vendorId: 0x256f, productId: 0xc652, path: "/dev/hidraw3" } }) });
  await sm.open();
  assert.equal(sm.path, "/dev/hidraw3");
  const g = new TakeoverGesture({ mode: sm.takeoverMode, releaseSec: 0.3 });
  const w = fixture("spacemouse-c652.hex");
  handlers.data(w[0] as never);
  let s = sm.poll(0.1);
  assert.equal(g.update(s, 0.1), true);
  assert.ok(s.linear[0] > 0, "pushing the cap forward moves the tool forward (+x)");
  handlers.data(w[1] as never);
  handlers.data(w[2] as never);
  s = sm.poll(0.1);
  assert.equal(s.gripper, 0);
  g.update(s, 0.1);
  for (let i = 0; i < 3; i++) g.update(sm.poll(0.1), 0.1);
  assert.equal(g.inControl, false, "0.3 s without motion hands back");
  handlers.error(new Error("could not read from HID device") as never);
  assert.match(sm.error ?? "", /\/dev\/hidraw3 stopped.*unplugged/);
  await assert.rejects(
    new SpaceMouseTeleop({ config: TELEOP_DEFAULTS, open: async () => ({ source, info: { vendorId: 0x1234, productId: 1, path: "/dev/hidraw0", product: "Gadget" } }) }).open(),
    /1234:1 \(Gadget\) is not a known SpaceMouse model/,
  );
});

test("leader arm: positions mirror through the calibration, moving takes over, still hands back, a dead bus is an error", async () => {
  const names = [...ARM_SPEC.jointNames];
  const rest = [0, 0.2, 0.4, 0.6, 0.04];
  const moved = [0.1, 0.2, 0.4, 0.6, 0.04];
  const src = new ScriptedJointSource(names, [rest, rest, moved, moved, moved, moved, moved, moved], { failAt: 9 });
  const leader = new LeaderArmTeleop({ config: TELEOP_DEFAULTS, source: src, followerJoints: names });
  await leader.open();
  const g = new TakeoverGesture({ mode: leader.takeoverMode, releaseSec: 0.3 });
  const mapper = new TeleopMapper({ jointLower: ARM_SPEC.jointLower, jointUpper: ARM_SPEC.jointUpper, jointScale: [1, 1, 1, 1, 0.5], jointOffset: [0.05, 0, 0, 0, 0] });
  const step = async () => {
    const s = leader.poll(0.1);
    await leader.settle();
    return s;
  };
  assert.equal(g.update(await step(), 0.1), false, "at rest: the policy keeps control");
  await step();
  const s = await step();
  assert.equal(g.update(s, 0.1), true, "0.1 rad in 0.1 s takes over");
  mapper.begin(rest);
  const target = mapper.apply(s);
  assert.ok(Math.abs(target[0] - 0.15) < 1e-12 && Math.abs(target[4] - 0.02) < 1e-12, "offset + scale × leader");
  for (let i = 0; i < 3; i++) g.update(await step(), 0.1);
  assert.equal(g.inControl, false);
  for (let i = 0; i < 4; i++) await step();
  assert.match(leader.error ?? "", /scripted-leader stopped answering: no status packet/);
  await assert.rejects(new LeaderArmTeleop({ config: TELEOP_DEFAULTS, source: new ScriptedJointSource(["a"], [[0]]), followerJoints: names }).open(), /has joints \[a\] but the follower has/);
});

test("deadzone is continuous at its edge and shaping scales by speed × dt", () => {
  assert.equal(deadzone(0.1, 0.1), 0);
  assert.ok(deadzone(0.1001, 0.1) < 1e-3);
  assert.equal(deadzone(1, 0.1), 1);
  assert.equal(deadzone(Number.NaN, 0.1), 0);
  const t = shapeTwist([1, 0, -0.55, 0, 1, 0], 0.1, { deadzone: 0.1, linearSpeed: 0.2, angularSpeed: 1, axisGain: [1, 1, 1, 1, -1, 1] });
  assert.ok(Math.abs(t.linear[0] - 0.02) < 1e-12);
  assert.ok(Math.abs(t.linear[2] + 0.01) < 1e-12);
  assert.ok(Math.abs(t.angular[1] + 0.1) < 1e-12);
});

test("twist mapping starts at the measured joints, moves the tool as asked, and stays inside the joint limits", () => {
  const m = new TeleopMapper({ jointLower: ARM_SPEC.jointLower, jointUpper: ARM_SPEC.jointUpper, kinematics: ARM5_KINEMATICS });
  const q0 = [0.1, 0.6, 1.2, 1.3, 0.08];
  m.begin(q0);
  const p0 = ARM5_KINEMATICS.forward(q0);
  const s = idleSample();
  s.linear = [0.01, 0, 0];
  const q1 = m.apply(s);
  const p1 = ARM5_KINEMATICS.forward(q1);
  assert.ok(Math.abs(p1[0] - p0[0] - 0.01) < 1e-9 && Math.abs(p1[1] - p0[1]) < 1e-9 && Math.abs(p1[2] - p0[2]) < 1e-9);
  assert.ok(Math.abs(ARM5_KINEMATICS.toolPitch(q1) - ARM5_KINEMATICS.toolPitch(q0)) < 1e-9, "pitch kept");
  s.linear = [5, 0, 0];
  assert.deepEqual(m.apply(s), q1, "out of reach: the target stays");
  assert.equal(m.unreachable, 1);
  const leader = new TeleopMapper({ jointLower: ARM_SPEC.jointLower, jointUpper: ARM_SPEC.jointUpper });
  leader.begin(q0);
  const j = idleSample();
  j.joints = [9, -9, 0, 0, 1];
  assert.deepEqual(leader.apply(j), [2, -1.6, 0, 0, 0.08]);
});

test("keyboard e-stop: delivered the moment the key arrives when the station listens, not at the next poll", () => {
  const input = new EventEmitter() as EventEmitter & KeyInput;
  const kb = new KeyboardTeleop({ config: TELEOP_DEFAULTS, input });
  let estops = 0;
  kb.onEstop = () => estops++;
  void kb.open();
  input.emit("data", Buffer.from("\x1b[A \x1b[A"));
  assert.equal(estops, 1, "Space (0x20) e-stops at once");
  const s = kb.poll(0.1);
  assert.deepEqual(s.commands, [], "the e-stop is not queued a second time");
  assert.ok(s.linear[0] > 0, "the arrow keys around it still jog");
  kb.keyDown("space");
  assert.equal(estops, 2, "the web UI's Space too");
});
