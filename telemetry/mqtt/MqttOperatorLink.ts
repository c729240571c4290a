/**
 * Operator commands and robot status over MQTT (the `mqtt` package), per robot:
 *   <prefix>/<robot>/status      retained JSON status; the broker's last will sets {"online": false} when the
 *                                robot vanishes, a clean shutdown publishes the same with reason "shutdown"
 *   <prefix>/<robot>/cmd         commands: JSON {"cmd": "success", "robot": "<robot>"} or a bare word
 *                                ("success"), as a phone app or a foot-pedal bridge sends
 *   <prefix>/<robot>/cmd_result  the answer to each command (not retained)
 * Payloads are validated: malformed ones are counted and never acted on; a command naming another robot
 * is ignored and counted.
 *
 * A command is an act of a person now, so a retained one never acts (issue 24 item 4). A broker hands a retained
 * message to every new subscription with the RETAIN flag set (MQTT 3.1.1 §3.3.1.3, MQTT 5 §3.3.1.3), and the robot
 * subscribes again on every reconnect: a `release_estop` published with retain once would otherwise release every
 * later e-stop the next time the link comes back. A live publish reaches an existing subscription with RETAIN 0
 * (same sections; mosquitto and aedes do so, test/mqtt.test.ts checks both), so checking the flag on receipt separates the
 * two without asking operator apps for timestamps or nonces. Retained deliveries are counted (`stats.retained`) and
 * answered `ok: false` on cmd_result; the session is clean (no queued commands from before a reconnect either).
 */
import { readFileSync } from "node:fs";
import mqtt, { type MqttClient } from "mqtt";
import { z } from "zod";
import type { MqttConfig } from "./MqttConfig.ts";
import type { CommandRequest, CommandResult, OperatorStatus } from "../../contracts/operator.ts";

/** What the link needs from the operator console. */
export interface MqttBackend {
  status(): OperatorStatus;
  onStatus(cb: (s: OperatorStatus) => void): () => void;
  command(req: CommandRequest): CommandResult;
  malformed(from: string, detail: string): void;
}

const Command = z.object({ cmd: z.string().min(1).max(32), robot: z.string().max(128).optional() }).strict();

/** The topics of one robot. */
export function mqttTopics(prefix: string, robot: string): { status: string; cmd: string; result: string } {
  return { status: `${prefix}/${robot}/status`, cmd: `${prefix}/${robot}/cmd`, result: `${prefix}/${robot}/cmd_result` };
}

/** Parses a command payload: JSON object or a bare command word. */
export function parseMqttCommand(payload: Buffer): { cmd: string; robot?: string } | { error: string } {
  const text = payload.toString("utf8").trim();
  if (payload.length > 1024) return { error: `payload of ${payload.length} bytes (at most 1024)` };
  if (/^[a-z_]{1,32}$/.test(text)) return { cmd: text };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { error: `not JSON and not a command word: ${JSON.stringify(text.slice(0, 40))}` };
  }
  const r = Command.safeParse(raw);
  return r.success ? r.data : { error: r.error.issues.map((i) => `${i.path.join(".") || "payload"}: ${i.message}`).join("; ") };
}

/** Options of {@link MqttOperatorLink.connect}. */
export interface MqttOperatorLinkOptions {
  url: string;
  robot: string;
  config: MqttConfig;
}

/** The running link. */
export class MqttOperatorLink {
  readonly topics: ReturnType<typeof mqttTopics>;
  readonly stats = { received: 0, malformed: 0, otherRobot: 0, retained: 0, statusPublished: 0 };
  readonly #client: MqttClient;
  readonly #backend: MqttBackend;
  readonly #robot: string;
  #off: () => void = () => undefined;
  #timer: NodeJS.Timeout | null = null;

  private constructor(client: MqttClient, backend: MqttBackend, o: MqttOperatorLinkOptions) {
    this.#client = client;
    this.#backend = backend;
    this.#robot = o.robot;
    this.topics = mqttTopics(o.config.topic_prefix, o.robot);
  }

  /** The MQTT client (diagnostics; tests cut its socket to see the last will). */
  get client(): MqttClient {
    return this.#client;
  }

  /** Connects (failing with the broker URL and the reason), subscribes and publishes the first status. */
  static async connect(backend: MqttBackend, o: MqttOperatorLinkOptions): Promise<MqttOperatorLink> {
    const c = o.config;
    const topics = mqttTopics(c.topic_prefix, o.robot);
    const password = c.password ?? (c.password_file ? readFileSync(c.password_file, "utf8").trim() : undefined);
    let client: MqttClient;
    try {
      client = await mqtt.connectAsync(o.url, {
        clientId: c.client_id ?? `rlft-${o.robot}`,
        username: c.username,
        password,
        clean: true,
        connectTimeout: 5000,
        reconnectPeriod: 1000,
        will: { topic: topics.status, payload: Buffer.from(JSON.stringify({ robot: o.robot, online: false, reason: "connection lost" })), qos: 1, retain: true },
      });
    } catch (e) {
      const msg = (e as Error).message;
      const hint = /auth|password|not authorized/i.test(msg) ? " — check mqtt.username / mqtt.password (or password_file)" : /ECONNREFUSED/.test(msg) ? " — is the broker running? (remove mqtt.url to use the in-process broker)" : "";
      throw new Error(`MQTT broker at ${o.url} refused the connection: ${msg}${hint}`);
    }
    const link = new MqttOperatorLink(client, backend, o);
    client.on("message", (topic, payload, packet) => link.#onMessage(topic, payload, packet.retain));
    client.on("connect", () => void link.#publishStatus(backend.status()));
    client.on("error", () => undefined); // reconnects are automatic; connect errors were reported above
    await client.subscribeAsync(topics.cmd, { qos: 1 });
    await link.#publishStatus(backend.status());
    let last = "";
    link.#off = backend.onStatus((s) => {
      // On every change of what a phone shows at a glance at once; the rest at status_hz.
      const key = `${s.state}|${s.estop}|${s.episode}|${s.lastOutcome}|${s.inControl}`;
      if (key !== last) {
        last = key;
        void link.#publishStatus(s);
      }
    });
    link.#timer = setInterval(() => void link.#publishStatus(backend.status()), 1000 / c.status_hz);
    link.#timer.unref();
    return link;
  }

  async #publishStatus(s: OperatorStatus): Promise<void> {
    if (!this.#client.connected) return;
    const body = { ...s, history: s.history.slice(-20), online: true, ts: new Date().toISOString() };
    await this.#client.publishAsync(this.topics.status, JSON.stringify(body), { qos: 1, retain: true }).catch(() => undefined);
    this.stats.statusPublished++;
  }

  #onMessage(topic: string, payload: Buffer, retained: boolean): void {
    if (topic !== this.topics.cmd) return;
    this.stats.received++;
    const parsed = parseMqttCommand(payload);
    let result: CommandResult;
    if (retained) {
      this.stats.retained++;
      const what = "error" in parsed ? "a retained message" : `retained command ${JSON.stringify(parsed.cmd)}`;
      result = { ok: false, ignored: true, error: `${what} ignored: the broker replays retained messages on every (re)subscription, so they are never acted on — publish commands without the retain flag, and clear it with an empty retained message on ${topic}` };
    } else if ("error" in parsed) {
      this.stats.malformed++;
      this.#backend.malformed("mqtt", parsed.error);
      result = { ok: false, error: `malformed command: ${parsed.error}` };
    } else {
      const req: CommandRequest = { cmd: parsed.cmd, robot: parsed.robot, from: "mqtt" };
      if (req.robot !== undefined && req.robot !== this.#robot) this.stats.otherRobot++;
      result = this.#backend.command(req);
    }
    void this.#client.publishAsync(this.topics.result, JSON.stringify({ robot: this.#robot, ...result }), { qos: 0 }).catch(() => undefined);
  }

  /** Marks the robot offline (retained) and disconnects. */
  async close(): Promise<void> {
    this.#off();
    if (this.#timer) clearInterval(this.#timer);
    if (this.#client.connected) {
      await this.#client.publishAsync(this.topics.status, JSON.stringify({ robot: this.#robot, online: false, reason: "shutdown" }), { qos: 1, retain: true }).catch(() => undefined);
    }
    await this.#client.endAsync();
  }
}
