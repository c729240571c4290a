/**
 * The packet-size guard of the in-process broker against an independent MQTT encoder (mqtt-packet, the one mqtt.js
 * and aedes use): a stream of real packets cut at random places passes whole; the first packet over the limit, and
 * a Remaining Length with a fifth continuation byte, are refused at their header.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { generate, type Packet } from "mqtt-packet";
import { MqttFrameSizer } from "./MqttPacketGuard.ts";
import { mulberry32 } from "../../policies/gaussian.ts";

function randomPackets(rand: () => number, n: number): Buffer[] {
  const out: Buffer[] = [generate({ cmd: "connect", protocolId: "MQTT", protocolVersion: 4, clean: true, clientId: "c", keepalive: 30, username: "u", password: Buffer.from("p") })];
  for (let i = 0; i < n; i++) {
    const size = [0, 1, 127, 128, 16383, 16384, 70_000][Math.floor(rand() * 7)];
    const kinds: Packet[] = [
      { cmd: "publish", topic: `rlft/r${i}/cmd`, payload: Buffer.alloc(size, 0x61), qos: 1, messageId: 1 + i, retain: false, dup: false },
      { cmd: "subscribe", messageId: 1 + i, subscriptions: [{ topic: "rlft/+/status", qos: 1 }] },
      { cmd: "pingreq" },
      { cmd: "puback", messageId: 1 + i },
    ];
    out.push(generate(kinds[Math.floor(rand() * kinds.length)]));
  }
  return out;
}

test("real packets cut at random places pass; the first over the limit is refused at its header", () => {
  const rand = mulberry32(24);
  for (let round = 0; round < 20; round++) {
    const packets = randomPackets(rand, 40);
    const stream = Buffer.concat(packets);
    const biggest = Math.max(...packets.map((p) => p.length));
    const feedAll = (sizer: MqttFrameSizer) => {
      for (let i = 0; i < stream.length; ) {
        const n = 1 + Math.floor(rand() * 300);
        const r = sizer.feed(stream.subarray(i, i + n));
        if (r) return { refusedAt: i, bytes: r.bytes };
        i += n;
      }
      return null;
    };
    assert.equal(feedAll(new MqttFrameSizer(biggest)), null, "every packet fits when the limit is the biggest packet");
    const r = feedAll(new MqttFrameSizer(70_000 - 1));
    if (packets.some((p) => p.length > 70_000)) assert.ok(r && r.bytes >= 70_000, `refused: ${JSON.stringify(r)}`);
  }
  // Remaining Length 0xff 0xff 0xff 0xff 0x7f: five bytes, malformed (MQTT 3.1.1 §2.2.3 allows four).
  assert.deepEqual(new MqttFrameSizer(Number.MAX_SAFE_INTEGER).feed(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x7f])), { bytes: -1 });
});
