/**
 * Seeded fuzzers for the doors an outsider reaches on the robot (issue 24): the operator UI (raw HTTP requests and
 * WebSocket frames) and MQTT (payloads on the command topic, raw bytes at the in-process broker). Each sends random and
 * mutated input, bounded by a count and a time budget, and returns what it sent. Inputs that would be a well-formed
 * operator command are never sent (they would rightly act): everything sent must be refused, so "no command reached
 * the robot" is an exact check. Same seed, same inputs.
 */
import type { Socket } from "node:net";
import mqtt from "mqtt";
import { mulberry32 } from "../../policies/gaussian.ts";
import { OPERATOR_COMMANDS } from "../../contracts/operator.ts";
import { parseMqttCommand } from "../../telemetry/mqtt/MqttOperatorLink.ts";
import { frame, rawConnect, upgradeRequest } from "./rawWebSocket.ts";

/** What a fuzz run sent. */
export interface FuzzReport {
  sent: number;
  /** Inputs by kind ("http", "ws-frame", "publish", "raw-mqtt", ...). */
  kinds: Record<string, number>;
  /** Generated inputs dropped because they were a well-formed command. */
  skippedValid: number;
  seconds: number;
}

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
const bytes = (r: Rand, n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(r() * 256)));

/** A valid-looking seed mutated: byte flips, insertions, deletions, truncation, duplication. */
function mutate(r: Rand, seed: Buffer): Buffer {
  let b = Buffer.from(seed);
  for (let i = int(r, 1, 4); i > 0; i--) {
    const at = int(r, 0, Math.max(0, b.length - 1));
    switch (int(r, 0, 5)) {
      case 0:
        if (b.length) b[at] ^= 1 << int(r, 0, 7);
        break;
      case 1:
        b = Buffer.concat([b.subarray(0, at), bytes(r, int(r, 1, 8)), b.subarray(at)]);
        break;
      case 2:
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + int(r, 1, 4))]);
        break;
      case 3:
        b = b.subarray(0, at);
        break;
      case 4:
        b = Buffer.concat([b, b.subarray(0, int(r, 0, b.length))]);
        break;
      default:
        if (b.length) b[at] = pick(r, [0x00, 0x22, 0x5c, 0x7b, 0x7d, 0xc3, 0xff, 0x0a]);
    }
  }
  return b;
}

const COMMAND_SEEDS = OPERATOR_COMMANDS.flatMap((c) => [c, JSON.stringify({ cmd: c }), JSON.stringify({ type: "command", cmd: c }), JSON.stringify({ type: "key", key: "up", down: true })]);

/** True when a UI message could act: JSON whose type is command or key (kept out, conservatively). */
function uiMessageCouldAct(payload: Buffer): boolean {
  try {
    const m = JSON.parse(payload.toString("utf8")) as { type?: unknown };
    return m !== null && typeof m === "object" && (m.type === "command" || m.type === "key");
  } catch {
    return false;
  }
}

/** True when an MQTT payload parses to a known command for this robot (it would rightly act). */
function mqttPayloadCouldAct(payload: Buffer, robot: string): boolean {
  const p = parseMqttCommand(payload);
  return !("error" in p) && (OPERATOR_COMMANDS as readonly string[]).includes(p.cmd) && (p.robot === undefined || p.robot === robot);
}

function randomRequest(r: Rand, host: string, token: string): Buffer {
  return r() < 0.6 ? plausibleRequest(r, host, token) : hostileRequest(r, host, token);
}

/** A well-formed request to a real route with a wrong or missing token: it reaches the token check and the body parser. */
function plausibleRequest(r: Rand, host: string, token: string): Buffer {
  const wrong = pick(r, ["", token.slice(0, -1), `${token}x`, token.toUpperCase(), "x".repeat(token.length), `${token}%00`]);
  const [method, path] = pick(r, [["GET", "/api/status"], ["POST", "/api/command"], ["GET", "/"], ["GET", "/app.js"], ["POST", "/api/status"], ["GET", "/ws"]] as const);
  const query = r() < 0.5 ? `?token=${encodeURIComponent(wrong)}` : "";
  const body = method === "POST" ? mutate(r, Buffer.from(pick(r, COMMAND_SEEDS))) : Buffer.alloc(0);
  const headers = [`Host: ${host}`, `Content-Length: ${body.length}`, "Content-Type: application/json"];
  if (!query && r() < 0.5) headers.push(`Authorization: Bearer ${wrong}`);
  if (r() < 0.3) headers.push(`Origin: http://${host}`);
  return Buffer.concat([Buffer.from(`${method} ${path}${query} HTTP/1.1\r\n${headers.join("\r\n")}\r\n\r\n`, "latin1"), body]);
}

/** Anything at all on the wire: broken request lines, headers, lengths, encodings. */
function hostileRequest(r: Rand, host: string, token: string): Buffer {
  const method = pick(r, ["GET", "POST", "PUT", "HEAD", "OPTIONS", "DELETE", "G\u0000T", "PATCH", "CONNECT", "get"]);
  const wrong = pick(r, ["", token.slice(0, -1), `${token}x`, token.toUpperCase(), "x".repeat(token.length), "%00", "%"]);
  const target = pick(r, ["/", "/api/status", "/api/command", "/ws", "/app.js", "//[", "/%", "/..%2f..%2fetc/passwd", `/api/command?token=${wrong}`, `/ws?token=${wrong}`, "*", "http://evil.example/api/command", `/${bytes(r, int(r, 1, 60)).toString("latin1")}`, `/${"a".repeat(int(r, 100, 9000))}`]);
  const version = pick(r, ["HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/9.9", "", "HTTP/1.1\u0000"]);
  const headers: string[] = [];
  if (r() < 0.9) headers.push(`Host: ${pick(r, [host, "evil.example", "", `${host}${"x".repeat(int(r, 0, 300))}`, "[::1"])}`);
  if (r() < 0.3) headers.push(`Origin: ${pick(r, ["http://evil.example", `http://${host}`, "null", "%", ""])}`);
  if (r() < 0.4) headers.push(`Authorization: ${pick(r, [`Bearer ${wrong}`, `Basic ${Buffer.from(`u:${token}`).toString("base64")}`, "Bearer", `bearer ${token.slice(1)}`])}`);
  if (r() < 0.4) headers.push("Upgrade: websocket", "Connection: Upgrade", `Sec-WebSocket-Key: ${pick(r, ["dGhlIHNhbXBsZSBub25jZQ==", "", "!!"])}`, `Sec-WebSocket-Version: ${pick(r, ["13", "8", "x"])}`);
  const body = r() < 0.5 ? mutate(r, Buffer.from(pick(r, COMMAND_SEEDS))) : bytes(r, int(r, 0, 6000));
  if (r() < 0.5) headers.push(`Content-Length: ${pick(r, [String(body.length), "-1", "99999999999", String(body.length + 10), "abc"])}`);
  else if (r() < 0.3) headers.push("Transfer-Encoding: chunked");
  for (let i = int(r, 0, 3); i > 0; i--) headers.push(`${bytes(r, int(r, 1, 12)).toString("latin1").replace(/[\r\n:]/g, "x")}: ${bytes(r, int(r, 0, 40)).toString("latin1").replace(/[\r\n]/g, "")}`);
  const head = Buffer.from(`${method} ${target} ${version}\r\n${headers.join("\r\n")}\r\n\r\n`, "latin1");
  return Buffer.concat([head, body]);
}

/** Writes `data` and ends the connection one of the ways a hostile client does; never throws. */
async function sendAndEnd(r: Rand, socket: Socket, data: Buffer): Promise<void> {
  socket.on("error", () => undefined);
  socket.resume();
  const how = int(r, 0, 3);
  if (how === 0) {
    socket.write(data);
    socket.resetAndDestroy();
    return;
  }
  const cut = how === 1 ? int(r, 0, data.length) : data.length;
  socket.write(data.subarray(0, cut));
  await new Promise((res) => setTimeout(res, int(r, 0, 3)));
  if (how === 3) socket.end();
  else socket.resetAndDestroy();
}

/**
 * The operator UI at `port`: raw HTTP requests without a valid token, then WebSocket connections opened with the
 * token that send random and mutated frames. `count` inputs or `ms` milliseconds, whichever ends first.
 */
export async function fuzzOperatorUi(o: { port: number; token: string; seed: number; count: number; ms: number }): Promise<FuzzReport> {
  const r = mulberry32(o.seed);
  const report: FuzzReport = { sent: 0, kinds: {}, skippedValid: 0, seconds: 0 };
  const t0 = Date.now();
  const host = `127.0.0.1:${o.port}`;
  const count = (k: string) => ((report.kinds[k] = (report.kinds[k] ?? 0) + 1), report.sent++);
  const timeLeft = () => Date.now() - t0 < o.ms;
  // Half the budget: HTTP requests, a few at a time.
  while (report.sent < o.count / 2 && timeLeft()) {
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        const s = await rawConnect(o.port).catch(() => null);
        if (!s) return;
        await sendAndEnd(r, s, randomRequest(r, host, o.token));
        count("http");
      }),
    );
  }
  // The other half: frames on authorised WebSockets (the frame parser and the message schema are the door).
  while (report.sent < o.count && timeLeft()) {
    const s = await rawConnect(o.port).catch(() => null);
    if (!s) continue;
    s.on("error", () => undefined);
    s.resume();
    s.write(upgradeRequest(host, `/ws?token=${encodeURIComponent(o.token)}`));
    for (let i = int(r, 1, 12); i > 0 && !s.destroyed; i--) {
      let payload = r() < 0.6 ? mutate(r, Buffer.from(pick(r, COMMAND_SEEDS))) : bytes(r, pick(r, [0, 1, 2, 125, 126, 127, 4096, 4097, 5000, int(r, 0, 300)]));
      if (uiMessageCouldAct(payload)) {
        report.skippedValid++;
        payload = Buffer.concat([payload, Buffer.from([0xff])]);
      }
      const opcode = pick(r, [1, 1, 1, 2, 0, 8, 9, 10, 3, 11, 15]);
      const f = frame(opcode, payload, { fin: r() < 0.85, mask: r() < 0.9, rsv: r() < 0.1 ? int(r, 1, 7) : 0, declaredLength: r() < 0.05 ? payload.length + int(r, 1, 1 << 20) : undefined });
      s.write(r() < 0.1 ? f.subarray(0, int(r, 0, f.length)) : f);
      count("ws-frame");
    }
    await new Promise((res) => setTimeout(res, int(r, 0, 2)));
    if (r() < 0.5) s.resetAndDestroy();
    else s.end();
  }
  report.seconds = (Date.now() - t0) / 1000;
  return report;
}

/**
 * MQTT at `url`: an authenticated client publishes random and mutated payloads on the robot's command topic (QoS 1,
 * a third with the retain flag), then raw connections send random bytes and mutated MQTT packets to the broker.
 */
export async function fuzzMqtt(o: { url: string; username?: string; password?: string; robot: string; seed: number; count: number; ms: number; rawBroker: boolean }): Promise<FuzzReport & { published: number }> {
  const r = mulberry32(o.seed);
  const report = { sent: 0, kinds: {} as Record<string, number>, skippedValid: 0, seconds: 0, published: 0 };
  const t0 = Date.now();
  const timeLeft = () => Date.now() - t0 < o.ms;
  const count = (k: string) => ((report.kinds[k] = (report.kinds[k] ?? 0) + 1), report.sent++);
  const topic = `rlft/${o.robot}/cmd`;
  const c = await mqtt.connectAsync(o.url, { username: o.username, password: o.password, reconnectPeriod: 0, clientId: `fuzz-${o.seed}` });
  try {
    // Half the time for publishes, in flights of 20 (the broker runs in the robot's busy process).
    while (report.published < o.count / 2 && Date.now() - t0 < o.ms / 2) {
      const flight: Promise<unknown>[] = [];
      while (flight.length < 20) {
        const payload = r() < 0.6 ? mutate(r, Buffer.from(pick(r, [...COMMAND_SEEDS, JSON.stringify({ cmd: "estop", robot: o.robot })]))) : bytes(r, pick(r, [0, 1, 32, 1023, 1024, 1025, 4000, 60_000, int(r, 0, 200)]));
        if (mqttPayloadCouldAct(payload, o.robot)) {
          report.skippedValid++;
          continue;
        }
        flight.push(c.publishAsync(topic, payload, { qos: 1, retain: r() < 0.33 }));
        report.published++;
        count("publish");
      }
      await Promise.all(flight);
    }
    await c.publishAsync(topic, "", { qos: 1, retain: true }); // clear whatever retained message is left
  } finally {
    await c.endAsync(true);
  }
  if (o.rawBroker) {
    const port = Number(new URL(o.url).port);
    // CONNECT without credentials (MQTT 3.1.1 §3.1: "MQTT", level 4, clean session, keep-alive 60 s, a client id) and
    // a QoS 0 PUBLISH of "estop" on the command topic (§3.3).
    const cid = Buffer.from("fzz-raw");
    const vh = Buffer.concat([Buffer.from([0, 4]), Buffer.from("MQTT"), Buffer.from([4, 2, 0, 60, 0, cid.length]), cid]);
    const connect = Buffer.concat([Buffer.from([0x10, vh.length]), vh]);
    const body = Buffer.concat([Buffer.from([0, topic.length]), Buffer.from(topic), Buffer.from("estop")]);
    const publish = Buffer.concat([Buffer.from([0x30, body.length]), body]);
    for (let n = 0; report.sent < o.count && (timeLeft() || n < 40); n++) {
      const s = await rawConnect(port).catch(() => null);
      if (!s) continue;
      const kind = n % 4;
      const data =
        kind === 0 ? bytes(r, int(r, 1, 400))
        : kind === 1 ? Buffer.concat([mutate(r, connect), mutate(r, publish)])
        : kind === 2 ? Buffer.concat([connect, Buffer.from([0x30, 0xff, 0xff, 0xff, 0x7f]), bytes(r, 1000)]) // a 256 MB PUBLISH header
        : Buffer.concat([publish, connect]); // a PUBLISH before CONNECT
      await sendAndEnd(r, s, data);
      count("raw-mqtt");
    }
  }
  report.seconds = (Date.now() - t0) / 1000;
  return report;
}
