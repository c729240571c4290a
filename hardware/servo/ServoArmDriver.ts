/**
 * An arm made of bus servos (SO-100/SO-101 on Feetech STS3215, Koch on Dynamixel XL330/XL430) as an
 * ArmDriver. A background I/O loop owns the bus: each cycle it sync-writes the latest goal positions (when
 * active) and sync-reads position, velocity and effort; `read()` and `write()` only touch that cache, so the
 * control tick never waits on the serial line (the ros2_control hardware-component pattern).
 *
 * Joint i maps to servo `ids[i]`: q = direction · (ticks − zeroTicks) · 2π / ticksPerRev.
 * configure: open the port, ping every servo and check its model, read its Min/Max_Position_Limit, start reading
 * (INACTIVE: state only). Goals are clamped into each servo's own limits before they go out (one warning per servo
 * naming it and its joint): a Dynamixel refuses a goal beyond them (Data Limit Error, and the sync write has no
 * reply, so the arm would silently stop following), a Feetech clamps it without saying so.
 * activate: goal := present position, then torque on (the arm does not jump).
 * deactivate: torque off or hold, as configured. A lost bus: reads fail and the status says why; with
 * `on_fault: torque_off` the driver tries to switch torque off; Dynamixel's Bus Watchdog stops the servos
 * by itself when the host goes silent.
 *
 * Faults the servos report (servoFaults.ts names them): a status error byte in any reply — Dynamixel's Alert bit
 * (a hardware-error shutdown: the servo switched its torque off and only a Reboot clears it), Feetech's fault bits
 * (voltage, angle sensor, overheat, overcurrent, angle, overload) — or a tripped Dynamixel Bus Watchdog (read every
 * WATCHDOG_CHECK cycles: the servos stopped and refuse goals). Each latches `fault` at once with one line naming the
 * joint, the servo and the fix; commands are refused and `on_fault` applies. The next `activate` performs the
 * documented recovery: Dynamixel servos that report a hardware error are rebooted (Reboot instruction), a tripped
 * watchdog is cleared; a Feetech servo that still reports a fault refuses activation with its name.
 */
import type { ArmDriver, DriverStatus, JointReading } from "../ArmDriver.ts";
import type { ServoBus } from "./ServoBus.ts";
import { ServoError } from "./ServoError.ts";
import type { ServoModel } from "./ServoModel.ts";
import { radiansToTicks, ticksToRadians, type JointCalibration } from "../../calibration/ArmCalibration.ts";
import { presentCalibration, presentToRawShifts } from "./servoCalibration.ts";
import { describeServoFault } from "./servoFaults.ts";

/** Cycles between two reads of the Dynamixel Bus Watchdog register. */
const WATCHDOG_CHECK = 10;

/** One joint on the bus. */
export interface ServoJoint {
  name: string;
  id: number;
  /** Raw encoder position (ticks) at q = 0, any Homing_Offset stored in the servo undone (from calibration). */
  zeroTicks: number;
  /** +1, or −1 when the servo turns the other way than the joint. */
  direction: 1 | -1;
  /** Joint limits (rad). */
  lower: number;
  upper: number;
  /** This servo's model when the bus mixes models of one family (Koch: XL430 and XL330); default the bus model. */
  model?: ServoModel;
}

/** Options of a servo arm. */
export interface ServoArmDriverOptions {
  /** Opens the bus (port + protocol + model); injected so tests use a pty pair. */
  openBus: () => Promise<{ bus: ServoBus; close: () => Promise<void> }>;
  joints: readonly ServoJoint[];
  /** I/O loop rate (Hz); the bus must fit one sync write + one sync read per cycle. */
  loopHz: number;
  /** A reading older than this is an error (the bus stalled). */
  staleSec: number;
  /** On deactivate: switch torque off (arm goes limp) or hold the last position. */
  onDeactivate: "torque_off" | "hold";
  /** When the bus fails while active: try to switch torque off, or leave the servos holding their last goal. */
  onFault: "torque_off" | "hold";
  /** Consecutive failed cycles before the driver declares a fault. */
  faultAfter?: number;
  /** Dynamixel only: Bus Watchdog in ms (multiple of 20, 0 = off); the servos stop when the host goes silent. */
  busWatchdogMs?: number;
  logger?: { warn(msg: string): void; info(msg: string): void };
}

/** ArmDriver over a ServoBus. */
export class ServoArmDriver implements ArmDriver {
  readonly jointNames: readonly string[];
  readonly jointLower: readonly number[];
  readonly jointUpper: readonly number[];
  #opts: ServoArmDriverOptions;
  #state: ArmDriver["state"] = "unconfigured";
  #bus: ServoBus | null = null;
  #closeBus: (() => Promise<void>) | null = null;
  #reading: JointReading | null = null;
  #readAt = 0;
  #pending: number[] | null = null;
  #error = "";
  #failures = 0;
  #faulted = false;
  /** The latched fault line ("" when none). */
  #fault = "";
  #loop: Promise<void> | null = null;
  #running = false;
  #effortName: string;
  /** Per joint: Present_Position ticks ↔ rad (set at configure, once the servos' stored offsets are known). */
  #cal: JointCalibration[];
  /** Per joint: the servo's goal limits (Goal_Position ticks), or null where the servo takes any goal. */
  #tickLimits: ({ min: number; max: number } | null)[] = [];
  /** Servo ids already warned about a clamped goal. */
  #clampWarned = new Set<number>();
  /** Cycles run, goal packets sent, faults and goals clamped to a servo's limits, for diagnostics and tests. */
  readonly stats = { cycles: 0, goalWrites: 0, faults: 0, clampedGoals: 0 };

  constructor(opts: ServoArmDriverOptions) {
    this.#opts = opts;
    this.jointNames = opts.joints.map((j) => j.name);
    this.jointLower = opts.joints.map((j) => j.lower);
    this.jointUpper = opts.joints.map((j) => j.upper);
    this.#effortName = "";
    this.#cal = opts.joints.map((j) => presentCalibration(j.zeroTicks, j.direction, 4096));
    const ids = opts.joints.map((j) => j.id);
    const dup = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (dup.length) throw new Error(`servo ids must be unique per bus: ${dup.join(", ")} used twice — give each joint its own id`);
  }

  get state(): ArmDriver["state"] {
    return this.#state;
  }

  /** The bus, once configured. */
  get bus(): ServoBus | null {
    return this.#bus;
  }

  /** The latched fault ("" when none): names the joint and servo, what it reported and the fix. */
  get fault(): string {
    return this.#fault;
  }

  /** The last bus error ("" when healthy). */
  get lastError(): string {
    return this.#error;
  }

  async configure(): Promise<void> {
    if (this.#state !== "unconfigured") return;
    const { bus, close } = await this.#opts.openBus();
    this.#bus = bus;
    this.#closeBus = close;
    try {
      await this.#checkServos(bus);
      this.#effortName = bus.model.effort.register;
      const ids = this.#opts.joints.map((j) => j.id);
      const shifts = await presentToRawShifts(bus, ids);
      this.#cal = this.#opts.joints.map((j, i) => presentCalibration(j.zeroTicks, j.direction, (j.model ?? bus.model).ticksPerRev, shifts[i]));
      this.#tickLimits = await this.#readLimits(bus);
      if (bus.protocol.name === "dynamixel" && this.#opts.busWatchdogMs) {
        // Bus Watchdog can only be set with torque off; unit 20 ms.
        await bus.syncWrite("Torque_Enable", ids.map((id) => ({ id, value: 0 })));
        for (const id of ids) await bus.write(id, "Bus_Watchdog", 0);
      }
      await this.#cycle();
      if (!this.#reading) throw new Error(this.#error || "no reading");
    } catch (e) {
      await this.#release();
      throw e;
    }
    this.#state = "inactive";
    this.#running = true;
    this.#loop = this.#run();
  }

  async activate(): Promise<void> {
    if (this.#state === "unconfigured") throw new Error("ServoArmDriver.activate: configure() first");
    if (this.#state === "active") return;
    const bus = this.#bus!;
    const ids = this.#opts.joints.map((j) => j.id);
    await this.#recover(bus, ids);
    // Hold where the arm is, then take torque: the goal register may still hold an old target.
    const present = await bus.syncRead(ids, ["Present_Position"]);
    await bus.syncWrite("Goal_Position", ids.map((id, i) => ({ id, value: present[i][0] })));
    await bus.syncWrite("Torque_Enable", ids.map((id) => ({ id, value: 1 })));
    if (bus.protocol.name === "dynamixel" && this.#opts.busWatchdogMs) {
      const units = Math.max(1, Math.min(127, Math.round(this.#opts.busWatchdogMs / 20)));
      for (const id of ids) await bus.write(id, "Bus_Watchdog", units);
    }
    this.#pending = null;
    this.#faulted = false;
    this.#fault = "";
    this.#failures = 0;
    this.#state = "active";
  }

  /**
   * The documented recovery before torque goes on: Dynamixel servos that report a hardware error are rebooted
   * (e-Manual "Shutdown(63)": REBOOT is the only way back to torque on), a tripped Bus Watchdog is cleared by
   * writing 0 (e-Manual "Bus Watchdog(98)"); a Feetech servo that still reports a fault keeps the arm inactive.
   */
  async #recover(bus: ServoBus, ids: number[]): Promise<void> {
    const { errors } = await bus.syncReadStatus(ids, ["Present_Position"]);
    for (const [i, err] of errors.entries()) {
      if (!err) continue;
      const j = this.#opts.joints[i];
      if (bus.protocol.reboot) {
        const what = await describeServoFault(bus, j, err);
        this.#opts.logger?.warn(`${what}; rebooting it (Dynamixel Reboot instruction) to clear the error before torque goes on`);
        await bus.reboot(j.id);
      } else {
        throw new ServoError("SERVO_ERROR", [j.id], `${await describeServoFault(bus, j, err)} — the arm stays inactive: remove the cause (load, supply, temperature), or power-cycle the servo, then activate again`);
      }
    }
    if (bus.protocol.name === "dynamixel" && this.#opts.busWatchdogMs) {
      const v = await bus.syncRead(ids, ["Bus_Watchdog"]);
      for (const [i, r] of v.entries()) if (r[0] === -1) await bus.write(ids[i], "Bus_Watchdog", 0);
    }
  }

  async deactivate(): Promise<void> {
    if (this.#state !== "active") return;
    this.#state = "inactive";
    this.#pending = null;
    if (this.#opts.onDeactivate === "torque_off") await this.#torqueOff();
  }

  /** Stops the loop and closes the port (torque as `onDeactivate` says). */
  async close(): Promise<void> {
    await this.deactivate();
    this.#running = false;
    await this.#loop;
    await this.#release();
    this.#state = "unconfigured";
  }

  read(): { status: DriverStatus; reading?: JointReading } {
    if (this.#state === "unconfigured" || !this.#reading) return { status: { ok: false, error: "servo arm not configured" } };
    const age = performance.now() / 1000 - this.#readAt;
    if (age > this.#opts.staleSec) {
      return { status: { ok: false, error: `no fresh servo reading for ${age.toFixed(2)} s (limit ${this.#opts.staleSec} s): ${this.#error || "bus stalled"}` }, reading: this.#reading };
    }
    return { status: { ok: true }, reading: this.#reading };
  }

  write(positions: readonly number[]): DriverStatus {
    if (this.#state !== "active") return { ok: false, error: `servo arm is ${this.#state}: commands are not taken` };
    if (this.#faulted) return { ok: false, error: `servo arm fault, commands are not taken: ${this.#fault || this.#error}` };
    const n = this.#opts.joints.length;
    if (positions.length !== n) return { ok: false, error: `expected ${n} joint targets (${this.jointNames.join(", ")}), got ${positions.length}` };
    const bad = positions.findIndex((q) => !Number.isFinite(q));
    if (bad >= 0) return { ok: false, error: `non-finite target for ${this.jointNames[bad]}; not sent` };
    this.#pending = positions.map((q, i) => Math.min(this.jointUpper[i], Math.max(this.jointLower[i], q)));
    return this.#error ? { ok: false, error: this.#error } : { ok: true };
  }

  /** Joint angle (rad) → Goal_Position ticks. */
  toTicks(i: number, q: number): number {
    return radiansToTicks(q, this.#cal[i]);
  }

  /** Present_Position ticks → joint angle (rad). */
  toRad(i: number, ticks: number): number {
    return ticksToRadians(ticks, this.#cal[i]) + 0;
  }

  async #checkServos(bus: ServoBus): Promise<void> {
    const missing: number[] = [];
    const wrong: string[] = [];
    for (const j of this.#opts.joints) {
      try {
        const model = await bus.ping(j.id);
        const want = j.model ?? bus.model;
        if (model !== want.modelNumber) wrong.push(`${j.name} (id ${j.id}) is model ${model}, expected ${want.modelNumber} (${want.name})`);
      } catch (e) {
        if (e instanceof ServoError && e.code === "NO_REPLY") missing.push(j.id);
        else throw e;
      }
    }
    if (missing.length) {
      const names = this.#opts.joints.filter((j) => missing.includes(j.id)).map((j) => `${j.name} (id ${j.id})`);
      throw new ServoError(
        "NO_REPLY",
        missing,
        `${bus.protocol.name} bus ${bus.port}: servo${missing.length > 1 ? "s" : ""} ${names.join(", ")} did not answer a ping — check the power supply and the daisy-chain cables, the baud rate, and the ids (list what answers: rlft servo-scan --bus ${bus.protocol.name} --port ${bus.port})`,
      );
    }
    if (wrong.length) throw new ServoError("MODEL_MISMATCH", [], `${bus.port}: ${wrong.join("; ")} — fix driver.model or the ids in the launch file`);
  }

  /**
   * Each servo's Min/Max_Position_Limit. Dynamixel X (e-Manual "Min/Max Position Limit(52, 48)"): they bound Goal
   * Position in Position Control Mode (Operating Mode 3) only. Feetech STS (memory table, 9 and 11): both 0 means
   * no limit (multi-turn).
   */
  async #readLimits(bus: ServoBus): Promise<({ min: number; max: number } | null)[]> {
    const out: ({ min: number; max: number } | null)[] = [];
    for (const j of this.#opts.joints) {
      const min = await bus.read(j.id, "Min_Position_Limit");
      const max = await bus.read(j.id, "Max_Position_Limit");
      if (bus.protocol.name === "dynamixel") out.push((await bus.read(j.id, "Operating_Mode")) === 3 ? { min, max } : null);
      else out.push(min === 0 && max === 0 ? null : { min, max });
    }
    return out;
  }

  /** Goal ticks of joint `i` clamped into its servo's limits; warns once per servo. */
  #clampGoal(i: number, q: number, ticks: number): number {
    const lim = this.#tickLimits[i];
    if (!lim || (ticks >= lim.min && ticks <= lim.max)) return ticks;
    const clamped = Math.min(lim.max, Math.max(lim.min, ticks));
    this.stats.clampedGoals++;
    const j = this.#opts.joints[i];
    if (!this.#clampWarned.has(j.id)) {
      this.#clampWarned.add(j.id);
      const family = this.#bus?.protocol.name ?? "servo";
      this.#opts.logger?.warn(
        `${j.name} (${family} id ${j.id}): goal ${q.toFixed(3)} rad = ${ticks} ticks is outside the servo's Min/Max_Position_Limit [${lim.min}, ${lim.max}]; clamped to ${clamped} (${this.toRad(i, clamped).toFixed(3)} rad) — the servo's limits are narrower than the joint's ${j.lower}..${j.upper} rad: narrow the joint limits in the launch file or widen the servo's (warned once per servo)`,
      );
    }
    return clamped;
  }

  async #run(): Promise<void> {
    const period = 1000 / this.#opts.loopHz;
    while (this.#running) {
      const t0 = performance.now();
      await this.#cycle();
      const wait = period - (performance.now() - t0);
      await new Promise((r) => setTimeout(r, Math.max(1, wait)));
    }
  }

  /** One bus cycle: goals out (active only), state in. Never throws. */
  async #cycle(): Promise<void> {
    const bus = this.#bus;
    if (!bus) return;
    this.stats.cycles++;
    const ids = this.#opts.joints.map((j) => j.id);
    try {
      const goal = this.#pending;
      if (goal && this.#state === "active" && !this.#faulted) {
        this.#pending = null;
        await bus.syncWrite("Goal_Position", ids.map((id, i) => ({ id, value: this.#clampGoal(i, goal[i], this.toTicks(i, goal[i])) })));
        this.stats.goalWrites++;
      }
      const names = ["Present_Position", "Present_Velocity", ...(this.#effortName ? [this.#effortName] : [])];
      const { values: v, errors } = await bus.syncReadStatus(ids, names);
      this.#reading = {
        position: v.map((r, i) => this.toRad(i, r[0])),
        velocity: v.map((r, i) => this.#opts.joints[i].direction * r[1] * bus.model.velocityScale),
        // Mixed buses: the effort register sits at the same address, only its unit differs per model.
        effort: v.map((r, i) => (r.length > 2 ? this.#opts.joints[i].direction * r[2] * (this.#opts.joints[i].model ?? bus.model).effort.scale : 0)),
      };
      this.#readAt = performance.now() / 1000;
      if (this.#error) this.#opts.logger?.info(`servo bus ${bus.port} recovered`);
      this.#error = "";
      this.#failures = 0;
      // A servo reports a fault: name it and latch at once (a device report, not line noise to ride out).
      const bad = errors.findIndex((e) => e !== 0);
      if (bad >= 0 && this.#state === "active" && !this.#faulted) await this.#fault_(await describeServoFault(bus, this.#opts.joints[bad], errors[bad]));
      if (bus.protocol.name === "dynamixel" && this.#opts.busWatchdogMs && this.#state === "active" && !this.#faulted && this.stats.cycles % WATCHDOG_CHECK === 0) {
        const wd = await bus.syncRead(ids, ["Bus_Watchdog"]);
        const tripped = wd.findIndex((r) => r[0] === -1);
        if (tripped >= 0) {
          const j = this.#opts.joints[tripped];
          await this.#fault_(
            `${j.name} (dynamixel id ${j.id}) tripped its Bus Watchdog (no instruction for over ${this.#opts.busWatchdogMs} ms — rlft's I/O loop stalled): the servo stopped and refuses goals (Data Range Error) — rlft clears the watchdog when the arm is activated again; if it recurs, raise driver.bus_watchdog_ms or unload the host`,
          );
        }
      }
    } catch (e) {
      const msg = (e as Error).message;
      if (msg !== this.#error) this.#opts.logger?.warn(msg);
      this.#error = msg;
      this.#failures++;
      if (this.#state === "active" && !this.#faulted && this.#failures >= (this.#opts.faultAfter ?? 5)) {
        const ids = e instanceof ServoError ? e.ids : [];
        const who = this.#opts.joints.filter((j) => ids.includes(j.id)).map((j) => `${j.name} (id ${j.id})`);
        await this.#fault_(`servo bus fault after ${this.#failures} failed cycles${who.length ? ` on ${who.join(", ")}` : ""}: ${this.#error}`);
      }
    }
  }

  /** Latches a fault: commands refused, `on_fault` applied, one warning. */
  async #fault_(line: string): Promise<void> {
    this.#faulted = true;
    this.#fault = line;
    this.stats.faults++;
    const action = this.#opts.onFault;
    this.#opts.logger?.warn(`${line}; ${action === "torque_off" ? "switching torque off (the arm goes limp)" : "the servos keep holding their last goal"}`);
    if (action === "torque_off") await this.#torqueOff();
  }

  async #torqueOff(): Promise<void> {
    const bus = this.#bus;
    if (!bus) return;
    try {
      await bus.syncWrite("Torque_Enable", this.#opts.joints.map((j) => ({ id: j.id, value: 0 })));
    } catch (e) {
      this.#opts.logger?.warn(`could not switch torque off on ${bus.port}: ${(e as Error).message}`);
    }
  }

  async #release(): Promise<void> {
    this.#bus?.dispose();
    await this.#closeBus?.();
    this.#bus = null;
    this.#closeBus = null;
  }
}
