/**
 * Universal Robots e-Series as an ArmDriver, over RTDE (port 30004) plus the rlft_servoj URScript program.
 *
 * configure: connect, negotiate protocol v2, read the controller version, set up the output recipe at
 *   125 or 500 Hz and the input recipe (joint targets in input_double_register_24..29, mode and a cycle
 *   counter in input_int_register_24/25), start synchronisation. INACTIVE: state streams in, mode 0.
 * activate: the arm must be powered, brakes released (robot_mode RUNNING) and not stopped (safety_mode
 *   NORMAL/REDUCED); targets := actual_q; send the script to the primary interface (30001) and keep reading it
 *   (PrimaryClient): the controller answers there when it refuses the program (Local control, compile error,
 *   robot not ready) or stops it; wait until the program plays; mode 1. Every output package is answered with
 *   one input package (targets, mode, counter), so the script's rtde_set_watchdog stops the arm when rlft or the
 *   link dies.
 * A protective / safeguard / emergency stop, or the program stopping or pausing while active: mode 0, a latched
 *   `fault` with the controller's reason (the arm driver node aborts the episode), commands refused until
 *   re-activated.
 * deactivate: mode 0 (the program idles, the arm holds). close: mode 2 (stopj, the program ends), disconnect.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ArmDriver, DriverStatus, JointReading } from "../ArmDriver.ts";
import type { ByteTransport } from "../transport/ByteTransport.ts";
import { TcpTransport } from "../transport/TcpTransport.ts";
import { RtdeClient, type Recipe } from "./RtdeClient.ts";
import { PrimaryClient } from "./PrimaryClient.ts";
import { RtdeError } from "./RtdeError.ts";
import { ROBOT_MODE, RUNTIME_STATE, SAFETY_MODE, type RtdeValue } from "./rtdeProtocol.ts";

/** The URScript program shipped with rlft. */
export const SERVOJ_SCRIPT = fileURLToPath(new URL("./rlft_servoj.script", import.meta.url));

const OUTPUTS = ["timestamp", "actual_q", "actual_qd", "actual_current", "robot_mode", "safety_mode", "runtime_state"];
const TARGETS = [24, 25, 26, 27, 28, 29].map((i) => `input_double_register_${i}`);
const MODE = "input_int_register_24";
const COUNTER = "input_int_register_25";

/** Options of the UR driver. */
export interface UrRtdeDriverOptions {
  host: string;
  port?: number;
  /** RTDE output frequency: 500 (e-Series) or 125 (CB3). */
  frequency: 125 | 500;
  joints: readonly string[];
  lower: readonly number[];
  upper: readonly number[];
  /** Send the script to the primary interface at activate (else the user starts it on the pendant). */
  uploadScript?: boolean;
  /** Where the script goes and the controller's messages come from: 30001 (primary interface). */
  scriptPort?: number;
  lookaheadTime?: number;
  gain?: number;
  /** The script's RTDE watchdog: stop when no input arrives for this long. */
  watchdogSec?: number;
  timeoutMs?: number;
  /** Opens a TCP connection (injected in tests). */
  connect?: (host: string, port: number, what: string) => Promise<ByteTransport>;
  logger?: { warn(msg: string): void; info(msg: string): void };
}

/** ArmDriver over RTDE. */
export class UrRtdeDriver implements ArmDriver {
  readonly jointNames: readonly string[];
  readonly jointLower: readonly number[];
  readonly jointUpper: readonly number[];
  #o: Required<Omit<UrRtdeDriverOptions, "logger">> & Pick<UrRtdeDriverOptions, "logger">;
  #state: ArmDriver["state"] = "unconfigured";
  #client: RtdeClient | null = null;
  #transport: ByteTransport | null = null;
  #input: Recipe | null = null;
  #reading: JointReading | null = null;
  #readAt = 0;
  #targets: number[] = [0, 0, 0, 0, 0, 0];
  #mode = 0;
  #counter = 0;
  #robotMode = -1;
  #safetyMode = 0;
  #runtimeState = 1;
  #fault = "";
  /** The controller's reason once it is part of `#fault` ("" while it has not arrived). */
  #faultReason = "";
  #firstData: (() => void) | null = null;
  #primary: PrimaryClient | null = null;
  /** Safety mode from the primary interface's latest SAFETY_MODE message (0: none yet). */
  #primarySafety = 0;
  /** Resolves on the next RTDE output package (activate checks fresh state). */
  #nextData: (() => void)[] = [];
  /** Robot messages received before this activation's program was sent. */
  #sentAt = 0;

  constructor(opts: UrRtdeDriverOptions) {
    if (opts.joints.length !== 6 || opts.lower.length !== 6 || opts.upper.length !== 6) throw new Error("UR arms have 6 joints: joints, lower and upper need 6 entries each");
    this.#o = {
      port: 30004,
      uploadScript: true,
      scriptPort: 30001,
      lookaheadTime: 0.1,
      gain: 300,
      watchdogSec: 0.1,
      timeoutMs: 3000,
      connect: (host, port, what) => TcpTransport.connect(host, port, { timeoutMs: opts.timeoutMs ?? 3000, what }),
      ...opts,
    };
    this.jointNames = opts.joints;
    this.jointLower = opts.lower;
    this.jointUpper = opts.upper;
  }

  get state(): ArmDriver["state"] {
    return this.#state;
  }

  /** Safety mode name (NORMAL, PROTECTIVE_STOP, ...). */
  get safetyMode(): string {
    return SAFETY_MODE[this.#safetyMode] ?? `unknown (${this.#safetyMode})`;
  }

  /** The latched fault ("" when none). */
  get fault(): string {
    return this.#fault;
  }

  /** The primary-interface client, once a program was sent. */
  get primary(): PrimaryClient | null {
    return this.#primary;
  }

  /** The RTDE client, once configured (stats, controller version). */
  get client(): RtdeClient | null {
    return this.#client;
  }

  async configure(): Promise<void> {
    if (this.#state !== "unconfigured") return;
    const t = await this.#o.connect(this.#o.host, this.#o.port, "the UR controller's RTDE interface");
    this.#transport = t;
    const c = new RtdeClient(t, { timeoutMs: this.#o.timeoutMs, logger: this.#o.logger });
    this.#client = c;
    try {
      await c.negotiateVersion();
      const version = await c.getControllerVersion();
      const major = Number(version.split(".")[0]);
      if (this.#o.frequency === 500 && major > 0 && major < 5) throw new RtdeError("NOT_READY", `controller ${this.#o.host} runs URControl ${version} (CB-series): its RTDE runs at most 125 Hz — set driver.frequency: 125`);
      await c.setupOutputs(OUTPUTS, this.#o.frequency);
      this.#input = await c.setupInputs([...TARGETS, MODE, COUNTER]);
      c.onData((v) => this.#onData(v));
      const first = new Promise<void>((resolve) => (this.#firstData = resolve));
      await c.start();
      await withTimeout(first, this.#o.timeoutMs, () => new RtdeError("TIMEOUT", `RTDE started but no data package came from ${this.#o.host} in ${this.#o.timeoutMs} ms`));
    } catch (e) {
      await this.#disconnect();
      throw e;
    }
    this.#state = "inactive";
  }

  async activate(): Promise<void> {
    if (this.#state === "unconfigured") throw new Error("UrRtdeDriver.activate: configure() first");
    if (this.#state === "active") return;
    // Decide on fresh state: packages already on their way may predate a stop cleared on the pendant a moment ago,
    // so a stop must persist for a short window (0.2 s, 100 cycles at 500 Hz) of fresh packages to refuse activation.
    const graceEnd = Date.now() + 200;
    for (;;) {
      await withTimeout(new Promise<void>((r) => this.#nextData.push(r)), this.#o.timeoutMs, () => new RtdeError("TIMEOUT", `no RTDE data from ${this.#o.host} for ${this.#o.timeoutMs} ms — check the network link`));
      try {
        this.#checkSafety();
        break;
      } catch (e) {
        if (Date.now() > graceEnd) throw e;
      }
    }
    if (this.#robotMode !== 7) {
      throw new RtdeError("NOT_READY", `UR arm at ${this.#o.host} is ${ROBOT_MODE[this.#robotMode] ?? this.#robotMode}, not RUNNING — power it on and release the brakes on the teach pendant`);
    }
    this.#targets = [...this.#reading!.position];
    this.#mode = 0;
    this.#fault = "";
    this.#faultReason = "";
    if (this.#o.uploadScript) await this.#uploadScript();
    const sent = Date.now();
    const deadline = sent + this.#o.timeoutMs;
    // Playing, and (when we sent it) the controller said rlft_servoj started — runtime_state may still show the
    // program this one replaces. A controller that sends no key message gets a second.
    const playing = () => this.#runtimeState === 2 && (!this.#primary || this.#primary.started("rlft_servoj", this.#sentAt) || Date.now() - sent > 1000);
    while (!playing()) {
      // The controller refused the program: its robot message says why (Local control, compile error, not ready).
      const refused = this.#primary?.refusal(this.#sentAt);
      if (refused) throw new RtdeError("NOT_READY", `UR controller ${this.#o.host} did not start rlft_servoj: ${refused} — ${this.#startFix(refused)}`);
      if (Date.now() > deadline) {
        throw new RtdeError("NOT_READY", `rlft_servoj did not start on ${this.#o.host} (runtime_state ${RUNTIME_STATE[this.#runtimeState] ?? this.#runtimeState}) — put the robot in Remote Control mode (pendant, top right) so port ${this.#o.scriptPort} may start programs, or load hardware/ur/rlft_servoj.script as a program and press play`);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    this.#mode = 1;
    this.#state = "active";
  }

  #startFix(reason: string): string {
    if (/Local control/i.test(reason)) return "switch the robot to Remote Control on the teach pendant (top right), then activate again";
    if (/compile/i.test(reason)) return "the script sent is not a valid URScript program: check hardware/ur/rlft_servoj.script";
    if (/not RUNNING|POWER/i.test(reason)) return "power the arm on and release the brakes on the teach pendant";
    return "resolve it on the teach pendant, then activate again";
  }

  async deactivate(): Promise<void> {
    if (this.#state !== "active") return;
    this.#mode = 0;
    this.#state = "inactive";
  }

  /** Stops the program (mode 2: stopj), pauses RTDE and disconnects. */
  async close(): Promise<void> {
    await this.deactivate();
    if (this.#client && this.#transport?.isOpen) {
      this.#mode = 2;
      await this.#sendInputs();
      await new Promise((r) => setTimeout(r, 30));
      await this.#client.pause().catch(() => undefined);
    }
    await this.#disconnect();
    this.#state = "unconfigured";
  }

  read(): { status: DriverStatus; reading?: JointReading } {
    if (!this.#reading) return { status: { ok: false, error: "UR driver not configured" } };
    const age = performance.now() / 1000 - this.#readAt;
    const limit = Math.max(0.1, 5 / this.#o.frequency);
    if (age > limit) return { status: { ok: false, error: `no RTDE data from ${this.#o.host} for ${age.toFixed(2)} s — check the network link` }, reading: this.#reading };
    return { status: { ok: true }, reading: this.#reading };
  }

  write(positions: readonly number[]): DriverStatus {
    if (this.#state !== "active") return { ok: false, error: `UR driver is ${this.#state}: commands are not taken` };
    if (this.#fault) return { ok: false, error: this.#fault };
    if (positions.length !== 6) return { ok: false, error: `expected 6 joint targets (${this.jointNames.join(", ")}), got ${positions.length}` };
    const bad = positions.findIndex((q) => !Number.isFinite(q));
    if (bad >= 0) return { ok: false, error: `non-finite target for ${this.jointNames[bad]}; not sent` };
    this.#targets = positions.map((q, i) => Math.min(this.jointUpper[i], Math.max(this.jointLower[i], q)));
    return { ok: true };
  }

  #checkSafety(): void {
    const m = this.#safetyMode;
    if (m === 1 || m === 2) return;
    const name = SAFETY_MODE[m] ?? `safety mode ${m}`;
    const fix =
      m === 3
        ? "find what the arm hit or what limit it crossed, then clear the protective stop on the teach pendant and restart the session"
        : m === 6 || m === 7
          ? "release the emergency stop button, then reset and power on the arm on the teach pendant"
          : m === 5 || m === 12
            ? "the safeguard input is open (door, light curtain): close it and reset"
            : "resolve it on the teach pendant (see the log there)";
    throw new RtdeError(m === 3 ? "PROTECTIVE_STOP" : "NOT_READY", `UR controller ${this.#o.host} is in ${name}: commands are refused — ${fix}`);
  }

  #onData(v: Record<string, RtdeValue>): void {
    const q = v.actual_q as number[];
    this.#reading = { position: q, velocity: v.actual_qd as number[], effort: v.actual_current as number[] };
    this.#readAt = performance.now() / 1000;
    this.#robotMode = v.robot_mode as number;
    this.#runtimeState = v.runtime_state as number;
    const prevSafety = this.#safetyMode;
    this.#safetyMode = v.safety_mode as number;
    if (this.#firstData) {
      this.#firstData();
      this.#firstData = null;
    }
    for (const r of this.#nextData.splice(0)) r();
    if (this.#fault && !this.#faultReason) {
      // The stop shows on RTDE (500 Hz) before its reason arrives on the primary interface (10 Hz): add it when it comes.
      const reason = this.#primary?.lastReason(this.#sentAt);
      if (reason) {
        this.#faultReason = reason;
        if (!this.#fault.includes(reason)) {
          this.#fault = `${this.#fault} (controller: ${reason})`;
          this.#o.logger?.warn(this.#fault);
        }
      }
    }
    if (this.#state === "active" && !this.#fault) {
      try {
        this.#checkSafety();
        if (this.#runtimeState !== 2) {
          const reason = this.#primary?.lastReason(this.#sentAt) || "no reason given on the primary interface";
          throw new RtdeError("NOT_READY", `rlft_servoj ${RUNTIME_STATE[this.#runtimeState] ?? this.#runtimeState} on UR controller ${this.#o.host}: ${reason} — the arm holds; fix the cause, then restart the session`);
        }
      } catch (e) {
        // Hold from now on: after the stop is cleared the arm must not run to an old target.
        this.#mode = 0;
        const reason = this.#primary?.lastReason(this.#sentAt);
        const msg = (e as Error).message;
        this.#fault = reason && !msg.includes(reason) ? `${msg} (controller: ${reason})` : msg;
        this.#faultReason = reason ?? "";
        if (prevSafety !== this.#safetyMode || this.#runtimeState !== 2) this.#o.logger?.warn(this.#fault);
      }
    }
    void this.#sendInputs();
  }

  async #sendInputs(): Promise<void> {
    const c = this.#client;
    if (!c || !this.#input || !this.#transport?.isOpen) return;
    this.#counter = (this.#counter + 1) | 0;
    const values: Record<string, RtdeValue> = { [MODE]: this.#mode, [COUNTER]: this.#counter };
    TARGETS.forEach((n, i) => (values[n] = this.#targets[i]));
    await c.send(this.#input, values).catch(() => undefined);
  }

  async #uploadScript(): Promise<void> {
    const script = renderServojScript({ dt: 1 / this.#o.frequency, lookaheadTime: this.#o.lookaheadTime, gain: this.#o.gain, watchdogHz: 1 / this.#o.watchdogSec });
    if (!this.#primary || !this.#primary.transport.isOpen) {
      this.#primary?.dispose();
      this.#primary = new PrimaryClient(await this.#o.connect(this.#o.host, this.#o.scriptPort, "the UR controller's primary interface"));
      // Our program stopped while another keeps the controller PLAYING (a client or the pendant started another
      // program, which replaced ours): runtime_state alone would not show it.
      this.#primary.onMessage((m) => {
        if (m.kind === "safety_mode") this.#primarySafety = m.value;
        if (this.#state !== "active" || this.#fault || m.kind !== "key" || !/STOPPED/.test(m.title) || !m.text.startsWith("rlft_servoj")) return;
        this.#mode = 0;
        // A safety stop ends the program too: name the stop (its safety_mode message came first on this stream).
        const sm = this.#primarySafety;
        if (sm !== 1 && sm !== 2 && sm > 0) this.#safetyMode = sm;
        try {
          this.#checkSafety();
          this.#fault = `rlft_servoj stopped on UR controller ${this.#o.host}: ${m.text} — the arm holds; find what started another program (pendant, another client), then restart the session`;
          this.#faultReason = m.text;
        } catch (e) {
          const reason = this.#primary?.lastReason(this.#sentAt);
          this.#fault = `${(e as Error).message}${reason ? ` (controller: ${reason})` : ""}`;
          this.#faultReason = reason ?? "";
        }
        this.#o.logger?.warn(this.#fault);
      });
    }
    this.#sentAt = this.#primary.received;
    await this.#primary.send(script);
  }

  async #disconnect(): Promise<void> {
    this.#primary?.dispose();
    await this.#primary?.transport.close();
    this.#primary = null;
    this.#client?.dispose();
    await this.#transport?.close();
    this.#client = null;
    this.#transport = null;
  }
}

/** The shipped script with its placeholders filled in. */
export function renderServojScript(p: { dt: number; lookaheadTime: number; gain: number; watchdogHz: number }): string {
  const fill: Record<string, string> = { dt: p.dt.toFixed(4), lookahead_time: p.lookaheadTime.toFixed(3), gain: String(Math.round(p.gain)), watchdog_hz: p.watchdogHz.toFixed(1) };
  const text = readFileSync(SERVOJ_SCRIPT, "utf8").replace(/\{\{(\w+)\}\}/g, (_, k: string) => {
    if (!(k in fill)) throw new Error(`${SERVOJ_SCRIPT}: unknown placeholder {{${k}}}`);
    return fill[k];
  });
  return text.endsWith("\n") ? text : `${text}\n`;
}

function withTimeout<T>(p: Promise<T>, ms: number, err: () => Error): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(err()), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
