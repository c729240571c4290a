/**
 * The RTDE server of the simulated controller (UR "Real-Time Data Exchange (RTDE) Guide", §Protocol):
 *
 * - §RTDE_REQUEST_PROTOCOL_VERSION: versions 1..maxProtocolVersion accepted; v2 adds the output frequency to
 *   SETUP_OUTPUTS and the recipe id to data packages.
 * - §RTDE_CONTROL_PACKAGE_SETUP_OUTPUTS / _INPUTS: every name is answered with its type, NOT_FOUND (not a field of
 *   the 5.x list in rtdeFields.ts, offered whatever version the controller reports) or IN_USE (§"Field names": "only one RTDE client can control a
 *   specific variable at any time" — an input another connection, or a fieldbus, already writes). Recipe ids are
 *   numbered per connection (1, 2, …); a rejected recipe gets id 0.
 * - §RTDE_CONTROL_PACKAGE_START / _PAUSE; output data packages at the recipe's frequency, in controller cycles:
 *   the controller runs at 500 Hz (e-Series; 125 Hz CB3) and sends a package in each cycle that is due, stamped
 *   with that cycle's `timestamp`, so the rate a client counts against `timestamp` is the configured one.
 * - §RTDE_DATA_PACKAGE from the client: the inputs of one of this connection's input recipes; a package for an
 *   unknown recipe or of the wrong length is answered with a text message and ignored.
 */
import { createServer, type Server, type Socket } from "node:net";
import { RTDE, bytes, decodeValues, encodeTextMessage, encodeValues, rtdePackage, splitPackages, text, type RtdeType, type RtdeValue } from "./rtdeProtocol.ts";
import { RTDE_INPUTS, RTDE_OUTPUTS } from "./rtdeFields.ts";

/** What the RTDE server needs from the controller. */
export interface RtdeHost {
  readonly maxProtocolVersion: number;
  readonly version: readonly [number, number, number, number];
  /** Controller cycles per second (500 e-Series, 125 CB3): the top output frequency. */
  readonly cycleHz: number;
  /** Input names a fieldbus holds (answered IN_USE). */
  readonly inUse: ReadonlySet<string>;
  /** Value of an output field in the current cycle. */
  output(name: string): RtdeValue;
  /** Input values written by a client. */
  input(values: Record<string, RtdeValue>): void;
}

/**
 * The comma-separated names of a setup package. Empty names are skipped: SDU's ur_rtde ends its lists with a
 * comma, which a controller accepts.
 */
function fieldNames(p: Uint8Array): string[] {
  return text(p)
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
}

interface Session {
  sock: Socket;
  buf: Uint8Array;
  version: number;
  nextId: number;
  output: { names: string[]; types: RtdeType[]; id: number; frequency: number } | null;
  inputs: Map<number, { names: string[]; types: RtdeType[] }>;
  running: boolean;
  /** Phase accumulator: a package is due each time it passes cycleHz. */
  acc: number;
  /** Output packages sent, and the `timestamp` of the first and last. */
  sent: number;
  first: number;
  last: number;
}

/** RTDE on one TCP port. */
export class RtdeServer {
  readonly server: Server;
  readonly stats = { outputPackages: 0, inputPackages: 0, badPackages: 0 };
  #host: RtdeHost;
  #sessions = new Set<Session>();
  /** Input name → the connection that writes it. */
  #owner = new Map<string, Session>();

  constructor(host: RtdeHost) {
    this.#host = host;
    this.server = createServer((s) => this.#onConnection(s));
  }

  /** Controller cycles per second. */
  get cycleHz(): number {
    return this.#host.cycleHz;
  }

  /** Open connections. */
  get connections(): number {
    return this.#sessions.size;
  }

  /** Per connection: peer port, output frequency, packages sent and the controller time they span. */
  sessionStats(): { peerPort: number; frequency: number; running: boolean; packages: number; firstTimestamp: number; lastTimestamp: number; inputs: string[] }[] {
    return [...this.#sessions].map((s) => ({
      peerPort: s.sock.remotePort ?? 0,
      frequency: s.output?.frequency ?? 0,
      running: s.running,
      packages: s.sent,
      firstTimestamp: s.first,
      lastTimestamp: s.last,
      inputs: [...s.inputs.values()].flatMap((r) => r.names),
    }));
  }

  /** One controller cycle: sends every started session the package that is due in it. */
  cycle(): void {
    const hz = this.#host.cycleHz;
    for (const s of this.#sessions) {
      if (!s.running || !s.output) continue;
      s.acc += s.output.frequency;
      if (s.acc + 1e-9 < hz) continue;
      s.acc -= hz;
      const out = s.output;
      const data = encodeValues(
        out.types,
        out.names.map((n) => this.#host.output(n)),
      );
      this.stats.outputPackages++;
      const t = Number(this.#host.output("timestamp"));
      if (!s.sent) s.first = t;
      s.sent++;
      s.last = t;
      this.#send(s, RTDE.DATA_PACKAGE, [out.id, ...data]);
    }
  }

  /** A text message to every v2 connection (§RTDE_TEXT_MESSAGE; levels 0 EXCEPTION … 3 INFO). */
  broadcastText(message: string, source: string, level: number): void {
    for (const s of this.#sessions) if (s.version >= 2) this.#send(s, RTDE.TEXT_MESSAGE, encodeTextMessage(message, source, level));
  }

  /** Closes every connection. */
  closeAll(): void {
    for (const s of this.#sessions) s.sock.destroy();
  }

  #onConnection(sock: Socket): void {
    sock.setNoDelay(true);
    const s: Session = { sock, buf: new Uint8Array(0), version: 1, nextId: 1, output: null, inputs: new Map(), running: false, acc: 0, sent: 0, first: NaN, last: NaN };
    this.#sessions.add(s);
    sock.on("error", () => undefined);
    sock.on("close", () => {
      this.#sessions.delete(s);
      for (const [name, owner] of this.#owner) if (owner === s) this.#owner.delete(name);
    });
    sock.on("data", (d: Buffer) => {
      const b = new Uint8Array(s.buf.length + d.length);
      b.set(s.buf);
      b.set(d, s.buf.length);
      const { packages, rest, error } = splitPackages(b);
      s.buf = rest;
      for (const p of packages) this.#handle(s, p.type, p.payload);
      if (error) {
        this.stats.badPackages++;
        sock.destroy();
      }
    });
  }

  #send(s: Session, type: number, payload: Uint8Array | number[] = []): void {
    if (!s.sock.destroyed && s.sock.writable) s.sock.write(rtdePackage(type, Uint8Array.from(payload)));
  }

  #reject(s: Session, why: string): void {
    this.stats.badPackages++;
    if (s.version >= 2) this.#send(s, RTDE.TEXT_MESSAGE, encodeTextMessage(why, "RTDE", 1));
  }

  #handle(s: Session, type: number, p: Uint8Array): void {
    switch (type) {
      case RTDE.REQUEST_PROTOCOL_VERSION: {
        if (p.length < 2) return this.#reject(s, "RTDE_REQUEST_PROTOCOL_VERSION: 2 bytes expected");
        const v = (p[0] << 8) | p[1];
        const ok = v >= 1 && v <= this.#host.maxProtocolVersion;
        if (ok) s.version = v;
        return this.#send(s, type, [ok ? 1 : 0]);
      }
      case RTDE.GET_URCONTROL_VERSION: {
        const out = new Uint8Array(16);
        const dv = new DataView(out.buffer);
        this.#host.version.forEach((x, i) => dv.setUint32(4 * i, x));
        return this.#send(s, type, out);
      }
      case RTDE.CONTROL_PACKAGE_SETUP_OUTPUTS: {
        const v2 = s.version >= 2;
        if (v2 && p.length < 8) return this.#reject(s, "RTDE_CONTROL_PACKAGE_SETUP_OUTPUTS: frequency missing");
        const frequency = v2 ? new DataView(p.buffer, p.byteOffset).getFloat64(0) : 125;
        const names = fieldNames(p.subarray(v2 ? 8 : 0));
        const types: string[] = names.map((n) => RTDE_OUTPUTS[n] ?? "NOT_FOUND");
        // §SETUP_OUTPUTS: output frequency between 1 and the controller's cycle rate.
        const ok = !types.includes("NOT_FOUND") && frequency >= 1 && frequency <= this.#host.cycleHz && s.nextId <= 255;
        const id = ok ? s.nextId++ : 0;
        if (ok) s.output = { names, types: types as RtdeType[], id, frequency };
        if (!ok && !types.includes("NOT_FOUND")) this.#reject(s, `output frequency ${frequency} Hz outside 1..${this.#host.cycleHz}`);
        return this.#send(s, type, v2 ? [id, ...bytes(types.join(","))] : [...bytes(types.join(","))]);
      }
      case RTDE.CONTROL_PACKAGE_SETUP_INPUTS: {
        const names = fieldNames(p);
        const types: string[] = names.map((n) => {
          const t = RTDE_INPUTS[n];
          if (!t) return "NOT_FOUND";
          const owner = this.#owner.get(n);
          return this.#host.inUse.has(n) || (owner && owner !== s) ? "IN_USE" : t;
        });
        const ok = types.every((t) => t !== "IN_USE" && t !== "NOT_FOUND") && s.nextId <= 255;
        const id = ok ? s.nextId++ : 0;
        if (ok) {
          s.inputs.set(id, { names, types: types as RtdeType[] });
          for (const n of names) this.#owner.set(n, s);
        }
        return this.#send(s, type, [id, ...bytes(types.join(","))]);
      }
      case RTDE.CONTROL_PACKAGE_START: {
        const ok = s.output !== null;
        if (ok) {
          s.running = true;
          s.acc = this.#host.cycleHz - s.output!.frequency;
        }
        return this.#send(s, type, [ok ? 1 : 0]);
      }
      case RTDE.CONTROL_PACKAGE_PAUSE:
        s.running = false;
        return this.#send(s, type, [1]);
      case RTDE.DATA_PACKAGE: {
        const rec = s.inputs.get(p[0]);
        if (!rec) return this.#reject(s, `data package for unknown input recipe ${p[0]}`);
        let vals: RtdeValue[];
        try {
          vals = decodeValues(rec.types, p.subarray(1));
        } catch (e) {
          return this.#reject(s, (e as Error).message);
        }
        const obj: Record<string, RtdeValue> = {};
        rec.names.forEach((n, i) => (obj[n] = vals[i]));
        this.stats.inputPackages++;
        this.#host.input(obj);
        return;
      }
      case RTDE.TEXT_MESSAGE:
        return;
      default:
        return this.#reject(s, `unknown package type ${type}`);
    }
  }
}
