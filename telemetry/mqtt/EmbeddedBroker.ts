/**
 * An in-process MQTT broker (aedes) for the laptop case: when no broker URL is configured the stack still
 * has one, so the UI, phones on the same machine and `mosquitto_pub` work. Loopback (any other host goes through
 * checkListenAddress and needs credentials); when a username is configured, every client, anonymous ones included,
 * must present it and the password (compared in constant time) before it may publish or subscribe. Packets over
 * `maxPacketBytes` cut their connection before their body is read (MqttPacketGuard).
 */
import { createServer, type Server } from "node:net";
import { timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import { Aedes, type AuthenticateError } from "aedes";
import { checkListenAddress } from "../../runtime/listenAddress.ts";
import { guardMqttSocket } from "./MqttPacketGuard.ts";

/**
 * Default packet limit: a command is at most 1 KiB (MqttOperatorLink), a status a few KiB; 256 KiB leaves room for
 * anything else a laptop sends through it and keeps a flood of maximum-size publishes to a bounded memory.
 */
export const EMBEDDED_MAX_PACKET_BYTES = 256 * 1024;

/** Options of {@link EmbeddedBroker.start}. */
export interface EmbeddedBrokerOptions {
  /** 0 = a free port. */
  port: number;
  host?: string;
  username?: string;
  password?: string;
  /** Largest MQTT packet accepted (default {@link EMBEDDED_MAX_PACKET_BYTES}); a bigger one closes its connection. */
  maxPacketBytes?: number;
}

/** The running broker. */
export class EmbeddedBroker {
  readonly url: string;
  /** Connections cut for an oversize (or malformed-length) packet, and CONNECTs refused for credentials. */
  readonly refused: { oversize: number; auth: number };
  readonly #broker: Aedes;
  readonly #server: Server;

  private constructor(broker: Aedes, server: Server, url: string, refused: { oversize: number; auth: number }) {
    this.#broker = broker;
    this.#server = server;
    this.url = url;
    this.refused = refused;
  }

  /** Starts aedes on host:port. */
  static async start(o: EmbeddedBrokerOptions): Promise<EmbeddedBroker> {
    const host = o.host ?? "127.0.0.1";
    checkListenAddress({ setting: "the in-process MQTT broker's host", address: host, authenticated: o.username !== undefined, risk: "command the robot on its MQTT topics", authFix: "set mqtt.username and mqtt.password (or password_file)" });
    const refused = { oversize: 0, auth: 0 };
    const broker = await Aedes.createBroker();
    if (o.username !== undefined) {
      const user = Buffer.from(o.username);
      const pass = Buffer.from(o.password ?? "");
      broker.authenticate = (_client, username, password, done) => {
        const u = Buffer.from(username ?? "");
        const p = password ?? Buffer.alloc(0);
        const ok = u.length === user.length && timingSafeEqual(u, user) && p.length === pass.length && timingSafeEqual(p, pass);
        if (ok) return done(null, true);
        refused.auth++;
        const err = Object.assign(new Error("bad username or password"), { returnCode: 4 }) as AuthenticateError;
        done(err, null);
      };
    }
    const max = o.maxPacketBytes ?? EMBEDDED_MAX_PACKET_BYTES;
    const server = createServer((socket) => broker.handle(guardMqttSocket(socket, max, () => void refused.oversize++)));
    await new Promise<void>((resolve, reject) => {
      server.once("error", (e: NodeJS.ErrnoException) =>
        reject(new Error(e.code === "EADDRINUSE" ? `mqtt.embedded_port ${o.port} is in use (another broker running?): set mqtt.url to use it, or mqtt.embedded_port: 0 for a free port` : `embedded MQTT broker cannot listen on ${host}:${o.port}: ${e.message}`)),
      );
      server.listen(o.port, host, () => resolve());
    });
    return new EmbeddedBroker(broker, server, `mqtt://${host.includes(":") ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`, refused);
  }

  /** Stops accepting clients and closes the broker. */
  async close(): Promise<void> {
    await new Promise<void>((r) => this.#broker.close(() => r()));
    await new Promise<void>((r) => this.#server.close(() => r()));
  }
}
