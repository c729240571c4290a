/**
 * A servo bus (Feetech or Dynamixel) over any ByteTransport: ping, read, write, sync read and sync write of
 * named registers, with retries on checksum errors and errors that say which servo and what to check.
 */
import type { ByteTransport } from "../transport/ByteTransport.ts";
import { PacketChannel } from "./PacketChannel.ts";
import type { ServoPacket, ServoProtocol, ServoStatus } from "./ServoProtocol.ts";
import { decodeRegister, encodeRegister, register, type ServoModel } from "./ServoModel.ts";
import { ServoError } from "./ServoError.ts";

/** Options of a bus. */
export interface ServoBusOptions {
  /**
   * Per-reply deadline. A servo at 1 Mbps answers within ~1 ms plus its Return_Delay_Time, but FTDI adapters
   * batch input for their latency_timer (16 ms by default; set it to 1, see docs/hardware.md).
   */
  timeoutMs?: number;
  /** Extra attempts after a checksum error or a missing reply (line noise happens on long cables). */
  retries?: number;
}

/** Counters for diagnostics. */
export interface ServoBusStats {
  transactions: number;
  timeouts: number;
  checksumErrors: number;
  retries: number;
}

/** A servo bus. */
export class ServoBus {
  readonly protocol: ServoProtocol;
  readonly model: ServoModel;
  readonly stats: ServoBusStats = { transactions: 0, timeouts: 0, checksumErrors: 0, retries: 0 };
  #ch: PacketChannel<ServoPacket>;
  #timeoutMs: number;
  #retries: number;

  constructor(transport: ByteTransport, protocol: ServoProtocol, model: ServoModel, opts: ServoBusOptions = {}) {
    this.protocol = protocol;
    this.model = model;
    this.#ch = new PacketChannel(transport, protocol.decode);
    this.#timeoutMs = opts.timeoutMs ?? 50;
    this.#retries = opts.retries ?? 2;
  }

  /** The port or address, for messages. */
  get port(): string {
    return this.#ch.transport.name;
  }

  /** Pings `id`; returns the model number (read from Model_Number when the protocol's ping does not carry it). */
  async ping(id: number): Promise<number> {
    const [s] = await this.#request(this.protocol.ping(id), [id], "ping", this.protocol.name === "dynamixel" ? 3 : 0);
    const m = this.protocol.pingModel(s);
    return m ?? this.read(id, "Model_Number");
  }

  /** Reads one register. */
  async read(id: number, name: string): Promise<number> {
    const reg = register(this.model, name);
    const [s] = await this.#request(this.protocol.read(id, reg.address, reg.size), [id], `read ${name}`, reg.size);
    return decodeRegister(reg, s.data, this.model.byteOrder);
  }

  /** Writes one register and waits for the servo's acknowledgement. */
  async write(id: number, name: string, value: number): Promise<void> {
    const reg = register(this.model, name);
    await this.#request(this.protocol.write(id, reg.address, encodeRegister(reg, value, this.model.byteOrder, name)), [id], `write ${name}=${value}`, 0);
  }

  /**
   * Reads the contiguous block covering `names` from every id in one sync read; returns values[idIndex][nameIndex].
   * A missing or corrupt reply (after retries) throws a ServoError naming the servos.
   */
  async syncRead(ids: readonly number[], names: readonly string[]): Promise<number[][]> {
    const regs = names.map((n) => register(this.model, n));
    const start = Math.min(...regs.map((r) => r.address));
    const end = Math.max(...regs.map((r) => r.address + r.size));
    const statuses = await this.#request(this.protocol.syncRead(ids, start, end - start), ids, `sync read ${names.join(", ")}`, end - start);
    return statuses.map((s) => regs.map((r) => decodeRegister(r, s.data.subarray(r.address - start, r.address - start + r.size), this.model.byteOrder)));
  }

  /**
   * Like `syncRead`, but a status error byte (a servo reporting a fault) does not throw: each servo's error byte
   * comes back next to its values, so the caller can name the joint and act.
   */
  async syncReadStatus(ids: readonly number[], names: readonly string[]): Promise<{ values: number[][]; errors: number[] }> {
    const regs = names.map((n) => register(this.model, n));
    const start = Math.min(...regs.map((r) => r.address));
    const end = Math.max(...regs.map((r) => r.address + r.size));
    const statuses = await this.#request(this.protocol.syncRead(ids, start, end - start), ids, `sync read ${names.join(", ")}`, end - start, true);
    return {
      values: statuses.map((s) => regs.map((r) => decodeRegister(r, s.data.subarray(r.address - start, r.address - start + r.size), this.model.byteOrder))),
      errors: statuses.map((s) => s.error),
    };
  }

  /** Reads one register and the servo's status error byte, without throwing on the error byte. */
  async readStatus(id: number, name: string): Promise<{ value: number; error: number }> {
    const reg = register(this.model, name);
    const [s] = await this.#request(this.protocol.read(id, reg.address, reg.size), [id], `read ${name}`, reg.size, true);
    return { value: decodeRegister(reg, s.data, this.model.byteOrder), error: s.error };
  }

  /**
   * Dynamixel REBOOT (e-Manual Protocol 2.0 §Reboot) of servo `id`, then waits until it answers a ping again
   * (within `bootTimeoutMs`). Clears a hardware-error shutdown; torque is off afterwards.
   */
  async reboot(id: number, bootTimeoutMs = 2000): Promise<void> {
    if (!this.protocol.reboot) throw new ServoError("BAD_REPLY", [id], `${this.protocol.name} servos have no reboot instruction — power-cycle servo ${id} to clear its fault`);
    await this.#request(this.protocol.reboot(id), [id], "reboot", 0, true);
    const deadline = Date.now() + bootTimeoutMs;
    for (;;) {
      try {
        await this.ping(id);
        return;
      } catch (e) {
        if (Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  }

  /** Writes `name` on every servo in one broadcast packet (no replies). */
  async syncWrite(name: string, values: readonly { id: number; value: number }[]): Promise<void> {
    const reg = register(this.model, name);
    const entries = values.map((v) => ({ id: v.id, data: encodeRegister(reg, v.value, this.model.byteOrder, `${name} of id ${v.id}`) }));
    this.stats.transactions++;
    await this.#ch.transact(this.protocol.syncWrite(reg.address, reg.size, entries), { replies: 0, timeoutMs: 0 });
  }

  /** Stops listening; the owner closes the transport. */
  dispose(): void {
    this.#ch.dispose();
  }

  /** Sends `packet` and waits for one status of `dataLength` bytes from each id (a late reply to an earlier request has another length or id and is skipped). */
  async #request(packet: Uint8Array, ids: readonly number[], what: string, dataLength: number, tolerateErrors = false): Promise<ServoStatus[]> {
    let byId = new Map<number, ServoStatus>();
    let corrupt: string[] = [];
    for (let attempt = 0; attempt <= this.#retries; attempt++) {
      if (attempt > 0) this.stats.retries++;
      this.stats.transactions++;
      const replies = await this.#ch.transact(packet, {
        replies: ids.length,
        timeoutMs: this.#timeoutMs,
        // Only status packets of the servos asked count (Dynamixel marks them 0x55; Feetech cannot tell).
        accept: (p) => {
          const s = this.protocol.status(p);
          return s !== null && ids.includes(s.id) && s.data.length === dataLength;
        },
      });
      byId = new Map();
      corrupt = [];
      for (const r of replies) {
        if (r.ok) {
          const s = this.protocol.status(r.packet)!;
          byId.set(s.id, s);
        } else if (r.error === "corrupt") corrupt.push(r.detail);
      }
      if (byId.size === ids.length) break;
    }
    const missing = ids.filter((id) => !byId.has(id));
    if (missing.length && corrupt.length) {
      this.stats.checksumErrors++;
      throw new ServoError(
        "CHECKSUM",
        missing,
        `${this.protocol.name} bus ${this.port}: ${what}: ${corrupt.join("; ")} after ${this.#retries + 1} attempts — noise on the bus: check the cable and connectors, the power supply, and that only one program uses the port`,
      );
    }
    if (missing.length) {
      this.stats.timeouts++;
      const fix = `check that servo id${missing.length > 1 ? "s" : ""} ${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} powered and daisy-chained, the baud rate (${this.model.name}) and that the ids are right (list what answers: rlft servo-scan --bus ${this.protocol.name} --port ${this.port})`;
      throw new ServoError("NO_REPLY", missing, `${this.protocol.name} servo ${missing.join(", ")} on ${this.port} did not answer ${what} — ${fix}`);
    }
    return ids.map((id) => {
      const s = byId.get(id)!;
      const text = this.protocol.errorText(s.error);
      if (text && !tolerateErrors) throw new ServoError("SERVO_ERROR", [id], `${this.#who(id)} reports: ${text} (during ${what}) — check the supply voltage and the load; power-cycle the servo to clear a latched error`);
      return s;
    });
  }

  #who(id: number): string {
    return `${this.protocol.name} servo ${id} (${this.model.name}) on ${this.port}`;
  }
}
