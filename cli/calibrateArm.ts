/**
 * `rlft calibrate arm`: the servo-arm routine on a terminal. The motor bus comes from JOINT_SOURCES
 * (one entry per bus kind); the prompts are read from stdin, or confirmed automatically with --yes.
 */
import { createInterface } from "node:readline";
import type { JointPositionSource } from "../calibration/JointPositionSource.ts";
import { SimServoArm } from "../calibration/SimServoArm.ts";
import { runArmCalibration, type CalibrationPrompter, type SweepRow } from "../calibration/runArmCalibration.ts";
import { jointLimits, saveArmCalibration, type ArmCalibration } from "../calibration/ArmCalibration.ts";

/** Options a bus needs to open. */
export interface JointSourceOptions {
  port?: string;
  baud?: number;
  ids?: number[];
  motors?: string[];
}

/** Bus kinds `--source` accepts. Real buses register here (hardware/feetech, hardware/dynamixel). */
export const JOINT_SOURCES: Record<string, (o: JointSourceOptions) => Promise<JointPositionSource>> = {
  sim: async () => new SimServoArm(undefined, { readsPerJoint: 16 }),
};

/** Opens the named bus; an unknown kind names the ones there are. */
export async function openJointSource(kind: string, o: JointSourceOptions): Promise<JointPositionSource> {
  const make = JOINT_SOURCES[kind];
  if (!make) {
    throw new Error(`--source ${kind}: no such motor bus in this build (available: ${Object.keys(JOINT_SOURCES).join(", ")}). The Feetech and Dynamixel buses register in cli/calibrateArm.ts JOINT_SOURCES`);
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
    say(`wrote ${o.out}; name it in the launch file as calibration: {arm: ${o.out}} so every episode records it`);
    return cal;
  } finally {
    term.close();
    await src.close?.();
  }
}
