/**
 * A servo bus simulator: the servo side of the Feetech SCS/STS or Dynamixel 2.0 protocol over any
 * ByteTransport (one end of a pty pair in tests, `rlft servo-sim` for people). Each simulated servo has the
 * model's register memory, answers ping / read / write / sync read and ignores what is not addressed to it,
 * as real servos do; with torque on it moves towards Goal_Position at a bounded speed. Faults can be injected:
 * silent servos, corrupted replies, a latched hardware error. Protocol sections are cited in the protocol files.
 */
import type { ByteTransport } from "../transport/ByteTransport.ts";
import type { ServoPacket, ServoProtocol } from "./ServoProtocol.ts";
import { decodeRegister, encodeRegister, register, type ServoModel } from "./ServoModel.ts";

/** Options of the simulator. */
export interface ServoBusSimOptions {
  protocol: ServoProtocol;
  model: ServoModel;
  ids: readonly number[];
  /** Start position of every servo, in ticks (default: the middle of the range). */
  startTicks?: number;
  /** Top speed with torque on, ticks/s (STS3215 ≈ 0.22 s/60° ≈ 3000 ticks/s). */
  maxSpeed?: number;
}

/** Counters, for tests and the CLI. */
export interface ServoBusSimStats {
  packets: number;
  syncWrites: number;
  syncReads: number;
  checksumErrors: number;
  goalWrites: number;
}

/** One simulated servo. */
interface SimServo {
  id: number;
  mem: Uint8Array;
  /** Exact position (ticks), integrated between packets. */
  pos: number;
  lastInstructionAt: number;
}

/** The simulator. */
export class ServoBusSim {
  readonly stats: ServoBusSimStats = { packets: 0, syncWrites: 0, syncReads: 0, checksumErrors: 0, goalWrites: 0 };
  /** Servos that stay silent (unplugged, wrong id, no power). */
  readonly silent = new Set<number>();
  /** The next N replies go out with a broken checksum/CRC. */
  corruptReplies = 0;
  /** Last goal each servo received, for tests. */
  readonly goals = new Map<number, number>();
  #opts: Required<ServoBusSimOptions>;
  #servos = new Map<number, SimServo>();
  #buf = new Uint8Array(0);
  #transport: ByteTransport;
  #off: () => void;
  #t0 = performance.now();
  #onPacket: ((p: ServoPacket) => void)[] = [];

  constructor(transport: ByteTransport, opts: ServoBusSimOptions) {
    this.#opts = { startTicks: Math.round(opts.model.ticksPerRev / 2), maxSpeed: 3000, ...opts };
    this.#transport = transport;
    for (const id of opts.ids) this.#servos.set(id, this.#makeServo(id));
    this.#off = transport.onData((c) => this.#onData(c));
  }

  /** Register value of servo `id`. */
  get(id: number, name: string): number {
    const s = this.#servo(id);
    this.#advance(s);
    const r = register(this.#opts.model, name);
    return decodeRegister(r, s.mem.subarray(r.address, r.address + r.size), this.#opts.model.byteOrder);
  }

  /** Sets a register of servo `id` (e.g. a hardware error, or a position to start from). */
  set(id: number, name: string, value: number): void {
    const s = this.#servo(id);
    const r = register(this.#opts.model, name);
    s.mem.set(encodeRegister(r, value, this.#opts.model.byteOrder, name), r.address);
    if (name === "Present_Position") s.pos = value;
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

  #makeServo(id: number): SimServo {
    const m = this.#opts.model;
    const s: SimServo = { id, mem: new Uint8Array(256), pos: this.#opts.startTicks, lastInstructionAt: this.#now() };
    const put = (name: string, v: number) => {
      if (!m.registers[name]) return;
      const r = m.registers[name];
      s.mem.set(encodeRegister(r, v, m.byteOrder, name), r.address);
    };
    put("Model_Number", m.modelNumber);
    put("ID", id);
    put("Min_Position_Limit", 0);
    put("Max_Position_Limit", m.ticksPerRev - 1);
    put("Present_Position", this.#opts.startTicks);
    put("Goal_Position", this.#opts.startTicks);
    put("Present_Voltage", 120);
    put("Present_Input_Voltage", 120);
    put("Present_Temperature", 30);
    put("Firmware_Version", 52);
    return s;
  }

  #now(): number {
    return (performance.now() - this.#t0) / 1000;
  }

  /** Integrates the motion since the last update: move towards the goal at top speed while torque is on. */
  #advance(s: SimServo): void {
    const m = this.#opts.model;
    const now = this.#now();
    const dt = Math.max(0, now - s.lastInstructionAt);
    const get = (name: string) => {
      const r = m.registers[name];
      return decodeRegister(r, s.mem.subarray(r.address, r.address + r.size), m.byteOrder);
    };
    const put = (name: string, v: number) => {
      const r = m.registers[name];
      if (r) s.mem.set(encodeRegister(r, Math.round(v), m.byteOrder, name), r.address);
    };
    // Dynamixel Bus Watchdog (e-Manual "Bus Watchdog(98)"): no instruction for N × 20 ms with torque on → stop, -1.
    const wd = m.registers.Bus_Watchdog ? get("Bus_Watchdog") : 0;
    let vel = 0;
    if (wd > 0 && get("Torque_Enable") === 1 && dt > wd * 0.02) {
      put("Bus_Watchdog", -1);
      put("Goal_Position", Math.round(s.pos));
    } else if (get("Torque_Enable") === 1) {
      const goal = get("Goal_Position");
      const step = this.#opts.maxSpeed * dt;
      const d = goal - s.pos;
      const moved = Math.abs(d) <= step ? d : Math.sign(d) * step;
      s.pos += moved;
      vel = dt > 0 ? moved / dt : 0;
    }
    put("Present_Position", s.pos);
    put("Present_Velocity", Math.round(vel / (m.velocityScale / ((2 * Math.PI) / m.ticksPerRev))));
    if (m.registers.Moving) put("Moving", Math.abs(vel) > 1 ? 1 : 0);
    s.lastInstructionAt = now;
  }

  #onData(chunk: Uint8Array): void {
    const next = new Uint8Array(this.#buf.length + chunk.length);
    next.set(this.#buf);
    next.set(chunk, this.#buf.length);
    this.#buf = next;
    for (;;) {
      const r = this.#opts.protocol.decode(this.#buf);
      if (r.kind === "need_more") break;
      this.#buf = this.#buf.subarray(r.bytes);
      if (r.kind === "corrupt") {
        // A real servo drops a packet whose checksum fails and stays silent.
        this.stats.checksumErrors++;
        continue;
      }
      if (r.kind === "packet") this.#handle(r.packet);
    }
  }

  #reply(id: number, error: number, data: ArrayLike<number>): void {
    if (this.silent.has(id)) return;
    const pkt = this.#opts.protocol.statusPacket(id, error, Uint8Array.from(data as ArrayLike<number>));
    if (this.corruptReplies > 0) {
      this.corruptReplies--;
      pkt[pkt.length - 1] ^= 0x5a;
    }
    void this.#transport.write(pkt).catch(() => undefined);
  }

  #handle(p: ServoPacket): void {
    const proto = this.#opts.protocol;
    const I = proto.INSTRUCTION;
    // Dynamixel status packets (0x55) are ours echoed back on a shared line: not for us.
    if (proto.name === "dynamixel" && p.instruction === 0x55) return;
    this.stats.packets++;
    for (const cb of this.#onPacket) cb(p);
    const wide = proto.name === "dynamixel"; // 2-byte address and length fields
    const u = (o: number) => (wide ? p.params[o] | (p.params[o + 1] << 8) : p.params[o]);
    const hdr = wide ? 4 : 2;
    for (const s of this.#servos.values()) if (!this.silent.has(s.id)) this.#advance(s);
    if (p.instruction === I.SYNC_WRITE && p.id === proto.broadcastId) {
      this.stats.syncWrites++;
      const addr = u(0);
      const len = u(wide ? 2 : 1);
      for (let o = hdr; o + 1 + len <= p.params.length; o += 1 + len) {
        const s = this.#servos.get(p.params[o]);
        if (!s || this.silent.has(s.id)) continue;
        this.#store(s, addr, p.params.subarray(o + 1, o + 1 + len));
      }
      return;
    }
    if (p.instruction === I.SYNC_READ && p.id === proto.broadcastId) {
      this.stats.syncReads++;
      const addr = u(0);
      const len = u(wide ? 2 : 1);
      for (const id of p.params.subarray(hdr)) {
        const s = this.#servos.get(id);
        if (s) this.#reply(id, this.#errorByte(s), s.mem.subarray(addr, addr + len));
      }
      return;
    }
    const s = this.#servos.get(p.id);
    if (!s) return;
    if (p.instruction === I.PING) {
      this.#reply(s.id, this.#errorByte(s), wide ? [this.#opts.model.modelNumber & 0xff, this.#opts.model.modelNumber >> 8, 52] : []);
    } else if (p.instruction === I.READ) {
      const addr = u(0);
      const len = u(wide ? 2 : 1);
      this.#reply(s.id, this.#errorByte(s), s.mem.subarray(addr, addr + len));
    } else if (p.instruction === I.WRITE) {
      const addr = u(0);
      const err = this.#store(s, addr, p.params.subarray(wide ? 2 : 1));
      this.#reply(s.id, err || this.#errorByte(s), []);
    } else {
      // Dynamixel: Instruction Error (2); Feetech servos ignore unknown instructions.
      if (wide) this.#reply(s.id, 2, []);
    }
  }

  /** Writes bytes into a servo's memory; returns a protocol error number (Dynamixel) or 0. */
  #store(s: SimServo, addr: number, data: Uint8Array): number {
    const m = this.#opts.model;
    const torqueReg = m.registers.Torque_Enable;
    const torqueOn = s.mem[torqueReg.address] === 1;
    const touched = Object.entries(m.registers).filter(([, r]) => r.address < addr + data.length && r.address + r.size > addr);
    if (touched.some(([, r]) => r.access === "R")) return 7; // Access Error
    if (m.name.startsWith("XL") && torqueOn && touched.some(([, r]) => r.area === "EEPROM")) return 7;
    s.mem.set(data, addr);
    const goal = m.registers.Goal_Position;
    if (goal.address >= addr && goal.address < addr + data.length) {
      this.stats.goalWrites++;
      this.goals.set(s.id, decodeRegister(goal, s.mem.subarray(goal.address, goal.address + goal.size), m.byteOrder));
    }
    if (m.registers.Bus_Watchdog && m.registers.Bus_Watchdog.address >= addr && m.registers.Bus_Watchdog.address < addr + data.length) s.lastInstructionAt = this.#now();
    return 0;
  }

  #errorByte(s: SimServo): number {
    const m = this.#opts.model;
    if (m.registers.Hardware_Error_Status) return s.mem[m.registers.Hardware_Error_Status.address] ? 0x80 : 0;
    return m.registers.Status ? s.mem[m.registers.Status.address] & 0x2f : 0;
  }
}
