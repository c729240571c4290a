/**
 * A servo bus simulator: the servo side of the Feetech SCS/STS or Dynamixel 2.0 protocol over any ByteTransport
 * (one end of a pty pair in tests, `rlft servo-sim` for people and for the vendors' SDKs in test/peers). Each
 * simulated servo (SimServo.ts) has the model's register memory and moves towards Goal_Position with torque on;
 * what a write may change and what a status reports follow servoSimRules.ts. Servos ignore what is not addressed
 * to them, as real ones do. Instructions:
 *
 * - both families: PING (unicast, and broadcast: every servo answers in id order — e-Manual Protocol 2.0 §Ping
 *   "Broadcast ID", and LeRobot's FeetechMotorsBus broadcast ping), READ, WRITE, REG_WRITE + ACTION (the write
 *   waits for ACTION; e-Manual §Reg Write / §Action, Feetech manual §4 instructions 0x04 / 0x05), SYNC READ,
 *   SYNC WRITE.
 * - Dynamixel: REBOOT (0x08; e-Manual §Reboot: the status is sent, then the servo restarts — RAM back to its
 *   defaults, hardware error and torque cleared, silent while it boots), BULK READ (0x92: id, address, length per
 *   servo; each answers in order), BULK WRITE (0x93: id, address, length, data per servo; no reply), the Bus
 *   Watchdog (register 98; e-Manual "Bus Watchdog(98)": no instruction for N × 20 ms with torque on → the servo
 *   stops and the register reads -1), and an unknown instruction answered Instruction Error (2).
 *
 * Faults can be injected: silent servos, corrupted replies, hardware faults (`injectFault`: overload, overheating,
 * voltage, …) with each family's consequences.
 */
import type { ByteTransport } from "../transport/ByteTransport.ts";
import type { ServoPacket, ServoProtocol } from "./ServoProtocol.ts";
import type { ServoModel } from "./ServoModel.ts";
import { SimServo } from "./SimServo.ts";
import { dynamixelRules, feetechRules, type ServoFault, type SimRules } from "./servoSimRules.ts";

/** Options of the simulator. */
export interface ServoBusSimOptions {
  protocol: ServoProtocol;
  model: ServoModel;
  ids: readonly number[];
  /** Start position of every servo, in ticks (default: the middle of the range). */
  startTicks?: number;
  /** Top speed with torque on, ticks/s (STS3215 ≈ 0.22 s/60° ≈ 3000 ticks/s). */
  maxSpeed?: number;
  /** How long a rebooting Dynamixel stays silent (ms). */
  bootMs?: number;
}

/** Counters, for tests and the CLI. */
export interface ServoBusSimStats {
  packets: number;
  syncWrites: number;
  syncReads: number;
  bulkReads: number;
  bulkWrites: number;
  reboots: number;
  checksumErrors: number;
  goalWrites: number;
}

const EXTRA = { REBOOT: 0x08, BULK_READ: 0x92, BULK_WRITE: 0x93, REG_WRITE: 0x04, ACTION: 0x05, STATUS: 0x55 } as const;

/** The simulator. */
export class ServoBusSim {
  readonly stats: ServoBusSimStats = { packets: 0, syncWrites: 0, syncReads: 0, bulkReads: 0, bulkWrites: 0, reboots: 0, checksumErrors: 0, goalWrites: 0 };
  /** Servos that stay silent (unplugged, wrong id, no power). */
  readonly silent = new Set<number>();
  /** The next N replies go out with a broken checksum/CRC. */
  corruptReplies = 0;
  /** Last goal each servo took, for tests. */
  readonly goals = new Map<number, number>();
  #opts: Required<ServoBusSimOptions>;
  #rules: SimRules;
  #servos = new Map<number, SimServo>();
  #buf = new Uint8Array(0);
  #transport: ByteTransport;
  #off: () => void;
  #t0 = performance.now();
  #onPacket: ((p: ServoPacket) => void)[] = [];

  constructor(transport: ByteTransport, opts: ServoBusSimOptions) {
    this.#opts = { startTicks: Math.round(opts.model.ticksPerRev / 2), maxSpeed: 3000, bootMs: 20, ...opts };
    this.#rules = opts.protocol.name === "dynamixel" ? dynamixelRules : feetechRules;
    this.#transport = transport;
    const now = this.#now();
    for (const id of opts.ids) this.#servos.set(id, new SimServo(id, opts.model, this.#opts.startTicks, now));
    this.#off = transport.onData((c) => this.#onData(c));
  }

  /** Register value of servo `id`. */
  get(id: number, name: string): number {
    const s = this.#servo(id);
    this.#tick(s);
    if (!s.has(name)) throw new Error(`${this.#opts.model.name} has no register '${name}'`);
    return s.get(name);
  }

  /** Sets a register of servo `id` directly (a start position, a temperature), bypassing the protocol rules. */
  set(id: number, name: string, value: number): void {
    const s = this.#servo(id);
    if (!s.has(name)) throw new Error(`${this.#opts.model.name} has no register '${name}'`);
    s.set(name, value);
    if (name === "Present_Position") s.pos = value;
  }

  /** A hardware fault on servo `id` (Dynamixel: shutdown per Shutdown(63); Feetech: status bit, torque released per Unloading_Condition). */
  injectFault(id: number, fault: ServoFault): void {
    const s = this.#servo(id);
    this.#tick(s);
    this.#rules.fault(s, fault);
  }

  /** The cause of servo `id`'s fault went away (Feetech: bits clear; Dynamixel: still latched until a reboot). */
  clearFault(id: number): void {
    this.#rules.clear(this.#servo(id));
  }

  /** Calls `cb` for every instruction packet received (tests check what arrived). */
  onPacket(cb: (p: ServoPacket) => void): () => void {
    this.#onPacket.push(cb);
    return () => (this.#onPacket = this.#onPacket.filter((x) => x !== cb));
  }

  /** Stops listening (the transport's owner closes it). */
  dispose(): void {
    this.#off();
  }

  #servo(id: number): SimServo {
    const s = this.#servos.get(id);
    if (!s) throw new Error(`no simulated servo ${id} (have ${[...this.#servos.keys()].join(", ")})`);
    return s;
  }

  #now(): number {
    return (performance.now() - this.#t0) / 1000;
  }

  /** Motion up to now, and the Dynamixel Bus Watchdog. */
  #tick(s: SimServo): void {
    const now = this.#now();
    if (s.has("Bus_Watchdog")) {
      const wd = s.get("Bus_Watchdog");
      if (wd > 0 && s.get("Torque_Enable") === 1 && now - s.heardAt > wd * 0.02) {
        // Stops where it is: the goal becomes the present position.
        s.advance(s.heardAt + wd * 0.02, this.#opts.maxSpeed);
        s.set("Goal_Position", Math.round(s.pos));
        s.set("Bus_Watchdog", -1);
      }
    }
    s.advance(now, this.#opts.maxSpeed);
  }

  #onData(chunk: Uint8Array): void {
    const next = new Uint8Array(this.#buf.length + chunk.length);
    next.set(this.#buf);
    next.set(chunk, this.#buf.length);
    this.#buf = next.length > 65536 ? next.subarray(next.length - 65536) : next;
    for (;;) {
      const r = this.#opts.protocol.decode(this.#buf);
      if (r.kind === "need_more") break;
      const id = this.#buf[4];
      this.#buf = this.#buf.subarray(r.bytes);
      if (r.kind === "corrupt") {
        this.stats.checksumErrors++;
        // Dynamixel 2.0 answers a packet for it whose CRC fails with CRC Error (3) (e-Manual Protocol 2.0 §Error);
        // a Feetech servo drops it and stays silent.
        const s = this.#opts.protocol.name === "dynamixel" && r.bytes > 7 ? this.#servos.get(id) : undefined;
        if (s && this.#alive(s)) this.#reply(s, 3 | this.#rules.status(s), []);
        continue;
      }
      if (r.kind === "packet") this.#handle(r.packet);
    }
  }

  /** True when servo `s` can answer now (powered, not rebooting). */
  #alive(s: SimServo): boolean {
    return !this.silent.has(s.id) && this.#now() >= s.bootedAt;
  }

  #reply(s: SimServo, error: number, data: ArrayLike<number>): void {
    if (!this.#alive(s)) return;
    const pkt = this.#opts.protocol.statusPacket(s.id, error, Uint8Array.from(data as ArrayLike<number>));
    if (this.corruptReplies > 0) {
      this.corruptReplies--;
      pkt[pkt.length - 1] ^= 0x5a;
    }
    void this.#transport.write(pkt).catch(() => undefined);
  }

  #store(s: SimServo, address: number, data: Uint8Array): number {
    const err = this.#rules.write(s, address, data);
    const goal = s.model.registers.Goal_Position;
    if (goal.address >= address && goal.address < address + data.length && (err & 0x7f) === 0) {
      this.stats.goalWrites++;
      this.goals.set(s.id, s.get("Goal_Position"));
    }
    return err;
  }

  #handle(p: ServoPacket): void {
    const proto = this.#opts.protocol;
    const I = proto.INSTRUCTION;
    const dxl = proto.name === "dynamixel";
    // Dynamixel status packets (0x55) are ours echoed back on a shared line: not for us.
    if (dxl && p.instruction === EXTRA.STATUS) return;
    this.stats.packets++;
    for (const cb of this.#onPacket) cb(p);
    const u = (o: number) => (dxl ? p.params[o] | (p.params[o + 1] << 8) : p.params[o]);
    const hdr = dxl ? 4 : 2;
    const now = this.#now();
    for (const s of this.#servos.values()) {
      if (!this.#alive(s)) continue;
      this.#tick(s);
      s.heardAt = now;
    }
    const bcast = p.id === proto.broadcastId;
    const live = (id: number) => {
      const s = this.#servos.get(id);
      return s && this.#alive(s) ? s : undefined;
    };
    switch (p.instruction) {
      case I.SYNC_WRITE: {
        if (!bcast) return;
        this.stats.syncWrites++;
        const len = u(dxl ? 2 : 1);
        for (let o = hdr; o + 1 + len <= p.params.length; o += 1 + len) {
          const s = live(p.params[o]);
          if (s) this.#store(s, u(0), p.params.subarray(o + 1, o + 1 + len));
        }
        return;
      }
      case I.SYNC_READ: {
        if (!bcast) return;
        this.stats.syncReads++;
        const addr = u(0);
        const len = u(dxl ? 2 : 1);
        for (const id of p.params.subarray(hdr)) {
          const s = live(id);
          if (s) this.#reply(s, this.#rules.status(s), s.mem.subarray(addr, addr + len));
        }
        return;
      }
      case EXTRA.BULK_READ: {
        if (!dxl || !bcast) return;
        this.stats.bulkReads++;
        for (let o = 0; o + 5 <= p.params.length; o += 5) {
          const s = live(p.params[o]);
          const addr = u(o + 1);
          const len = u(o + 3);
          if (s) this.#reply(s, this.#rules.status(s), s.mem.subarray(addr, addr + len));
        }
        return;
      }
      case EXTRA.BULK_WRITE: {
        if (!dxl || !bcast) return;
        this.stats.bulkWrites++;
        for (let o = 0; o + 5 <= p.params.length; ) {
          const s = live(p.params[o]);
          const addr = u(o + 1);
          const len = u(o + 3);
          if (s) this.#store(s, addr, p.params.subarray(o + 5, o + 5 + len));
          o += 5 + len;
        }
        return;
      }
      case EXTRA.ACTION: {
        const targets = bcast ? [...this.#servos.values()].filter((s) => this.#alive(s)) : [live(p.id)].filter((s): s is SimServo => !!s);
        for (const s of targets) {
          const reg = s.registered;
          s.registered = null;
          if (s.has("Registered_Instruction")) s.set("Registered_Instruction", 0);
          const err = reg ? this.#store(s, reg.address, reg.data) : dxl ? 2 | this.#rules.status(s) : this.#rules.status(s);
          if (!bcast) this.#reply(s, err, []);
        }
        return;
      }
      case I.PING: {
        // Broadcast ping: every servo answers, in id order.
        const targets = bcast ? [...this.#servos.values()].sort((a, b) => a.id - b.id) : [this.#servos.get(p.id)].filter((s): s is SimServo => !!s);
        for (const s of targets) this.#reply(s, this.#rules.status(s), dxl ? [s.model.modelNumber & 0xff, s.model.modelNumber >> 8, s.get("Firmware_Version")] : []);
        return;
      }
    }
    const s = bcast ? undefined : live(p.id);
    if (bcast) {
      // A broadcast WRITE / REG_WRITE is taken by every servo, without replies.
      if (p.instruction === I.WRITE || p.instruction === EXTRA.REG_WRITE) for (const t of this.#servos.values()) if (this.#alive(t)) this.#unicast(t, p, u, true);
      return;
    }
    if (s) this.#unicast(s, p, u, false);
  }

  #unicast(s: SimServo, p: ServoPacket, u: (o: number) => number, quiet: boolean): void {
    const I = this.#opts.protocol.INSTRUCTION;
    const dxl = this.#opts.protocol.name === "dynamixel";
    const answer = (err: number, data: ArrayLike<number> = []) => quiet || this.#reply(s, err, data);
    switch (p.instruction) {
      case I.READ: {
        const addr = u(0);
        const len = u(dxl ? 2 : 1);
        return void answer(this.#rules.status(s), s.mem.subarray(addr, addr + len));
      }
      case I.WRITE:
        return void answer(this.#store(s, u(0), p.params.subarray(dxl ? 2 : 1)));
      case EXTRA.REG_WRITE: {
        s.registered = { address: u(0), data: p.params.slice(dxl ? 2 : 1) };
        if (s.has("Registered_Instruction")) s.set("Registered_Instruction", 1);
        return void answer(this.#rules.status(s));
      }
      case EXTRA.REBOOT:
        if (!dxl) return;
        answer(this.#rules.status(s));
        this.stats.reboots++;
        this.#reboot(s);
        return;
      default:
        // Dynamixel: Instruction Error (2); Feetech servos ignore unknown instructions.
        if (dxl) answer(2 | this.#rules.status(s));
    }
  }

  /** e-Manual §Reboot: RAM returns to its defaults (torque off, errors cleared), EEPROM stays; silent while booting. */
  #reboot(s: SimServo): void {
    const eeprom = Object.values(s.model.registers).filter((r) => r.area === "EEPROM");
    const kept = eeprom.map((r) => s.mem.slice(r.address, r.address + r.size));
    const pos = Math.round(s.pos);
    s.reset(pos);
    eeprom.forEach((r, i) => s.mem.set(kept[i], r.address));
    s.faults = 0;
    s.registered = null;
    s.bootedAt = this.#now() + this.#opts.bootMs / 1000;
    s.heardAt = s.bootedAt;
  }
}
