/**
 * An in-process MQTT broker (aedes) for the laptop case: when no broker URL is configured the stack still
 * has one, so the UI, phones on the same machine and `mosquitto_pub` work. Loopback only; when a username
 * is configured, clients must present it and the password (compared in constant time).
 */
import { createServer, type Server } from "node:net";
import { timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import { Aedes, type AuthenticateError } from "aedes";

/** Options of {@link EmbeddedBroker.start}. */
export interface EmbeddedBrokerOptions {
  /** 0 = a free port. */
  port: number;
  host?: string;
  username?: string;
  password?: string;
}

/** The running broker. */
export class EmbeddedBroker {
  readonly url: string;
  readonly #broker: Aedes;
  readonly #server: Server;

  private constructor(broker: Aedes, server: Server, url: string) {
    this.#broker = broker;
    this.#server = server;
    this.url = url;
  }

  /** Starts aedes on host:port. */
  static async start(o: EmbeddedBrokerOptions): Promise<EmbeddedBroker> {
    const broker = await Aedes.createBroker();
    if (o.username !== undefined) {
      const user = Buffer.from(o.username);
      const pass = Buffer.from(o.password ?? "");
      broker.authenticate = (_client, username, password, done) => {
        const u = Buffer.from(username ?? "");
        const p = password ?? Buffer.alloc(0);
        const ok = u.length === user.length && timingSafeEqual(u, user) && p.length === pass.length && timingSafeEqual(p, pass);
        if (ok) return done(null, true);
        const err = Object.assign(new Error("bad username or password"), { returnCode: 4 }) as AuthenticateError;
        done(err, null);
      };
    }
    const server = createServer(broker.handle);
    const host = o.host ?? "127.0.0.1";
    await new Promise<void>((resolve, reject) => {
      server.once("error", (e: NodeJS.ErrnoException) =>
        reject(new Error(e.code === "EADDRINUSE" ? `mqtt.embedded_port ${o.port} is in use (another broker running?): set mqtt.url to use it, or mqtt.embedded_port: 0 for a free port` : `embedded MQTT broker cannot listen on ${host}:${o.port}: ${e.message}`)),
      );
      server.listen(o.port, host, () => resolve());
    });
    return new EmbeddedBroker(broker, server, `mqtt://${host}:${(server.address() as AddressInfo).port}`);
  }

  /** Stops accepting clients and closes the broker. */
  async close(): Promise<void> {
    await new Promise<void>((r) => this.#broker.close(() => r()));
    await new Promise<void>((r) => this.#server.close(() => r()));
  }
}
