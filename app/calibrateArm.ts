/**
 * `rlft calibrate arm`: the servo-arm routine on a terminal. The motor bus comes from JOINT_SOURCES
 * (one entry per bus kind); the prompts are read from stdin, or confirmed automatically with --yes.
 */
import { createInterface } from "node:readline";
import type { JointPositionSource } from "../calibration/JointPositionSource.ts";
import { SimServoArm } from "../calibration/SimServoArm.ts";
import { runArmCalibration, type CalibrationPrompter, type SweepRow } from "../calibration/runArmCalibration.ts";
import { jointLimits, saveArmCalibration, type ArmCalibration } from "../calibration/ArmCalibration.ts";
import { ServoJointSource } from "../hardware/servo/ServoJointSource.ts";
import { openServoBus } from "../hardware/servo/openServoBus.ts";
import { zeroAndDirection } from "../hardware/servo/servoCalibration.ts";

/** Options a bus needs to open. */
export interface JointSourceOptions {
  port?: string;
  baud?: number;
  ids?: number[];
  motors?: string[];
  /** Servo model (feetech: sts3215; dynamixel: xl330, xl430). */
  model?: string;
}

/** The SO-100/SO-101 and Koch joint names (LeRobot's), ids 1–6. */
export const DEFAULT_ARM_MOTORS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];

/** A Feetech or Dynamixel bus as a calibration source: raw Present_Position, torque off for the person. */
async function servoSource(bus: "feetech" | "dynamixel", o: JointSourceOptions): Promise<JointPositionSource> {
  if (!o.port) throw new Error(`--source ${bus} needs --port (the bus adapter, e.g. /dev/serial/by-id/usb-...; try one without hardware: rlft servo-sim --bus ${bus})`);
  const ids = o.ids ?? DEFAULT_ARM_MOTORS.map((_, i) => i + 1);
  const motors = o.motors ?? (ids.length === DEFAULT_ARM_MOTORS.length ? DEFAULT_ARM_MOTORS : ids.map((id) => `motor_${id}`));
  if (motors.length !== ids.length) throw new Error(`--motors names ${motors.length} joints but --ids has ${ids.length} servos: give one name per id, in the same order`);
  const model = o.model ?? (bus === "feetech" ? "sts3215" : "xl330");
  return ServoJointSource.open({
    openBus: () => openServoBus({ bus, port: o.port!, baudRate: o.baud ?? 1_000_000, model, timeoutMs: 50, retries: 2 }),
    joints: motors.map((name, i) => ({ name, id: ids[i] })),
  });
}

/** Bus kinds `--source` accepts. Real buses register here (hardware/feetech, hardware/dynamixel). */
export const JOINT_SOURCES: Record<string, (o: JointSourceOptions) => Promise<JointPositionSource>> = {
  sim: async () => new SimServoArm(undefined, { readsPerJoint: 16 }),
  feetech: (o) => servoSource("feetech", o),
  dynamixel: (o) => servoSource("dynamixel", o),
};

/** Opens the named bus; an unknown kind names the ones there are. */
export async function openJointSource(kind: string, o: JointSourceOptions): Promise<JointPositionSource> {
  const make = JOINT_SOURCES[kind];
  if (!make) {
    throw new Error(`--source ${kind}: no such motor bus in this build (available: ${Object.keys(JOINT_SOURCES).join(", ")}). The Feetech and Dynamixel buses register in app/calibrateArm.ts JOINT_SOURCES`);
  }
  return make(o);
}

/** A terminal prompter: Enter confirms; the sweep table redraws in place on a TTY, once a second otherwise. */
export function terminalPrompter(opts: { yes: boolean; sweepSeconds: number; out?: NodeJS.WriteStream }): CalibrationPrompter & { close(): void } {
  const out = opts.out ?? process.stderr;
  const rl = opts.yes ? null : createInterface({ input: process.stdin, output: out });
  let drawn = 0;
  let lastPrint = 0;
  let step = 0;
  return {
    async confirm(message: string) {
      out.write(`\n${message}\n`);
      drawn = 0;
      const s = step++;
      if (!rl) {
        if (s > 0) await new Promise((r) => setTimeout(r, opts.sweepSeconds * 1000));
        return;
      }
      await new Promise<void>((r) => rl.question("", () => r()));
    },
    progress(rows: SweepRow[]) {
      const now = Date.now();
      if (!out.isTTY && now - lastPrint < 1000) return;
      lastPrint = now;
      const lines = rows.map((r) => `${r.name.padEnd(16)} min ${String(r.min).padStart(5)}  pos ${String(r.pos).padStart(5)}  max ${String(r.max).padStart(5)}`);
      if (out.isTTY && drawn > 0) out.write(`\x1b[${drawn}A`);
      out.write(lines.map((l) => (out.isTTY ? `${l}\x1b[K` : l)).join("\n") + "\n");
      drawn = out.isTTY ? lines.length : 0;
    },
    close: () => rl?.close(),
  };
}

/** The simulated arm's "person": moves it to the middle on the first prompt and sweeps it on the second. */
function simulatedPerson(arm: SimServoArm, inner: CalibrationPrompter): CalibrationPrompter {
  let step = 0;
  return {
    async confirm(message: string) {
      const s = step++;
      arm.setPhase(s === 0 ? "middle" : "sweep");
      if (s === 0) return inner.confirm(message);
      await Promise.all([inner.confirm(message), (async () => { while (!arm.sweepDone) await new Promise((r) => setTimeout(r, 5)); })()]);
    },
    progress: (rows) => inner.progress(rows),
  };
}

/** Options of armCommand. */
export interface ArmCommandOptions extends JointSourceOptions {
  robot: string;
  source: string;
  out: string;
  fullTurn?: string[];
  yes?: boolean;
  sweepSeconds?: number;
  say?: (line: string) => void;
}

/** Runs the routine, writes the file, prints the joint limits it implies. */
export async function armCommand(o: ArmCommandOptions): Promise<ArmCalibration> {
  const say = o.say ?? console.log;
  const src = await openJointSource(o.source, o);
  const term = terminalPrompter({ yes: o.yes ?? false, sweepSeconds: o.sweepSeconds ?? 10 });
  const ui = src instanceof SimServoArm ? simulatedPerson(src, o.yes ? { confirm: async (m) => void process.stderr.write(`\n${m}\n`), progress: (r) => term.progress(r) } : term) : term;
  try {
    const fullTurn = o.fullTurn ?? (src.motors.includes("wrist_roll") ? ["wrist_roll"] : []);
    const cal = await runArmCalibration(src, ui, { robot: o.robot, fullTurn, ids: o.ids });
    saveArmCalibration(o.out, cal);
    for (const [name, j] of Object.entries(cal.joints)) {
      const [lo, hi] = jointLimits(j);
      say(`${name.padEnd(16)} homing_offset ${String(j.homing_offset).padStart(6)}  range ${j.range_min}..${j.range_max}  limits ${((lo * 180) / Math.PI).toFixed(1)}°..${((hi * 180) / Math.PI).toFixed(1)}°`);
    }
    say(`wrote ${o.out}; name it in the launch file as calibration: {arm: ${o.out}}: the servo driver then takes each joint's zero, direction and range from it (and every episode records it)`);
    say("equivalent launch-file joint entries (zero_ticks = raw ticks at 0 rad; limits = the calibrated range):");
    for (const line of launchJointLines(cal, o.ids)) say(line);
    return cal;
  } finally {
    term.close();
    await src.close?.();
  }
}

/** The `driver.joints` lines a calibration implies, for people who keep everything in the launch file. */
export function launchJointLines(cal: ArmCalibration, ids?: readonly number[]): string[] {
  return Object.entries(cal.joints).map(([name, j], i) => {
    const { zeroTicks, direction } = zeroAndDirection(j);
    const [lo, hi] = jointLimits(j);
    const id = j.id ?? ids?.[i] ?? i + 1;
    return `    - {name: ${name}, id: ${id}, zero_ticks: ${zeroTicks}, direction: ${direction}, lower: ${lo.toFixed(3)}, upper: ${hi.toFixed(3)}}`;
  });
}
