/**
 * A UR e-Series controller as far as RTDE and rlft_servoj need it, over loopback TCP: the RTDE server of the
 * "Real-Time Data Exchange (RTDE) Guide" (§Protocol: version negotiation, controller version, output recipe
 * with frequency, input recipes with NOT_FOUND / IN_USE, start / pause, data packages both ways, text messages)
 * and a secondary interface that accepts the rlft_servoj script and runs its semantics: servoj towards the
 * input-register targets at a bounded joint speed, rtde_set_watchdog, stopj. Faults can be injected:
 * protective stop, inputs owned by a fieldbus, an old protocol version, a powered-off arm.
 */
import { createServer, type Server, type Socket } from "node:net";
import { checkListenAddress } from "../../runtime/listenAddress.ts";
import {
  RTDE,
  RTDE_FIELDS,
  bytes,
  decodeValues,
  encodeTextMessage,
  encodeValues,
  rtdePackage,
  splitPackages,
  text,
  type RtdeType,
  type RtdeValue,
} from "./rtdeProtocol.ts";

/** Options of the simulator. */
export interface RtdeControllerSimOptions {
  /** Start pose (rad). */
  q0?: number[];
  /** Joint speed limit while servoing (rad/s). */
  maxSpeed?: number;
  /** Highest protocol version accepted (the guide: 1 or 2). */
  maxProtocolVersion?: number;
  /** URControl version reported. */
  version?: [number, number, number, number];
}

interface Session {
  sock: Socket;
  buf: Uint8Array;
  version: number;
  output: { names: string[]; types: RtdeType[]; id: number; frequency: number } | null;
  inputs: Map<number, { names: string[]; types: RtdeType[] }>;
  timer: ReturnType<typeof setInterval> | null;
}

/** The simulated controller. */
export class RtdeControllerSim {
  /** Joint positions and velocities (rad, rad/s). */
  q: number[];
  qd = [0, 0, 0, 0, 0, 0];
  robotMode = 7; // RUNNING
  safetyMode = 1; // NORMAL
  runtimeState = 1; // STOPPED
  /** Input names another client or a fieldbus already owns (setup answers IN_USE). */
  readonly inUse = new Set<string>();
  /** Input register values. */
  readonly registers = new Map<string, RtdeValue>();
  /** The running script's settings (null: no program). */
  program: { watchdogName: string; watchdogHz: number; dt: number; lookahead: number; gain: number } | null = null;
  /** Input packages received, scripts received, text messages sent. */
  readonly stats = { inputPackages: 0, scripts: 0, outputPackages: 0, watchdogStops: 0 };
  readonly scripts: string[] = [];
  #opts: Required<RtdeControllerSimOptions>;
  #rtde: Server;
  #secondary: Server;
  #sessions = new Set<Session>();
  #lastUpdate = new Map<string, number>();
  #recipeIds = 0;
  #t0 = performance.now();
  /** The controller's own cycle (500 Hz on e-Series): the program runs whether or not a client is connected. */
  #loop: ReturnType<typeof setInterval> | null = null;
  #lastStep = 0;

  private constructor(opts: RtdeControllerSimOptions) {
    this.#opts = { q0: [0, -1.57, 1.57, -1.57, -1.57, 0], maxSpeed: 3.0, maxProtocolVersion: 2, version: [5, 15, 0, 0], ...opts };
    this.q = [...this.#opts.q0];
    this.#rtde = createServer((s) => this.#onRtde(s));
    this.#secondary = createServer((s) => this.#onSecondary(s));
  }

  /** Starts both servers on 127.0.0.1 (ephemeral ports unless given). */
  static async start(opts: RtdeControllerSimOptions & { rtdePort?: number; secondaryPort?: number } = {}): Promise<RtdeControllerSim> {
    // Loopback only: a simulated controller takes URScript from anyone who reaches it.
    checkListenAddress({ setting: "rlft ur-sim", address: "127.0.0.1", authenticated: false, risk: "send URScript to the simulated controller" });
    const sim = new RtdeControllerSim(opts);
    const ports = [opts.rtdePort ?? 0, opts.secondaryPort ?? 0];
    await Promise.all(
      [sim.#rtde, sim.#secondary].map(
        (srv, i) =>
          new Promise<void>((resolve, reject) => {
            srv.once("error", (e: Error & { code?: string }) => reject(new Error(`RTDE simulator: cannot listen on 127.0.0.1:${ports[i]}: ${e.code ?? e.message} — pick another port`)));
            srv.listen(ports[i], "127.0.0.1", () => resolve());
          }),
      ),
    );
    sim.#lastStep = sim.#now();
    sim.#loop = setInterval(() => {
      const now = sim.#now();
      sim.#step(now - sim.#lastStep);
      sim.#lastStep = now;
    }, 2);
    return sim;
  }

  /** The RTDE port (30004 on a real controller). */
  get rtdePort(): number {
    return (this.#rtde.address() as { port: number }).port;
  }

  /** The secondary interface port (30002 on a real controller). */
  get secondaryPort(): number {
    return (this.#secondary.address() as { port: number }).port;
  }

  /** A collision: the controller stops the arm and pauses the program (safety_mode PROTECTIVE_STOP). */
  protectiveStop(): void {
    this.safetyMode = 3;
    this.qd = [0, 0, 0, 0, 0, 0];
    if (this.program) this.runtimeState = 4; // PAUSED
    this.#broadcastText("Protective stop: C153A0 collision detected", "Controller", 1);
  }

  /** Unlock on the pendant: back to NORMAL (the program stays paused). */
  clearProtectiveStop(): void {
    this.safetyMode = 1;
  }

  /** Closes every connection and both servers. */
  async stop(): Promise<void> {
    if (this.#loop) clearInterval(this.#loop);
    for (const s of this.#sessions) {
      if (s.timer) clearInterval(s.timer);
      s.sock.destroy();
    }
    await Promise.all([this.#rtde, this.#secondary].map((srv) => new Promise<void>((r) => srv.close(() => r()))));
  }

  #now(): number {
    return (performance.now() - this.#t0) / 1000;
  }

  #onSecondary(sock: Socket): void {
    let script = "";
    let done = false;
    const run = () => {
      if (done) return;
      done = true;
      this.#runScript(script);
    };
    sock.on("data", (d) => (script += d.toString()));
    sock.on("error", () => undefined);
    sock.on("end", run);
    sock.on("close", run);
  }

  /** Starts a script sent to the secondary interface, if it is rlft_servoj with every placeholder filled. */
  #runScript(script: string): void {
    if (!script) return;
    this.scripts.push(script);
    this.stats.scripts++;
    if (/\{\{\w+\}\}/.test(script)) {
      this.#broadcastText("Compile error: unfilled placeholder in script", "Program", 0);
      return;
    }
    const wd = /rtde_set_watchdog\("(\w+)",\s*([\d.]+),\s*"(\w+)"\)/.exec(script);
    const sj = /servoj\(q,\s*0,\s*0,\s*([\d.]+),\s*([\d.]+),\s*([\d.]+)\)/.exec(script);
    if (!/def rlft_servoj\(\):/.test(script) || !sj) {
      this.#broadcastText("Program is not rlft_servoj", "Program", 1);
      return;
    }
    if (this.robotMode !== 7 || (this.safetyMode !== 1 && this.safetyMode !== 2)) {
      this.#broadcastText("Cannot start program: robot not ready", "Controller", 1);
      return;
    }
    this.program = { watchdogName: wd?.[1] ?? "", watchdogHz: wd ? Number(wd[2]) : 0, dt: Number(sj[1]), lookahead: Number(sj[2]), gain: Number(sj[3]) };
    if (this.program.watchdogName) this.#lastUpdate.set(this.program.watchdogName, this.#now());
    this.runtimeState = 2; // PLAYING
    this.#broadcastText("rlft_servoj: started", "Program", 3);
  }

  /** One controller cycle of the script: watchdog, then servoj / stopj / hold. */
  #step(dt: number): void {
    if (dt <= 0) return;
    const p = this.program;
    if (!p || this.runtimeState !== 2) {
      this.qd = [0, 0, 0, 0, 0, 0];
      return;
    }
    if (p.watchdogName && p.watchdogHz > 0) {
      const last = this.#lastUpdate.get(p.watchdogName) ?? 0;
      if (this.#now() - last > 1 / p.watchdogHz) {
        this.stats.watchdogStops++;
        this.program = null;
        this.runtimeState = 1;
        this.qd = [0, 0, 0, 0, 0, 0];
        this.#broadcastText(`RTDE watchdog: ${p.watchdogName} not updated at ${p.watchdogHz} Hz; program stopped`, "RTDE", 1);
        return;
      }
    }
    const mode = Number(this.registers.get("input_int_register_24") ?? 0);
    if (mode === 2) {
      this.program = null;
      this.runtimeState = 1;
      this.qd = [0, 0, 0, 0, 0, 0];
      return;
    }
    if (mode !== 1) {
      this.qd = [0, 0, 0, 0, 0, 0];
      return;
    }
    const target = [24, 25, 26, 27, 28, 29].map((i) => Number(this.registers.get(`input_double_register_${i}`) ?? 0));
    const step = this.#opts.maxSpeed * dt;
    this.q = this.q.map((q, i) => {
      const d = target[i] - q;
      const moved = Math.abs(d) <= step ? d : Math.sign(d) * step;
      this.qd[i] = moved / dt;
      return q + moved;
    });
  }

  #onRtde(sock: Socket): void {
    sock.setNoDelay(true);
    const s: Session = { sock, buf: new Uint8Array(0), version: 1, output: null, inputs: new Map(), timer: null };
    this.#sessions.add(s);
    sock.on("error", () => undefined);
    sock.on("close", () => {
      if (s.timer) clearInterval(s.timer);
      this.#sessions.delete(s);
    });
    sock.on("data", (d: Buffer) => {
      const b = new Uint8Array(s.buf.length + d.length);
      b.set(s.buf);
      b.set(d, s.buf.length);
      const { packages, rest, error } = splitPackages(b);
      s.buf = rest;
      if (error) sock.destroy();
      for (const p of packages) this.#handle(s, p.type, p.payload);
    });
  }

  #send(s: Session, type: number, payload: Uint8Array | number[] = []): void {
    if (!s.sock.destroyed) s.sock.write(rtdePackage(type, Uint8Array.from(payload)));
  }

  #broadcastText(message: string, source: string, level: number): void {
    for (const s of this.#sessions) if (s.version >= 2) this.#send(s, RTDE.TEXT_MESSAGE, encodeTextMessage(message, source, level));
  }

  #handle(s: Session, type: number, p: Uint8Array): void {
    switch (type) {
      case RTDE.REQUEST_PROTOCOL_VERSION: {
        const v = (p[0] << 8) | p[1];
        const ok = v >= 1 && v <= this.#opts.maxProtocolVersion;
        if (ok) s.version = v;
        this.#send(s, type, [ok ? 1 : 0]);
        return;
      }
      case RTDE.GET_URCONTROL_VERSION: {
        const out = new Uint8Array(16);
        const dv = new DataView(out.buffer);
        this.#opts.version.forEach((x, i) => dv.setUint32(4 * i, x));
        this.#send(s, type, out);
        return;
      }
      case RTDE.CONTROL_PACKAGE_SETUP_OUTPUTS: {
        // v2: double frequency, then the names (§RTDE_CONTROL_PACKAGE_SETUP_OUTPUTS).
        const frequency = s.version >= 2 ? new DataView(p.buffer, p.byteOffset).getFloat64(0) : 125;
        const names = text(p.subarray(s.version >= 2 ? 8 : 0)).split(",");
        const types = names.map((n) => (n.startsWith("input_") ? "NOT_FOUND" : (RTDE_FIELDS[n] ?? "NOT_FOUND")));
        const ok = !types.includes("NOT_FOUND") && frequency >= 1 && frequency <= 500;
        const id = ok ? ++this.#recipeIds : 0;
        if (ok) s.output = { names, types: types as RtdeType[], id, frequency };
        this.#send(s, type, [id, ...bytes(types.join(","))]);
        return;
      }
      case RTDE.CONTROL_PACKAGE_SETUP_INPUTS: {
        const names = text(p).split(",");
        const types = names.map((n) => (this.inUse.has(n) ? "IN_USE" : n.startsWith("input_") && RTDE_FIELDS[n] ? RTDE_FIELDS[n] : "NOT_FOUND"));
        const ok = types.every((t) => t !== "IN_USE" && t !== "NOT_FOUND");
        const id = ok ? ++this.#recipeIds : 0;
        if (ok) s.inputs.set(id, { names, types: types as RtdeType[] });
        this.#send(s, type, [id, ...bytes(types.join(","))]);
        return;
      }
      case RTDE.CONTROL_PACKAGE_START: {
        if (!s.output) return this.#send(s, type, [0]);
        const out = s.output;
        this.#send(s, type, [1]);
        if (s.timer) clearInterval(s.timer);
        const period = 1 / out.frequency;
        s.timer = setInterval(() => this.#tick(s), 1000 * period);
        return;
      }
      case RTDE.CONTROL_PACKAGE_PAUSE: {
        if (s.timer) clearInterval(s.timer);
        s.timer = null;
        this.#send(s, type, [1]);
        return;
      }
      case RTDE.DATA_PACKAGE: {
        const rec = s.inputs.get(p[0]);
        if (!rec) return;
        const vals = decodeValues(rec.types, p.subarray(1));
        const now = this.#now();
        rec.names.forEach((n, i) => {
          this.registers.set(n, vals[i]);
          this.#lastUpdate.set(n, now);
        });
        this.stats.inputPackages++;
        return;
      }
      default:
        return;
    }
  }

  #tick(s: Session): void {
    const out = s.output!;
    const fields: Record<string, RtdeValue> = {
      timestamp: this.#now(),
      actual_q: this.q,
      target_q: this.q,
      actual_qd: this.qd,
      actual_current: this.qd.map((v) => 0.1 * v),
      actual_TCP_pose: [0, 0, 0, 0, 0, 0],
      robot_mode: this.robotMode,
      joint_mode: [253, 253, 253, 253, 253, 253],
      safety_mode: this.safetyMode,
      safety_status: this.safetyMode,
      runtime_state: this.runtimeState,
      robot_status_bits: 0b1111,
      safety_status_bits: this.safetyMode === 3 ? 0b100 : 0b1,
      speed_scaling: 1,
      output_int_register_24: 0,
    };
    const data = encodeValues(out.types, out.names.map((n) => fields[n] ?? 0));
    this.stats.outputPackages++;
    this.#send(s, RTDE.DATA_PACKAGE, [out.id, ...data]);
  }
}
