/**
 * What differs between servo-bus protocols (Feetech SCS/STS, Dynamixel 2.0): packet bytes, how replies are
 * cut from the stream and what a status error byte means. ServoBus does the rest, the same for both.
 */
import type { PacketDecoder } from "./PacketChannel.ts";

/** A framed packet: an instruction (to a servo) or a status (from one). */
export interface ServoPacket {
  id: number;
  /** Instruction code; for Dynamixel status packets 0x55. Feetech status packets carry the error byte here. */
  instruction: number;
  /** Parameters, unstuffed. For Dynamixel status packets params[0] is the error byte. */
  params: Uint8Array;
}

/** A decoded status packet. */
export interface ServoStatus {
  id: number;
  error: number;
  data: Uint8Array;
}

/** One protocol's packet builders and parsers. */
export interface ServoProtocol {
  readonly name: "feetech" | "dynamixel";
  readonly broadcastId: number;
  readonly decode: PacketDecoder<ServoPacket>;
  /** Builds an instruction packet. */
  packet(id: number, instruction: number, params: Uint8Array): Uint8Array;
  /** Builds a status packet (the simulator's side). */
  statusPacket(id: number, error: number, data: Uint8Array): Uint8Array;
  /** Turns a framed reply into id, error byte and data; null for a packet that is not a status. */
  status(p: ServoPacket): ServoStatus | null;
  ping(id: number): Uint8Array;
  read(id: number, address: number, length: number): Uint8Array;
  write(id: number, address: number, data: Uint8Array): Uint8Array;
  syncRead(ids: readonly number[], address: number, length: number): Uint8Array;
  syncWrite(address: number, length: number, entries: readonly { id: number; data: Uint8Array }[]): Uint8Array;
  /** REBOOT instruction (Dynamixel 2.0 only; Feetech servos have none: power-cycle them). */
  reboot?(id: number): Uint8Array;
  /** Model number in a ping reply (Dynamixel sends it; Feetech needs a read of Model_Number). */
  pingModel(s: ServoStatus): number | null;
  /** Words for the error bits of a status byte, empty when there is no error. */
  errorText(error: number): string;
  /** Instruction codes, for the simulator. */
  readonly INSTRUCTION: Readonly<Record<"PING" | "READ" | "WRITE" | "SYNC_READ" | "SYNC_WRITE", number>>;
}

/**
 * The bits set in a status or error byte: those `table` names (bit index, name), in the table's order, and the
 * others (bits the vendor's manual leaves undefined, which a servo that sets one still gets reported for).
 */
export function setBits(value: number, table: readonly (readonly [bit: number, name: string])[]): { named: (readonly [number, string])[]; unnamed: number[] } {
  const named = table.filter(([bit]) => value & (1 << bit));
  const unnamed = [0, 1, 2, 3, 4, 5, 6, 7].filter((bit) => value & (1 << bit) && !table.some(([b]) => b === bit));
  return { named, unnamed };
}
