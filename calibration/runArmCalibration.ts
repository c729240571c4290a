/**
 * The servo-arm calibration routine (LeRobot's "middle, then full range"):
 *   1. torque off; the person moves every joint to the middle of its range and confirms;
 *      homing offsets are set so that pose reads half a turn (0 rad);
 *   2. the person moves every joint through its whole range while positions stream; min and max are kept
 *      until they confirm. Joints that turn freely (a wrist roll) get the whole turn.
 * People-facing text comes in through a CalibrationPrompter, so the CLI asks on a terminal and tests script it.
 */
import type { JointPositionSource } from "./JointPositionSource.ts";
import { type ArmCalibration, type JointCalibration, halfTurnHomings } from "./ArmCalibration.ts";

/** One row of the live table shown during the sweep (homed ticks). */
export interface SweepRow {
  name: string;
  min: number;
  pos: number;
  max: number;
}

/** How the routine talks to a person. */
export interface CalibrationPrompter {
  /** Shows an instruction and resolves when the person confirms (Enter). */
  confirm(message: string): Promise<void>;
  /** Live positions while the person sweeps the joints. */
  progress(rows: SweepRow[]): void;
}

/** Options of runArmCalibration. */
export interface ArmCalibrationOptions {
  robot: string;
  /** Joints that rotate without end stops: their range is the whole turn. */
  fullTurn?: readonly string[];
  /** Sampling period during the sweep (default 20 ms). */
  periodMs?: number;
  /** A joint whose sweep spans less than this fraction of a turn is an error (default 0.05 ≈ 18°). */
  minSpanTurns?: number;
  /** Ids written into the file, in motor order. */
  ids?: readonly number[];
  /** Clock (tests inject one); returns an ISO time. */
  now?: () => string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readAveraged(src: JointPositionSource, n: number): Promise<number[]> {
  const acc = src.motors.map(() => 0);
  for (let k = 0; k < n; k++) {
    const p = await src.readPositions();
    if (p.length !== src.motors.length) throw new Error(`The motor bus returned ${p.length} positions for ${src.motors.length} motors (${src.motors.join(", ")}): is every servo answering?`);
    p.forEach((v, i) => (acc[i] += v / n));
  }
  return acc;
}

/** Runs the routine against a bus and returns the calibration (the caller saves it). */
export async function runArmCalibration(src: JointPositionSource, ui: CalibrationPrompter, opts: ArmCalibrationOptions): Promise<ArmCalibration> {
  const names = src.motors;
  const fullTurn = new Set(opts.fullTurn ?? []);
  for (const j of fullTurn) if (!names.includes(j)) throw new Error(`--full-turn names "${j}", which is not a motor of this arm (motors: ${names.join(", ")})`);
  await src.disableTorque?.();
  // The gripper is the exception: its 0 is the closed jaw (launch/so100.yaml's limits, the simulated SO-101's model).
  await ui.confirm(`Move ${opts.robot} to the MIDDLE of its range of motion (every joint halfway between its limits; a gripper closed), then press Enter.`);
  const middle = await readAveraged(src, 5);
  const homing = halfTurnHomings(middle, src.resolution);

  const homed = (raw: number[]) => raw.map((r, i) => Math.round(r) - homing[i]);
  const first = homed(await readAveraged(src, 1));
  const min = [...first];
  const max = [...first];
  let sweeping = true;
  const done = ui
    .confirm(`Move EVERY joint through its ENTIRE range of motion, one after the other, then press Enter.${fullTurn.size ? ` (${[...fullTurn].join(", ")}: full turn, skip)` : ""}`)
    .finally(() => (sweeping = false));
  let readError: Error | null = null;
  while (sweeping) {
    try {
      const pos = homed(await src.readPositions());
      pos.forEach((p, i) => {
        if (p < min[i]) min[i] = p;
        if (p > max[i]) max[i] = p;
      });
      ui.progress(names.map((name, i) => ({ name, min: min[i], pos: pos[i], max: max[i] })));
    } catch (e) {
      readError = e as Error;
      break;
    }
    await sleep(opts.periodMs ?? 20);
  }
  await done;
  if (readError) throw new Error(`Reading positions failed during the sweep: ${readError.message}`, { cause: readError });

  const minSpan = opts.minSpanTurns ?? 0.05;
  const joints: Record<string, JointCalibration> = {};
  const tooSmall: string[] = [];
  names.forEach((name, i) => {
    const res = src.resolution[i];
    let lo = min[i];
    let hi = max[i];
    if (fullTurn.has(name)) {
      lo = 0;
      hi = res - 1;
    } else if ((hi - lo) / res < minSpan) {
      tooSmall.push(`${name} (${(((hi - lo) / res) * 360).toFixed(0)}°)`);
    }
    joints[name] = { ...(opts.ids ? { id: opts.ids[i] } : {}), drive_mode: 0, homing_offset: homing[i], range_min: lo, range_max: hi, resolution: res };
  });
  if (tooSmall.length > 0) {
    throw new Error(`These joints barely moved during the sweep: ${tooSmall.join(", ")}. Run the calibration again and move each through its whole range (or pass --full-turn for joints without end stops)`);
  }
  return { format: "rlft-arm-calibration", version: 1, robot: opts.robot, created_at: (opts.now ?? (() => new Date().toISOString()))(), joints };
}
