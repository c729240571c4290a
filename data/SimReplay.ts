/**
 * `rlft replay <episode> --sim`: rebuild the episode's start state in MuJoCo (from the seed and physics settings in
 * its metadata, or from its first observation when it has no seed), drive the sim with the recorded executed
 * commands (/joint_command) at their recorded times, and measure how far the simulated joints drift from the
 * recorded /joint_states. A sim log replays to zero divergence (same physics, same commands); a real log's
 * divergence is the sim-to-real gap of that episode.
 */
import { ArmSim, SIM_ROBOT_MODELS } from "../sim/ArmSim.ts";
import { ROBOT_TASKS, SIM_ROBOTS, type SimRobotName, type TaskName } from "../sim/tasks.ts";
import { readEpisodeTrace, succeeded, type EpisodeTrace } from "./EpisodeTrace.ts";
import type { LinePlotSpec, Panel } from "./linePlot.ts";

/** The robot model the simulator implements by default (rlft_arm5; SIM_ROBOTS lists them all). */
export const SIM_ROBOT = "rlft_arm5";

/** Thrown when a log cannot be replayed in the simulator (another robot model, unknown task). */
export class SimReplayError extends Error {
  readonly code = "RLFT_SIM_REPLAY";
  constructor(message: string) {
    super(message);
    this.name = "SimReplayError";
  }
}

/** Divergence at one recorded joint state. */
export interface DivergenceRow {
  t: number;
  /** |q_sim − q_recorded| per joint, in joint units (rad; rlft_arm5's gripper opening: m). */
  joints: number[];
  max: number;
  /** Largest |sim − recorded| over the non-joint observation values (object and end-effector positions, m). */
  object: number;
  simQ: number[];
  recQ: number[];
}

/** What a sim replay found. */
export interface SimReplayResult {
  file: string;
  task: TaskName;
  /** The simulated robot the log was recorded on. */
  robot: SimRobotName;
  jointNames: string[];
  /** Unit of each joint ("rad", or "m" for rlft_arm5's gripper opening). */
  jointUnits: string[];
  /** "seed": reset from the recorded seed; "observation": the log had no seed, started from its first observation. */
  startFrom: "seed" | "observation";
  rows: DivergenceRow[];
  perJoint: { name: string; max: number; mean: number; final: number }[];
  maxDivergence: number;
  commands: number;
  recordedSuccess: boolean;
  recordedOutcome: string;
  /** True when the sim reached the task's success at some recorded tick. */
  simSuccess: boolean;
  /** Episode time of the first tick where the sim was successful. */
  simSuccessAt?: number;
}

/** Throws {@link SimReplayError} unless the log was recorded on a simulated robot model with a task it has. */
export function assertSimReplayable(tr: EpisodeTrace): { robot: SimRobotName; task: TaskName } {
  const robot = (tr.info.robot ?? "unknown") as SimRobotName;
  if (!SIM_ROBOTS.includes(robot)) {
    throw new SimReplayError(
      `${tr.file} was recorded on robot '${robot}'${tr.jointNames.length ? ` (joints ${tr.jointNames.join(", ")})` : ""}; --sim replays only ${SIM_ROBOTS.join(" and ")} logs, the models in sim/ — ` +
        `use --policy for an open-loop evaluation or --through-nodes to feed the log to nodes instead`,
    );
  }
  const names = [...SIM_ROBOT_MODELS[robot].jointNames] as string[];
  if (tr.jointNames.length && tr.jointNames.join(",") !== names.join(",")) {
    throw new SimReplayError(`${tr.file} claims robot ${robot} but its joints are ${tr.jointNames.join(", ")} (expected ${names.join(", ")}); it cannot be replayed in sim`);
  }
  const task = tr.info.task as TaskName;
  const tasks = Object.keys(ROBOT_TASKS[robot]);
  if (!tasks.includes(task)) throw new SimReplayError(`${tr.file} records task '${tr.info.task}'; the simulated ${robot} has ${tasks.join(", ")}`);
  if (!tr.ticks.some((k) => k.q.length)) throw new SimReplayError(`${tr.file} has no /joint_states to compare against`);
  return { robot, task };
}

const pick = (names: string[], values: number[], key: string): number => values[names.indexOf(key)];

/** Replays `file` in the simulator. */
export async function replayInSim(file: string): Promise<SimReplayResult> {
  const tr = await readEpisodeTrace(file);
  const { robot, task } = assertSimReplayable(tr);
  const controlHz = Number(tr.info.control_hz ?? 10);
  const physicsDt = Number(tr.info.physics_dt ?? SIM_ROBOT_MODELS[robot].defaultPhysicsDt(controlHz));
  const sim = await ArmSim.create({ robot, task, controlHz, physicsDt, randomizePhysics: tr.info.randomize_physics === "true" });
  try {
    const dtNs = BigInt(Math.round(physicsDt * 1e9));
    const seed = Number(tr.info.seed);
    // Seed -1 (or none) marks a log without a seed, e.g. imported from a LeRobot dataset.
    const startFrom: SimReplayResult["startFrom"] = Number.isInteger(seed) && seed >= 0 && tr.info.seed !== "" ? "seed" : "observation";
    let simNs = tr.startNs;
    let states = tr.ticks.filter((k) => k.q.length);
    if (startFrom === "seed") sim.reset(seed);
    else {
      const first = states[0];
      sim.reset(0);
      const n = tr.obsNames;
      const o = first.obs;
      const obj = task === "push_cube" || task === "pick_place" ? ["cube.x", "cube.y"] : task === "peg_insert" ? ["peg.x", "peg.y"] : null;
      const tgt = task === "peg_insert" ? ["hole.x", "hole.y"] : ["target.x", "target.y"];
      const get = (k: string) => pick(n, o, k);
      sim.setState({
        q: first.q,
        object: obj && o.length ? [get(obj[0]), get(obj[1])] : undefined,
        target: o.length && Number.isFinite(get(tgt[0])) ? [get(tgt[0]), get(tgt[1])] : undefined,
      });
      simNs = first.timeNs;
      states = states.slice(1);
    }
    const rows: DivergenceRow[] = [];
    let ci = 0;
    let simSuccessAt: number | undefined;
    const cmds = tr.commands;
    const advanceTo = (ns: bigint) => {
      // Commands take effect at their log time, to the physics step.
      while (simNs + dtNs <= ns) {
        while (ci < cmds.length && cmds[ci].timeNs <= simNs) sim.setCommand(cmds[ci++].position);
        sim.mujoco.mj_step(sim.model, sim.data);
        simNs += dtNs;
      }
    };
    const jointDims = new Set(tr.obsNames.filter((nm) => nm.startsWith("q.")));
    for (const k of states) {
      advanceTo(k.timeNs);
      const simQ = sim.jointState().position;
      const joints = simQ.map((v, i) => Math.abs(v - k.q[i]));
      let object = 0;
      if (k.obs.length) {
        const so = sim.observation();
        tr.obsNames.forEach((nm, i) => {
          if (jointDims.has(nm)) return;
          const j = so.names.indexOf(nm);
          if (j >= 0) object = Math.max(object, Math.abs(so.values[j] - k.obs[i]));
        });
      }
      rows.push({ t: k.t, joints, max: Math.max(...joints), object, simQ, recQ: k.q });
      if (simSuccessAt === undefined && sim.status().success) simSuccessAt = k.t;
    }
    const names = [...sim.jointNames];
    const perJoint = names.map((name, j) => {
      const d = rows.map((r) => r.joints[j]);
      return { name, max: Math.max(0, ...d), mean: d.reduce((a, b) => a + b, 0) / Math.max(1, d.length), final: d.at(-1) ?? 0 };
    });
    return {
      file,
      task,
      robot,
      jointNames: names,
      jointUnits: [...sim.jointUnits],
      startFrom,
      rows,
      perJoint,
      maxDivergence: Math.max(0, ...rows.map((r) => r.max)),
      commands: cmds.length,
      recordedSuccess: succeeded(tr),
      recordedOutcome: tr.outcome,
      simSuccess: simSuccessAt !== undefined,
      simSuccessAt,
    };
  } finally {
    sim.close();
  }
}

/** The divergence table: about `rows` evenly spaced lines plus the last one. */
export function formatDivergenceTable(r: SimReplayResult, rows = 10): string {
  const short = r.jointNames.map((n) => n.slice(0, 11));
  const head = ["t (s)", "max |Δq|", ...short, "object (m)"];
  const fmt = (x: number) => x.toExponential(2);
  const step = Math.max(1, Math.ceil(r.rows.length / rows));
  const chosen = r.rows.filter((_, i) => i % step === 0 || i === r.rows.length - 1);
  const lines = [head.map((h) => h.padStart(11)).join(" ")];
  for (const row of chosen) lines.push([row.t.toFixed(2), fmt(row.max), ...row.joints.map(fmt), fmt(row.object)].map((c) => c.padStart(11)).join(" "));
  lines.push(["max", fmt(r.maxDivergence), ...r.perJoint.map((p) => fmt(p.max)), fmt(Math.max(0, ...r.rows.map((x) => x.object)))].map((c) => c.padStart(11)).join(" "));
  return lines.join("\n");
}

/** Plot of recorded vs simulated trace per joint, then the largest divergence over time with `tolerance` drawn. */
export function plotSimReplay(r: SimReplayResult, tolerance?: number): LinePlotSpec {
  const t = r.rows.map((x) => x.t);
  const panels: Panel[] = r.jointNames.map((name, j) => ({
    title: `${name} (${r.jointUnits[j]})`,
    series: [
      { name: "recorded", x: t, y: r.rows.map((x) => x.recQ[j]) },
      { name: "sim replay", x: t, y: r.rows.map((x) => x.simQ[j]), dashed: true },
    ],
  }));
  panels.push({
    title: "max joint divergence |q_sim - q_rec|",
    series: [{ name: "max |dq|", x: t, y: r.rows.map((x) => x.max), color: "tab:red" }],
    hlines: tolerance !== undefined ? [{ y: tolerance, label: `tolerance ${tolerance}` }] : undefined,
  });
  return { panels, title: `sim replay: ${r.file.split("/").at(-1)} (${r.task})`, xLabel: "episode time (s)", panelHeight: 120 };
}
