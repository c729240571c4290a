/**
 * The shape of a servo's register table (control table / memory table): data, one file per model, each
 * citing the datasheet it was copied from. Protocol code never hard-codes an address.
 */

/** One register. */
export interface Register {
  /** Byte address in the table. */
  address: number;
  /** Width in bytes (1, 2 or 4). */
  size: 1 | 2 | 4;
  /** R: read-only; RW: read-write. EEPROM registers only change with torque off (and, on Feetech, Lock = 0). */
  access: "R" | "RW";
  /** EEPROM (kept across power cycles) or RAM. */
  area: "EEPROM" | "RAM";
  /** Sign encoding: two's complement (Dynamixel) or sign-magnitude with the sign at this bit (Feetech). */
  signed?: "twos" | { signBit: number };
  /** Unit as the datasheet gives it. */
  unit?: string;
}

/** A servo model: identity, resolution and the registers the drivers use. */
export interface ServoModel {
  /** Product name ("STS3215", "XL330-M288-T"). */
  name: string;
  /** Value of the Model_Number register, checked at configure. */
  modelNumber: number;
  /** Encoder ticks per revolution of the output shaft. */
  ticksPerRev: number;
  /** Byte order of multi-byte registers on the wire. */
  byteOrder: "little" | "big";
  /** rad/s per unit of Present_Velocity. */
  velocityScale: number;
  /** Register holding the effort reading (current or load) and its scale to the published effort unit. */
  effort: { register: string; scale: number; unit: string };
  /** The datasheet (title, revision/URL, section) the table was copied from. */
  source: string;
  /** Registers by the vendor's name (spaces → underscores). */
  registers: Record<string, Register>;
}

/** Reads a register value out of `bytes` (the register's own bytes). */
export function decodeRegister(reg: Register, bytes: Uint8Array, order: ServoModel["byteOrder"]): number {
  let v = 0;
  for (let i = 0; i < reg.size; i++) {
    const b = order === "little" ? bytes[i] : bytes[reg.size - 1 - i];
    v += b * 2 ** (8 * i);
  }
  if (reg.signed === "twos") {
    const half = 2 ** (8 * reg.size - 1);
    if (v >= half) v -= 2 * half;
  } else if (reg.signed) {
    const bit = 2 ** reg.signed.signBit;
    if (v >= bit) v = -(v % bit);
  }
  return v;
}

/** Encodes `value` into the register's bytes; rejects values the register cannot hold. */
export function encodeRegister(reg: Register, value: number, order: ServoModel["byteOrder"], name = "register"): Uint8Array {
  if (!Number.isInteger(value)) throw new RangeError(`${name}: expected an integer, got ${value}`);
  let raw = value;
  const bits = 8 * reg.size;
  if (reg.signed === "twos") {
    const half = 2 ** (bits - 1);
    if (value < -half || value >= half) throw new RangeError(`${name}: ${value} does not fit in ${bits} signed bits`);
    if (value < 0) raw = value + 2 ** bits;
  } else if (reg.signed) {
    const bit = 2 ** reg.signed.signBit;
    if (Math.abs(value) >= bit) throw new RangeError(`${name}: |${value}| must be below ${bit} (sign at bit ${reg.signed.signBit})`);
    raw = value < 0 ? bit + -value : value;
  } else if (value < 0 || value >= 2 ** bits) {
    throw new RangeError(`${name}: ${value} outside 0..${2 ** bits - 1}`);
  }
  const out = new Uint8Array(reg.size);
  for (let i = 0; i < reg.size; i++) {
    const b = Math.floor(raw / 2 ** (8 * i)) & 0xff;
    out[order === "little" ? i : reg.size - 1 - i] = b;
  }
  return out;
}

/** The register `name` of `model`, or an error listing what exists. */
export function register(model: ServoModel, name: string): Register {
  const r = model.registers[name];
  if (!r) throw new Error(`${model.name} has no register '${name}' (known: ${Object.keys(model.registers).join(", ")})`);
  return r;
}
