/** `rlft inspect-episode`: V(t) and A(t) along a recorded episode, from a RECAP package's value head. */
import type { Command } from "commander";
import { integer } from "../numberOption.ts";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { readEpisodeArrays } from "../../app/dataset.ts";
import { episodeValues, sparkline, valueCameras, type EpisodeValues } from "../../app/episodeValues.ts";
import { PolicyPackage } from "../../policies/PolicyPackage.ts";
import { findPython, learnerEnv } from "../../app/python.ts";

function print(v: EpisodeValues, file: string, every: number): void {
  const f = (x: number) => (x >= 0 ? " " : "") + x.toFixed(3);
  console.log(`${file}`);
  console.log(`task ${v.task}, outcome ${v.outcome}, ${v.steps} steps; value head of ${v.policy}`);
  console.log(`returns: −1/step, ${v.success ? "0 at success" : `−${v.cFail} at failure`}, ÷ T_max ${v.maxEpisodeSteps}, clipped to [−1, 0]; A(t) with N = ${v.nStep === 0 ? "Monte-Carlo" : v.nStep}; ε = ${v.threshold === null ? "(none for this task)" : v.threshold.toFixed(4)}`);
  console.log("\n     t      V(t)    return      A(t)  I  operator");
  for (let t = 0; t < v.steps; t++) {
    if (t % every !== 0 && t !== v.steps - 1) continue;
    console.log(`${String(t).padStart(6)}  ${f(v.value[t])}  ${f(v.ret[t])}  ${f(v.advantage[t])}  ${v.indicator[t]}  ${v.intervention[t] ? "yes" : ""}`);
  }
  const lo = Math.min(...v.advantage);
  const hi = Math.max(...v.advantage);
  console.log(`\nV(t)    [−1, 0]   ${sparkline(v.value, -1, 0)}`);
  console.log(`return  [−1, 0]   ${sparkline(v.ret, -1, 0)}`);
  console.log(`A(t)    [${lo.toFixed(2)}, ${hi.toFixed(2)}] ${sparkline(v.advantage, lo, hi)}`);
  console.log(`operator          ${sparkline(v.intervention, 0, 1)}`);
  const mae = v.value.reduce((a, x, t) => a + Math.abs(x - v.ret[t]), 0) / v.steps;
  const pos = v.indicator.reduce((a, b) => a + b, 0) / v.steps;
  console.log(`\nmean |V − return| ${mae.toFixed(3)}; positive indicator on ${(100 * pos).toFixed(0)}% of steps; operator on ${v.intervention.reduce((a, b) => a + b, 0)} steps`);
}

/** Registers inspect-episode on `program`. */
export function registerInspectEpisodeCommand(program: Command): void {
  program
    .command("inspect-episode")
    .description("Print (and plot) V(t) and A(t) along a recorded episode using a RECAP package's value function")
    .argument("<mcap>", "episode file")
    .requiredOption("--value <package>", "RECAP policy package with a value head (rlft recap: OUT/iter_N/learner/package)")
    .option("--every <n>", "print every n-th step (the plots cover all)", integer({ min: 1 }), 5)
    .option("--n-step <n>", "advantage lookahead (default: the package's)", integer({ min: 0 }))
    .option("--json <file>", "write V, return, A, indicator and operator flags per step as JSON")
    .option("--plot <png>", "plot V(t), return and A(t) to a PNG (drawn by the learner's matplotlib)")
    .addHelpText("after", "\nExample:\n  rlft inspect-episode runs/recap/iter_1/episodes/episode_000003.mcap --value runs/recap/iter_1/learner/package --plot ep3.png\n")
    .action(async (file: string, o) => {
      const cameras = valueCameras((await PolicyPackage.load(o.value)).json);
      const ep = await readEpisodeArrays(file, cameras.length ? { cameras } : {});
      const v = await episodeValues(ep, o.value, { nStep: o.nStep });
      print(v, resolve(file), Math.max(1, Math.floor(o.every)));
      if (o.json) {
        writeFileSync(o.json, JSON.stringify({ file: resolve(file), ...v }, null, 1));
        console.log(`wrote ${resolve(o.json)}`);
      }
      if (o.plot) {
        const data = resolve(o.json ?? `${o.plot}.json`);
        if (!o.json) writeFileSync(data, JSON.stringify({ file: resolve(file), ...v }));
        const r = spawnSync(findPython(), ["-m", "rlft_learner", "plot-episode", "--data", data, "--out", resolve(o.plot)], { env: learnerEnv(), encoding: "utf8" });
        if (r.status !== 0) throw new Error(`plotting failed: ${(r.stderr || r.stdout).trim().split("\n").pop()}`);
        console.log(`plot: ${resolve(o.plot)}`);
      }
    });
}
