/**
 * `npm run bench:so101`: the simulated SO-101 without cameras.
 *  1. Physics speed: mj_step calls per second and control ticks per second spent in ArmSim.stepControl alone, during
 *     quality-1 expert episodes of each task (so contacts, grasps and pushes are in the numbers), at 10 and 30 Hz, and
 *     the same per tick with the expert, observation and success check included.
 *  2. Scripted expert success on seeds 0..N-1 (default 100) per task at quality 1 and at the demo default 0.7.
 * Writes bench/results/so101-<timestamp>.json. Usage: npm run bench:so101 [-- --episodes N] [-- --hz 10,30]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { ArmSim } from "../sim/ArmSim.ts";
import { So101Expert } from "../sim/so101/So101Expert.ts";
import { wilson } from "../data/stats.ts";
import type { So101TaskName } from "../sim/tasks.ts";

const argv = process.argv.slice(2);
const arg = (name: string, dflt: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const episodes = Number(arg("--episodes", "100"));
const rates = arg("--hz", "10,30").split(",").map(Number);
if (!(Number.isInteger(episodes) && episodes >= 1)) throw new Error(`--episodes: a positive integer, got ${arg("--episodes", "")}`);
if (!rates.every((r) => r > 0)) throw new Error(`--hz: comma-separated control rates, got ${arg("--hz", "")}`);
const TASKS: So101TaskName[] = ["reach", "push_cube", "pick_place"];

interface Run {
  successes: number;
  ticks: number;
  steps: number;
  physicsSec: number;
  totalSec: number;
  physicsDt: number;
}

async function run(task: So101TaskName, hz: number, quality: number, n: number): Promise<Run> {
  const sim = await ArmSim.create({ robot: "so101", task, controlHz: hz });
  const expert = new So101Expert({ task, quality, controlHz: hz });
  const substeps = Math.round(1 / hz / sim.model.opt.timestep);
  const r: Run = { successes: 0, ticks: 0, steps: 0, physicsSec: 0, totalSec: 0, physicsDt: sim.model.opt.timestep };
  const t0 = performance.now();
  for (let seed = 0; seed < n; seed++) {
    sim.reset(seed);
    expert.reset(seed);
    for (let t = 0; t < sim.task.maxSteps; t++) {
      const s = sim.status();
      if (s.success) r.successes++;
      if (s.success || s.failed) break;
      sim.setCommand(expert.act(sim.observation()));
      const p0 = performance.now();
      sim.stepControl();
      r.physicsSec += (performance.now() - p0) / 1000;
      r.ticks++;
      r.steps += substeps;
    }
  }
  r.totalSec = (performance.now() - t0) / 1000;
  sim.close();
  return r;
}

// Warm-up: V8 compiles the hot paths (IK, observation, contact checks) before anything is timed.
for (const task of TASKS) await run(task, 10, 1, 3);

const speed: Record<string, unknown>[] = [];
console.log("SO-101 physics speed (no cameras), quality-1 expert episodes");
console.log("task        Hz  dt(ms)   mj_step/s  ticks/s(physics)  ×real time(physics)  ticks/s(+expert,obs,status)  ×real time");
for (const hz of rates) {
  for (const task of TASKS) {
    const r = await run(task, hz, 1, Math.min(episodes, 30));
    const dt = r.physicsDt;
    const row = { task, hz, physics_dt: dt, mj_step_per_s: r.steps / r.physicsSec, ticks_per_s_physics: r.ticks / r.physicsSec, realtime_physics: r.ticks / hz / r.physicsSec, ticks_per_s_total: r.ticks / r.totalSec, realtime_total: r.ticks / hz / r.totalSec };
    speed.push(row);
    console.log(
      `${task.padEnd(11)} ${String(hz).padStart(2)}  ${(dt * 1000).toFixed(2).padStart(6)}  ${row.mj_step_per_s.toFixed(0).padStart(10)}  ${row.ticks_per_s_physics.toFixed(0).padStart(16)}  ${row.realtime_physics.toFixed(0).padStart(18)}×  ${row.ticks_per_s_total.toFixed(0).padStart(27)}  ${row.realtime_total.toFixed(0).padStart(9)}×`,
    );
  }
}

const success: Record<string, unknown>[] = [];
console.log(`\nscripted expert success on seeds 0..${episodes - 1} (10 Hz), Wilson 95% CI`);
for (const task of TASKS) {
  for (const quality of [1, 0.7]) {
    const r = await run(task, 10, quality, episodes);
    const w = wilson(r.successes, episodes);
    success.push({ task, quality, episodes, successes: r.successes, rate: w.p, ci95: [w.lo, w.hi] });
    console.log(`  ${task.padEnd(11)} quality ${quality.toFixed(1)}  ${r.successes}/${episodes}  (${(100 * w.p).toFixed(0)}%, CI ${(100 * w.lo).toFixed(0)}–${(100 * w.hi).toFixed(0)}%)`);
  }
}

mkdirSync("bench/results", { recursive: true });
const file = `bench/results/so101-${new Date().toISOString().replace(/[:.]/g, "-")}.json`;
const json = `${JSON.stringify({ bench: "so101", date: new Date().toISOString(), speed, expert_success: success }, null, 2)}\n`;
for (const f of [file, "bench/results/so101-latest.json"]) writeFileSync(f, json); // the dated copy is git-ignored
console.log(`\nwritten to ${file} and bench/results/so101-latest.json`);
