/**
 * A simulated UR e-Series controller on loopback TCP, for the UR driver's tests, `rlft ur-sim` and the vendors'
 * clients (ur_rtde's RTDEReceiveInterface / RTDEIOInterface / ScriptClient / DashboardClient in test/peers):
 *
 * - the RTDE server (rtdeServer.ts; fields of rtdeFields.ts), 30004;
 * - the primary (30001) and secondary (30002) client interfaces and the dashboard server (29999)
 *   (urTextServers.ts), with URScript programs as urScript.ts reads them;
 * - the controller cycle: 500 Hz for 5.x (e-Series), 125 Hz for 3.x (CB3) (RTDE guide §"Key features"; URScript
 *   manual: servoj's t is a multiple of the 0.002 s / 0.008 s cycle). Cycles are counted from the wall clock: a
 *   late timer runs every cycle that is due, so motion and output packages keep the controller's rate.
 *
 * Programs: rlft_servoj (hardware/ur/rlft_servoj.script) runs with its semantics — servoj towards
 * input_double_register_24..29 while input_int_register_24 is 1, hold on 0, stopj and end on 2, and its
 * rtde_set_watchdog; other programs run statement by statement (urScript.ts ProgramRun). A program starts only in
 * Remote Control (e-Series: programs from the network are refused in Local control), with the arm RUNNING and
 * safety NORMAL/REDUCED; a new program replaces the running one. Faults: protective stop and safeguard stop pause
 * the program, an emergency stop stops it and powers the arm off; each is reported on RTDE (safety_mode,
 * runtime_state, safety_status_bits), in ROBOT_MODE_DATA and as robot messages.
 */
import { checkListenAddress } from "../../runtime/listenAddress.ts";
import { RtdeServer } from "./rtdeServer.ts";
import { DashboardServer, PrimarySecondaryServers } from "./urTextServers.ts";
import { RTDE_OUTPUTS, zeroOf } from "./rtdeFields.ts";
import { ROBOT_MODE, RUNTIME_STATE, SAFETY_MODE, type RtdeValue } from "./rtdeProtocol.ts";
import { assemble, compile, ProgramRun, type UrProgram } from "./urScript.ts";
import type { RobotModeData } from "./primaryInterface.ts";
import type { Server } from "node:net";

/** Options of the simulator. */
export interface RtdeControllerSimOptions {
  /** Start pose (rad). */
  q0?: number[];
  /** Joint speed limit while servoing (rad/s). */
  maxSpeed?: number;
  /** Highest RTDE protocol version accepted (the guide: 1 or 2). */
  maxProtocolVersion?: number;
  /** URControl version reported (major 3: CB3 at 125 Hz; 5: e-Series at 500 Hz). */
  version?: [number, number, number, number];
  /** Remote Control (programs from the network run) or Local (they are refused). */
  controlMode?: "remote" | "local";
}

/** Where to listen (0: an ephemeral port). */
export interface RtdeControllerSimPorts {
  host?: string;
  rtdePort?: number;
  primaryPort?: number;
  secondaryPort?: number;
  dashboardPort?: number;
}

/** The rlft_servoj program's settings, read from its text. */
interface ServoLoop {
  dt: number;
  lookahead: number;
  gain: number;
}

/** The running program. */
export interface SimProgram {
  name: string;
  watchdogName: string;
  watchdogHz: number;
  /** rlft_servoj's servoj settings; null for other programs. */
  servo: ServoLoop | null;
}

const SAFETY_BITS: Record<number, number> = { 1: 1 << 0, 2: 1 << 1, 3: 1 << 2, 4: 1 << 3, 5: 1 << 4, 6: 1 << 5, 7: 1 << 6, 8: 1 << 8, 9: 1 << 9 };

/** The simulated controller. */
export class RtdeControllerSim {
  /** Joint positions, velocities and targets (rad, rad/s). */
  q: number[];
  qd = [0, 0, 0, 0, 0, 0];
  targetQ: number[];
  robotMode = 7; // RUNNING
  safetyMode = 1; // NORMAL
  runtimeState = 1; // STOPPED
  controlMode: "remote" | "local";
  /** actual_digital_output_bits (standard 0–7, configurable 8–15, tool 16–17). */
  digitalOutputs = 0;
  /** Speed slider (RTDE input speed_slider_fraction with mask 1). */
  speedSlider = 1;
  /** Input names a fieldbus holds (RTDE setup answers IN_USE). */
  readonly inUse = new Set<string>();
  /** Input values written over RTDE, by field name. */
  readonly registers = new Map<string, RtdeValue>();
  /** Output registers written by programs. */
  readonly outputs = new Map<string, RtdeValue>();
  /** The running or paused program (null: none). */
  program: SimProgram | null = null;
  readonly stats = { inputPackages: 0, scripts: 0, outputPackages: 0, watchdogStops: 0, cycles: 0, skippedCycles: 0, refusedPrograms: 0 };
  /** Program texts received (whole programs). */
  readonly scripts: string[] = [];
  /** Robot messages sent to primary clients, newest last (for tests and the CLI). */
  readonly messages: string[] = [];
  #opts: Required<RtdeControllerSimOptions>;
  #rtde: RtdeServer;
  #text: PrimarySecondaryServers;
  #dashboard: DashboardServer;
  #run: ProgramRun | null = null;
  #lastUpdate = new Map<string, number>();
  #t0 = performance.now();
  #cycle = 0;
  #loop: ReturnType<typeof setInterval> | null = null;
  #lastProgramName = "<unnamed>";

  private constructor(opts: RtdeControllerSimOptions) {
    this.#opts = { q0: [0, -1.57, 1.57, -1.57, -1.57, 0], maxSpeed: 3.0, maxProtocolVersion: 2, version: [5, 15, 0, 0], controlMode: "remote", ...opts };
    this.q = [...this.#opts.q0];
    this.targetQ = [...this.q];
    this.controlMode = this.#opts.controlMode;
    this.#rtde = new RtdeServer({
      maxProtocolVersion: this.#opts.maxProtocolVersion,
      version: this.#opts.version,
      cycleHz: this.#opts.version[0] >= 5 ? 500 : 125,
      inUse: this.inUse,
      output: (n) => this.#output(n),
      input: (v) => this.#input(v),
    });
    const textHost = {
      version: this.#opts.version,
      timestampUs: () => BigInt(Math.round(this.timestamp * 1e6)),
      robotModeData: () => this.#robotModeData(),
      script: (t: string, via: string) => this.#receive(t, via),
      dashboard: (c: string) => this.#dashboardCommand(c),
    };
    this.#text = new PrimarySecondaryServers(textHost);
    this.#dashboard = new DashboardServer(textHost);
  }

  /** Starts every server on `host` (127.0.0.1; ephemeral ports unless given) and the controller cycle. */
  static async start(opts: RtdeControllerSimOptions & RtdeControllerSimPorts = {}): Promise<RtdeControllerSim> {
    // Loopback only: a simulated controller takes URScript from anyone who reaches it.
    checkListenAddress({ setting: "rlft ur-sim", address: opts.host ?? "127.0.0.1", authenticated: false, risk: "send URScript to the simulated controller" });
    const sim = new RtdeControllerSim(opts);
    const host = opts.host ?? "127.0.0.1";
    const servers: [Server, number, string][] = [
      [sim.#rtde.server, opts.rtdePort ?? 0, "RTDE"],
      [sim.#text.primary, opts.primaryPort ?? 0, "primary interface"],
      [sim.#text.secondary, opts.secondaryPort ?? 0, "secondary interface"],
      [sim.#dashboard.server, opts.dashboardPort ?? 0, "dashboard server"],
    ];
    try {
      await Promise.all(
        servers.map(
          ([srv, port, what]) =>
            new Promise<void>((resolve, reject) => {
              srv.once("error", (e: Error & { code?: string }) => reject(new Error(`UR controller simulator: cannot listen for the ${what} on ${host}:${port}: ${e.code ?? e.message} — pick another port`)));
              srv.listen(port, host, () => resolve());
            }),
        ),
      );
    } catch (e) {
      await sim.stop();
      throw e;
    }
    sim.#t0 = performance.now();
    sim.#loop = setInterval(() => sim.#catchUp(), 1);
    return sim;
  }

  /** Controller cycles per second: 500 on e-Series (5.x), 125 on CB3. */
  get cycleHz(): number {
    return this.#rtde.cycleHz;
  }

  /** Controller time (s): cycles run × cycle period (RTDE `timestamp`). */
  get timestamp(): number {
    return this.#cycle / this.cycleHz;
  }

  get rtdePort(): number {
    return (this.#rtde.server.address() as { port: number }).port;
  }
  get primaryPort(): number {
    return (this.#text.primary.address() as { port: number }).port;
  }
  get secondaryPort(): number {
    return (this.#text.secondary.address() as { port: number }).port;
  }
  get dashboardPort(): number {
    return (this.#dashboard.server.address() as { port: number }).port;
  }

  /** One line of state, for the CLI. */
  describe(): string {
    return `${ROBOT_MODE[this.robotMode]} ${SAFETY_MODE[this.safetyMode]} ${this.controlMode} program ${RUNTIME_STATE[this.runtimeState]}${this.program ? ` (${this.program.name})` : ""}`;
  }

  /** State and counters as plain data (`rlft ur-sim` prints it for the `stats` command). */
  snapshot(): Record<string, unknown> {
    return {
      timestamp: this.timestamp,
      cycleHz: this.cycleHz,
      robotMode: ROBOT_MODE[this.robotMode],
      safetyMode: SAFETY_MODE[this.safetyMode],
      runtimeState: RUNTIME_STATE[this.runtimeState],
      controlMode: this.controlMode,
      program: this.program?.name ?? null,
      stats: this.stats,
      rtde: this.#rtde.sessionStats(),
      scripts: this.scripts.slice(-5),
      messages: this.messages.slice(-10),
    };
  }

  /** A collision or limit violation: the arm stops, the program pauses (safety_mode PROTECTIVE_STOP). */
  protectiveStop(reason = "C153A0 Protective stop: collision detected"): void {
    this.#safetyStop(3, reason);
  }

  /** A safeguard input opened (door, light curtain): the arm stops, the program pauses. */
  safeguardStop(reason = "C156A0 Safeguard stop: safeguard stop input opened"): void {
    this.#safetyStop(5, reason);
  }

  /** The robot's emergency stop button: program stopped, arm powered off (ROBOT_EMERGENCY_STOP). */
  emergencyStop(reason = "C162A0 Robot emergency stop: emergency stop button pressed"): void {
    this.#safetyStop(7, reason);
  }

  /** Unlock on the pendant / dashboard: back to NORMAL (the program stays paused, the arm stays powered as it is). */
  clearProtectiveStop(): void {
    if (this.safetyMode === 1) return;
    this.safetyMode = 1;
    this.#message({ kind: "safety_mode", title: "", text: "", value: 1 });
    this.#text.pushState();
  }

  /** The arm's power goes off (pendant, dashboard): a running program stops. */
  powerOff(): void {
    if (this.program) this.#endProgram("power off");
    this.robotMode = 3;
    this.#text.pushState();
  }

  /** Local / Remote Control (pendant, top right). */
  setControlMode(mode: "remote" | "local"): void {
    this.controlMode = mode;
    this.#text.pushState();
  }

  /** Closes every connection and server. */
  async stop(): Promise<void> {
    if (this.#loop) clearInterval(this.#loop);
    this.#rtde.closeAll();
    this.#text.closeAll();
    this.#dashboard.closeAll();
    await Promise.all(
      [this.#rtde.server, this.#text.primary, this.#text.secondary, this.#dashboard.server].map((srv) => new Promise<void>((r) => (srv.listening ? srv.close(() => r()) : r()))),
    );
  }

  #safetyStop(mode: number, reason: string): void {
    this.safetyMode = mode;
    this.qd = [0, 0, 0, 0, 0, 0];
    this.targetQ = [...this.q];
    this.#message({ kind: "safety_mode", title: "", text: "", value: mode });
    this.#message({ kind: "error_code", title: "", text: reason, value: 2 });
    this.#rtde.broadcastText(reason, "Controller", 1);
    if (mode === 7 || mode === 6) {
      this.robotMode = 3; // POWER_OFF: an emergency stop cuts motor power
      if (this.program) this.#endProgram(`stopped by the emergency stop`);
    } else if (this.program && this.runtimeState === 2) {
      this.runtimeState = 4; // PAUSED
      this.#message({ kind: "key", title: "PROGRAM_XXX_PAUSED", text: this.program.name, value: 0 });
    }
    this.#text.pushState();
  }

  #message(m: Parameters<PrimarySecondaryServers["message"]>[0]): void {
    this.messages.push(m.title ? `${m.title}: ${m.text}` : m.text || `${m.kind} ${m.value}`);
    if (this.messages.length > 200) this.messages.shift();
    this.#text.message(m);
  }

  #robotModeData(): RobotModeData {
    return {
      timestampUs: BigInt(Math.round(this.timestamp * 1e6)),
      realRobotConnected: true,
      realRobotEnabled: true,
      powerOn: this.robotMode >= 4,
      emergencyStopped: this.safetyMode === 6 || this.safetyMode === 7,
      protectiveStopped: this.safetyMode === 3,
      programRunning: this.runtimeState === 2,
      programPaused: this.runtimeState === 4,
      robotMode: this.robotMode,
      controlMode: 0,
      targetSpeedFraction: this.speedSlider,
      speedScaling: this.speedSlider,
      targetSpeedFractionLimit: 1,
    };
  }

  /** Runs every controller cycle that is due by the wall clock (at most 1 s of backlog; older cycles are skipped). */
  #catchUp(): void {
    const due = Math.floor(((performance.now() - this.#t0) / 1000) * this.cycleHz);
    // Late cycles (run or skipped) are this process's stall, not the host's silence: a real controller would have sent
    // those packages on time and had the host's answers. The watchdog does not count the backlog.
    const late = (due - this.#cycle - 1) / this.cycleHz;
    if (late > 0) for (const [k, t] of this.#lastUpdate) this.#lastUpdate.set(k, t + late);
    if (due - this.#cycle > this.cycleHz) {
      this.stats.skippedCycles += due - this.cycleHz - this.#cycle;
      this.#cycle = due - this.cycleHz;
    }
    while (this.#cycle < due) {
      this.#cycle++;
      this.stats.cycles++;
      this.#step(1 / this.cycleHz);
      this.#rtde.cycle();
    }
    this.stats.outputPackages = this.#rtde.stats.outputPackages;
    this.stats.inputPackages = this.#rtde.stats.inputPackages;
  }

  #output(n: string): RtdeValue {
    const stopped = this.safetyMode !== 1 && this.safetyMode !== 2;
    switch (n) {
      case "timestamp":
        return this.timestamp;
      case "actual_q":
        return this.q;
      case "target_q":
        return this.targetQ;
      case "actual_qd":
      case "target_qd":
        return this.qd;
      case "actual_current":
      case "target_current":
      case "target_moment":
        return this.qd.map((v) => 0.1 * v);
      case "joint_temperatures":
        return [31, 32, 31.5, 30, 29.5, 29];
      case "joint_mode":
        return Array(6).fill(this.robotMode === 7 ? 253 : this.robotMode === 3 ? 239 : 255);
      case "robot_mode":
        return this.robotMode;
      case "safety_mode":
      case "safety_status":
        return this.safetyMode;
      case "runtime_state":
        return this.runtimeState;
      case "robot_status_bits":
        return (this.robotMode >= 4 ? 1 : 0) | (this.runtimeState === 2 ? 2 : 0);
      case "safety_status_bits":
        return (SAFETY_BITS[this.safetyMode] ?? 0) | (stopped ? 1 << 10 : 0);
      case "speed_scaling":
      case "target_speed_fraction":
        return this.speedSlider;
      case "actual_main_voltage":
      case "actual_robot_voltage":
        return this.robotMode >= 4 ? 48 : 0;
      case "actual_joint_voltage":
        return Array(6).fill(this.robotMode >= 4 ? 47.5 : 0);
      case "actual_digital_output_bits":
        return BigInt(this.digitalOutputs);
      case "actual_execution_time":
        return 0.3;
      case "time_scale_source":
        return this.runtimeState === 2 ? 1 : 0;
      default: {
        const v = this.outputs.get(n) ?? this.registers.get(n);
        return v ?? zeroOf(RTDE_OUTPUTS[n]);
      }
    }
  }

  #input(v: Record<string, RtdeValue>): void {
    const now = this.timestamp;
    for (const [n, val] of Object.entries(v)) {
      this.registers.set(n, val);
      this.#lastUpdate.set(n, now);
    }
    // §"Robot controller inputs": the slider changes only with speed_slider_mask = 1.
    if (Number(v.speed_slider_mask ?? 0) === 1 && v.speed_slider_fraction !== undefined) this.speedSlider = Math.min(1, Math.max(0, Number(v.speed_slider_fraction)));
    // Digital outputs: each *_mask selects the bits its value sets (standard 0–7, configurable 8–15, tool 16–17).
    for (const [kind, shift] of [["standard", 0], ["configurable", 8], ["tool", 16]] as const) {
      const mask = v[`${kind}_digital_output_mask`];
      if (mask === undefined) continue;
      const m = Number(mask) << shift;
      this.digitalOutputs = (this.digitalOutputs & ~m) | ((Number(v[`${kind}_digital_output`] ?? 0) << shift) & m);
    }
  }

  /** Text from the primary/secondary interface: every complete program is compiled and started at once. */
  #pending = "";
  #receive(chunk: string, via: string): void {
    const { programs, rest } = assemble(this.#pending + chunk);
    this.#pending = rest;
    for (const p of programs) this.#submit(p, via);
  }

  #submit(p: UrProgram, via: string): void {
    this.scripts.push(p.lines.join("\n"));
    this.stats.scripts++;
    // URScript manual / client interfaces: in Local control the controller ignores programs from the network.
    if (this.controlMode === "local") return this.#refuse(p, `${p.name} not started: the robot is in Local control — programs sent to the ${via} run only in Remote Control (pendant, top right)`);
    const compiled = compile(p);
    if ("error" in compiled) {
      this.stats.refusedPrograms++;
      this.#message({ kind: "runtime_exception", title: "", text: compiled.error, value: compiled.line });
      this.#rtde.broadcastText(`Compile error: ${compiled.error}`, "Program", 0);
      // The failed program still replaced the running one.
      if (p.kind !== "sec" && this.program) this.#endProgram(`replaced by ${p.name}, which did not compile`);
      return;
    }
    if (p.kind === "sec") return; // secondary programs run beside the primary one and may not move the arm
    if (this.robotMode !== 7) return this.#refuse(p, `${p.name} not started: the robot is ${ROBOT_MODE[this.robotMode] ?? this.robotMode}, not RUNNING`);
    if (this.safetyMode !== 1 && this.safetyMode !== 2) return this.#refuse(p, `${p.name} not started: safety mode ${SAFETY_MODE[this.safetyMode] ?? this.safetyMode}`);
    if (this.program) this.#endProgram(`replaced by ${p.name}`);
    const src = p.lines.join("\n");
    const wd = /rtde_set_watchdog\("(\w+)",\s*([\d.]+),\s*"(\w+)"\)/.exec(src);
    const sj = /servoj\(q,\s*0,\s*0,\s*([\d.]+),\s*([\d.]+),\s*([\d.]+)\)/.exec(src);
    const servo = sj && /read_input_integer_register\(24\)/.test(src) ? { dt: Number(sj[1]), lookahead: Number(sj[2]), gain: Number(sj[3]) } : null;
    this.program = { name: p.name, watchdogName: wd?.[1] ?? "", watchdogHz: wd ? Number(wd[2]) : 0, servo };
    this.#lastProgramName = p.name;
    this.#run = servo ? null : new ProgramRun(compiled.body);
    if (this.program.watchdogName) this.#lastUpdate.set(this.program.watchdogName, this.timestamp);
    this.runtimeState = 2; // PLAYING
    this.#message({ kind: "key", title: "PROGRAM_XXX_STARTED", text: p.name, value: 0 });
    this.#text.pushState();
  }

  #refuse(p: UrProgram, why: string): void {
    this.stats.refusedPrograms++;
    this.#message({ kind: "error_code", title: "", text: why, value: 2 });
    this.#rtde.broadcastText(why, "Controller", 1);
  }

  #endProgram(why: string): void {
    const name = this.program?.name ?? this.#lastProgramName;
    this.program = null;
    this.#run = null;
    this.runtimeState = 1;
    this.qd = [0, 0, 0, 0, 0, 0];
    this.#message({ kind: "key", title: "PROGRAM_XXX_STOPPED", text: `${name}: ${why}`, value: 0 });
    this.#text.pushState();
  }

  /** Moves one cycle towards `q` at `v` (rad/s, scaled by the speed slider); true once there. */
  #moveToward(q: number[], v: number, dt: number): boolean {
    const step = Math.min(v, this.#opts.maxSpeed) * this.speedSlider * dt;
    let there = true;
    this.targetQ = [...q];
    this.q = this.q.map((x, i) => {
      const d = q[i] - x;
      const moved = Math.abs(d) <= step ? d : Math.sign(d) * step;
      if (Math.abs(d) > step) there = false;
      this.qd[i] = moved / dt;
      return x + moved;
    });
    return there;
  }

  /** One controller cycle of the running program. */
  #step(dt: number): void {
    const p = this.program;
    if (!p || this.runtimeState !== 2) {
      this.qd = [0, 0, 0, 0, 0, 0];
      return;
    }
    if (p.watchdogName && p.watchdogHz > 0) {
      const last = this.#lastUpdate.get(p.watchdogName) ?? 0;
      if (this.timestamp - last > 1 / p.watchdogHz) {
        this.stats.watchdogStops++;
        const why = `RTDE watchdog: ${p.watchdogName} not updated at ${p.watchdogHz} Hz; program stopped`;
        this.#rtde.broadcastText(why, "RTDE", 1);
        this.#message({ kind: "error_code", title: "", text: why, value: 2 });
        return this.#endProgram(why);
      }
    }
    if (!p.servo) {
      this.qd = [0, 0, 0, 0, 0, 0];
      const run = this.#run!;
      run.step(dt, {
        text: (m) => this.#message({ kind: "text", title: "", text: m, value: 0 }),
        moveToward: (q, v) => this.#moveToward(q, v, dt),
        setOutput: (n, v) => this.outputs.set(n, v),
      });
      if (run.done) this.#endProgram("finished");
      return;
    }
    const mode = Number(this.registers.get("input_int_register_24") ?? 0);
    if (mode === 2) return this.#endProgram("stopj (mode 2)");
    if (mode !== 1) {
      this.qd = [0, 0, 0, 0, 0, 0];
      return;
    }
    const target = [24, 25, 26, 27, 28, 29].map((i) => Number(this.registers.get(`input_double_register_${i}`) ?? 0));
    this.#moveToward(target, this.#opts.maxSpeed, dt);
  }

  #dashboardCommand(cmd: string): string {
    const c = cmd.toLowerCase();
    const programName = `${this.program?.name ?? this.#lastProgramName}.urp`;
    switch (c) {
      case "robotmode":
        return `Robotmode: ${ROBOT_MODE[this.robotMode]}`;
      case "safetymode":
        return `Safetymode: ${SAFETY_MODE[this.safetyMode]}`;
      case "safetystatus":
        return `Safetystatus: ${SAFETY_MODE[this.safetyMode]}`;
      case "programstate":
        return `${RUNTIME_STATE[this.runtimeState]} ${programName}`;
      case "running":
        return `Program running: ${this.runtimeState === 2}`;
      case "is in remote control":
        return String(this.controlMode === "remote");
      case "polyscopeversion":
        return `URSoftware ${this.#opts.version.join(".")} (rlft ur-sim)`;
      case "power on":
        if (this.safetyMode !== 1 && this.safetyMode !== 2) return "Failed to execute: power on";
        if (this.robotMode < 5) this.robotMode = 5; // IDLE: powered, brakes engaged
        this.#text.pushState();
        return "Powering on";
      case "power off":
        this.powerOff();
        return "Powering off";
      case "brake release":
        if (this.robotMode === 5) this.robotMode = 7;
        this.#text.pushState();
        return "Brake releasing";
      case "unlock protective stop":
        if (this.safetyMode !== 3) return "Cannot unlock protective stop until 5s after occurrence. Always inspect cause of protective stop before unlocking";
        this.clearProtectiveStop();
        return "Protective stop releasing";
      case "close safety popup":
        return "closing safety popup";
      case "play":
        if (!this.program || this.runtimeState !== 4 || (this.safetyMode !== 1 && this.safetyMode !== 2)) return "Failed to execute: play";
        this.runtimeState = 2;
        this.#message({ kind: "key", title: "PROGRAM_XXX_STARTED", text: this.program.name, value: 0 });
        if (this.program.watchdogName) this.#lastUpdate.set(this.program.watchdogName, this.timestamp);
        return "Starting program";
      case "pause":
        if (this.runtimeState !== 2) return "Failed to execute: pause";
        this.runtimeState = 4;
        return "Pausing program";
      case "stop":
        if (this.program) this.#endProgram("stopped from the dashboard");
        return "Stopped";
      default:
        return `could not understand: '${cmd}'`;
    }
  }
}
