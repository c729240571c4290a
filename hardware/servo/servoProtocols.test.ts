/** Packet bytes of both servo protocols against the vendors' published examples; register encodings. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { feetechProtocol, feetechChecksum } from "../feetech/feetechProtocol.ts";
import { dynamixelProtocol, dynamixelCrc, hardwareErrorText, stuff, unstuff } from "../dynamixel/dynamixelProtocol.ts";
import { decodeRegister, encodeRegister } from "./ServoModel.ts";
import { STS3215 } from "../feetech/STS3215.ts";
import { XL330 } from "../dynamixel/XL330.ts";
import { serialOpenError } from "../transport/TransportError.ts";

const hex = (a: Uint8Array) => Buffer.from(a).toString("hex");

test("Feetech packets: ping, read, sync write framing and checksum (protocol manual examples)", () => {
  // Ping id 1: FF FF 01 02 01 FB (checksum ~(1+2+1)).
  assert.equal(hex(feetechProtocol.ping(1)), "ffff010201fb");
  // Read 2 bytes of Present_Position (56) from id 1.
  const r = feetechProtocol.read(1, 56, 2);
  assert.equal(hex(r), "ffff0104023802" + feetechChecksum([1, 4, 2, 56, 2]).toString(16).padStart(2, "0"));
  const sw = feetechProtocol.syncWrite(42, 2, [
    { id: 1, data: Uint8Array.from([0x00, 0x08]) },
    { id: 2, data: Uint8Array.from([0xff, 0x07]) },
  ]);
  assert.deepEqual([...sw.subarray(0, 7)], [0xff, 0xff, 0xfe, 10, 0x83, 42, 2]);
  const d = feetechProtocol.decode(sw);
  assert.equal(d.kind, "packet");
  // A flipped bit is caught.
  const bad = Uint8Array.from(sw);
  bad[8] ^= 1;
  const c = feetechProtocol.decode(bad);
  assert.equal(c.kind, "corrupt");
  assert.match((c as { error: string }).error, /checksum mismatch/);
  // Garbage before a packet is skipped.
  assert.deepEqual(feetechProtocol.decode(Uint8Array.from([0x00, 0x12, 0xff])), { kind: "skip", bytes: 2 });
});

test("Dynamixel 2.0 packets match the e-Manual's examples (CRC-16, byte stuffing)", () => {
  assert.equal(hex(dynamixelProtocol.ping(1)), "fffffd0001030001194e");
  assert.equal(hex(dynamixelProtocol.read(1, 132, 4)), "fffffd0001070002840004001d15");
  // Status of that read (Present Position 166): ... 55 00 A6 00 00 00 8C C0.
  assert.equal(dynamixelCrc([0xff, 0xff, 0xfd, 0x00, 0x01, 0x08, 0x00, 0x55, 0x00, 0xa6, 0x00, 0x00, 0x00]), 0xc08c);
  const status = dynamixelProtocol.statusPacket(1, 0, Uint8Array.from([0xa6, 0, 0, 0]));
  assert.equal(hex(status), "fffffd0001080055" + "00a6000000" + "8cc0");
  assert.deepEqual(stuff([0x03, 0xff, 0xff, 0xfd, 0x01]), [0x03, 0xff, 0xff, 0xfd, 0xfd, 0x01]);
  assert.deepEqual([...unstuff(Uint8Array.from([0x03, 0xff, 0xff, 0xfd, 0xfd, 0x01]))], [0x03, 0xff, 0xff, 0xfd, 0x01]);
  // A write whose data contains FF FF FD survives the round trip.
  const w = dynamixelProtocol.write(3, 116, Uint8Array.from([0xff, 0xff, 0xfd, 0x00]));
  const d = dynamixelProtocol.decode(w);
  assert.equal(d.kind, "packet");
  assert.deepEqual([...(d as { packet: { params: Uint8Array } }).packet.params], [116, 0, 0xff, 0xff, 0xfd, 0x00]);
  const bad = Uint8Array.from(w);
  bad[9] ^= 0x10;
  assert.equal(dynamixelProtocol.decode(bad).kind, "corrupt");
  assert.match(dynamixelProtocol.errorText(0x80 | 7), /Access Error.*Alert/);
});

test("register encodings: Feetech sign-magnitude, Dynamixel two's complement, range errors", () => {
  const vel = STS3215.registers.Present_Velocity;
  assert.deepEqual([...encodeRegister(vel, -100, "little")], [100, 0x80]);
  assert.equal(decodeRegister(vel, Uint8Array.from([100, 0x80]), "little"), -100);
  assert.equal(decodeRegister(STS3215.registers.Homing_Offset, encodeRegister(STS3215.registers.Homing_Offset, -2000, "little"), "little"), -2000);
  const gp = XL330.registers.Goal_Position;
  assert.deepEqual([...encodeRegister(gp, -2, "little")], [0xfe, 0xff, 0xff, 0xff]);
  assert.equal(decodeRegister(gp, Uint8Array.from([0xfe, 0xff, 0xff, 0xff]), "little"), -2);
  assert.throws(() => encodeRegister(STS3215.registers.Torque_Enable, 300, "little", "Torque_Enable"), /Torque_Enable: 300 outside 0..255/);
});

test("serial open errors name the fix: dialout group, busy port, missing device", () => {
  const eacces = serialOpenError("/dev/ttyACM0", Object.assign(new Error("Error: Permission denied, cannot open /dev/ttyACM0"), { code: "EACCES" }));
  assert.equal(eacces.code, "PORT_PERMISSION");
  assert.match(eacces.message, /add your user to the dialout group/);
  assert.equal(serialOpenError("/dev/ttyACM0", new Error("Error Resource temporarily unavailable Cannot lock port")).code, "PORT_BUSY");
  assert.equal(serialOpenError("/dev/ttyACM9", new Error("Error: No such file or directory, cannot open /dev/ttyACM9")).code, "PORT_NOT_FOUND");
});

test("PacketChannel: a reply whose data callback is queued when the deadline passes is the reply, not a timeout", async () => {
  const { PacketChannel } = await import("./PacketChannel.ts");
  let deliver: ((c: Uint8Array) => void) | null = null;
  // A host stalled past the deadline while the reply was already in: its data callback runs after the deadline.
  const transport = {
    name: "stalled-host",
    isOpen: true,
    onData: (cb: (c: Uint8Array) => void) => ((deliver = cb), () => (deliver = null)),
    onClose: () => () => undefined,
    close: async () => undefined,
    write: async () => {
      // The stall (longer than the 5 ms deadline) runs once the channel waits; the reply's callback is queued
      // behind it, so the deadline timer fires first.
      setImmediate(() => {
        const until = Date.now() + 20;
        while (Date.now() < until);
        setImmediate(() => deliver?.(Uint8Array.of(7)));
      });
    },
  };
  const channel = new PacketChannel<number>(transport, (buf) => (buf.length ? { kind: "packet", packet: buf[0], bytes: 1 } : { kind: "need_more" }));
  const [r] = await channel.transact(Uint8Array.of(1), { replies: 1, timeoutMs: 5 });
  assert.deepEqual(r, { ok: true, packet: 7 });
  // A bus that really stays silent still times out.
  transport.write = async () => undefined;
  const [t] = await channel.transact(Uint8Array.of(1), { replies: 1, timeoutMs: 5 });
  assert.equal(t.ok, false);
  channel.dispose();
});

test("every Feetech status bit and every Dynamixel error number and hardware-error bit has its name", () => {
  // Feetech STS memory table, Status (65): bit 0 voltage, 1 sensor, 2 temperature, 3 current, 4 angle, 5 overload.
  const feetech = [/input voltage/, /angle sensor/, /overheating/, /overcurrent/, /angle error/, /overload/];
  for (const [bit, name] of feetech.entries()) {
    const text = feetechProtocol.errorText(1 << bit);
    assert.match(text, name, `Feetech bit ${bit}: '${text}'`);
    for (const [other, n] of feetech.entries()) if (other !== bit) assert.doesNotMatch(text, n, `Feetech bit ${bit} also reads as bit ${other}`);
  }
  assert.equal(feetechProtocol.errorText(0), "");
  // Bits the memory table does not define are reported, not dropped as "no error".
  assert.equal(feetechProtocol.errorText(0x40), "undocumented status bit 6");
  assert.equal(feetechProtocol.errorText(0x80 | 0x20), "overload, undocumented status bit 7");

  // Dynamixel X, e-Manual "Shutdown(63)": bit 0 input voltage, 2 overheating, 3 motor encoder, 4 electrical shock, 5 overload.
  const dxl: [number, RegExp][] = [
    [0, /Input Voltage Error.*\[bit 0\]/],
    [2, /Overheating Error.*\[bit 2\]/],
    [3, /Motor Encoder Error \[bit 3\]/],
    [4, /Electrical Shock Error.*\[bit 4\]/],
    [5, /Overload Error.*\[bit 5\]/],
    [1, /undocumented hardware error \[bit 1\]/],
    [6, /undocumented hardware error \[bit 6\]/],
    [7, /undocumented hardware error \[bit 7\]/],
  ];
  for (const [bit, name] of dxl) assert.match(hardwareErrorText(1 << bit), name);
  assert.match(hardwareErrorText(0b100100), /Overheating.*Overload/);
  // Protocol 2.0 status "Error": numbers 1–7, and the Alert bit.
  const numbers = [/Result Fail/, /Instruction Error/, /CRC Error/, /Data Range Error/, /Data Length Error/, /Data Limit Error/, /Access Error/];
  for (const [i, name] of numbers.entries()) assert.match(dynamixelProtocol.errorText(i + 1), name);
  assert.match(dynamixelProtocol.errorText(0x80), /Alert: hardware error/);
});
