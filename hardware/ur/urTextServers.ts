/**
 * The simulated controller's other TCP interfaces:
 *
 * - Primary (30001) and secondary (30002) client interfaces (UR "Client Interfaces", §"Primary and Secondary
 *   Client Interface"): on connect the primary sends a VERSION robot message; both stream ROBOT_STATE at 10 Hz;
 *   robot messages (program started/stopped, compile errors, safety mode changes, refusals) go to primary
 *   clients only. Both accept URScript programs (urScript.ts), started when their text is complete.
 * - Dashboard server (29999, UR "Dashboard Server e-Series" manual): one command per line, one line back.
 *   Welcome line, `robotmode`, `safetymode`, `safetystatus`, `programState`, `running`, `is in remote control`,
 *   `power on`, `power off`, `brake release`, `unlock protective stop`, `close safety popup`, `play`, `pause`,
 *   `stop`, `PolyscopeVersion`, `quit`. Anything else: "could not understand: '<command>'".
 */
import { createServer, type Server, type Socket } from "node:net";
import { encodeRobotMessage, encodeRobotState, type RobotMessage, type RobotModeData } from "./primaryInterface.ts";

/** What the text interfaces need from the controller. */
export interface TextHost {
  readonly version: readonly [number, number, number, number];
  timestampUs(): bigint;
  robotModeData(): RobotModeData;
  /** Program text from a client; `via` names the interface for messages. */
  script(text: string, via: string): void;
  dashboard(command: string): string;
}

type Sendable = Omit<RobotMessage, "kind"> & { kind: Exclude<RobotMessage["kind"], "other"> };

/** Primary and secondary interfaces (two ports, one class). */
export class PrimarySecondaryServers {
  readonly primary: Server;
  readonly secondary: Server;
  #host: TextHost;
  #clients = new Set<{ sock: Socket; primary: boolean }>();
  #timer: ReturnType<typeof setInterval>;

  constructor(host: TextHost) {
    this.#host = host;
    this.primary = createServer((s) => this.#onConnection(s, true));
    this.secondary = createServer((s) => this.#onConnection(s, false));
    // §"Primary and Secondary Client Interface": robot state at 10 Hz.
    this.#timer = setInterval(() => this.#broadcastState(), 100);
  }

  /** A robot message to every primary client. */
  message(m: Sendable): void {
    const pkt = encodeRobotMessage(this.#host.timestampUs(), m, [...this.#host.version] as [number, number, number, number]);
    for (const c of this.#clients) if (c.primary) this.#write(c.sock, pkt);
  }

  /** Sends the robot state now (after a change, so clients need not wait for the next 10 Hz tick). */
  pushState(): void {
    this.#broadcastState();
  }

  closeAll(): void {
    clearInterval(this.#timer);
    for (const c of this.#clients) c.sock.destroy();
  }

  #write(sock: Socket, pkt: Uint8Array): void {
    if (!sock.destroyed && sock.writable) sock.write(pkt);
  }

  #broadcastState(): void {
    if (!this.#clients.size) return;
    const pkt = encodeRobotState(this.#host.robotModeData());
    for (const c of this.#clients) this.#write(c.sock, pkt);
  }

  #onConnection(sock: Socket, primary: boolean): void {
    sock.setNoDelay(true);
    const c = { sock, primary };
    this.#clients.add(c);
    sock.on("error", () => undefined);
    sock.on("close", () => this.#clients.delete(c));
    if (primary) {
      const [major, minor, bugfix, build] = this.#host.version;
      this.#write(sock, encodeRobotMessage(this.#host.timestampUs(), { kind: "version", title: "URControl", text: "rlft ur-sim", value: 0 }, [major, minor, bugfix, build]));
    }
    this.#write(sock, encodeRobotState(this.#host.robotModeData()));
    let pending = "";
    let quiet: ReturnType<typeof setTimeout> | null = null;
    const flush = (all: boolean) => {
      const i = all ? pending.length - 1 : pending.lastIndexOf("\n");
      if (i < 0) return;
      this.#host.script(`${pending.slice(0, i + 1)}${all && !pending.endsWith("\n") ? "\n" : ""}`, primary ? "primary interface" : "secondary interface");
      pending = pending.slice(i + 1);
    };
    sock.on("data", (d: Buffer) => {
      pending += d.toString("latin1");
      // A client that sends no newline for 64 KiB is not sending URScript.
      if (pending.length > 65536) {
        this.message({ kind: "error_code", title: "", text: `${primary ? "primary" : "secondary"} interface: over 64 KiB without a complete program; discarded`, value: 1 });
        pending = "";
        return;
      }
      flush(false);
      // Clients (ur_rtde's ScriptClient) may end a program with `end` and no newline: what arrived is compiled
      // once the client has been quiet for a moment.
      if (quiet) clearTimeout(quiet);
      quiet = pending ? setTimeout(() => flush(true), 20) : null;
    });
    sock.on("close", () => quiet && clearTimeout(quiet));
  }
}

/** The dashboard server. */
export class DashboardServer {
  readonly server: Server;
  #socks = new Set<Socket>();

  constructor(host: TextHost) {
    this.server = createServer((sock) => {
      this.#socks.add(sock);
      sock.on("error", () => undefined);
      sock.on("close", () => this.#socks.delete(sock));
      sock.write("Connected: Universal Robots Dashboard Server\n");
      let pending = "";
      sock.on("data", (d: Buffer) => {
        pending += d.toString("latin1");
        if (pending.length > 4096) pending = pending.slice(-4096);
        let i: number;
        while ((i = pending.indexOf("\n")) >= 0) {
          const cmd = pending.slice(0, i).replace(/\r$/, "").trim();
          pending = pending.slice(i + 1);
          if (cmd === "quit") {
            sock.end("Disconnected\n");
            return;
          }
          if (!sock.destroyed) sock.write(`${host.dashboard(cmd)}\n`);
        }
      });
    });
  }

  closeAll(): void {
    for (const s of this.#socks) s.destroy();
  }
}
