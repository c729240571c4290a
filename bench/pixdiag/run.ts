/**
 * Diagnosis helper for bench:pixels: `eval <package> <seed> <count> [recordTo]` (the pixel policy on the SO-101
 * push_cube with both cameras, as bench:pixels evaluates it) or `collect <seed> <count> <out>` (scripted demos with
 * the cameras, as bench:pixels records them). Prints the summary as JSON.
 */
import { SO101_LAUNCH as DEFAULT_LAUNCH, collectDemos, evalSo101Bc } from "../../app/pixelBc.ts";

const SO101_LAUNCH = process.env.LAUNCH ?? DEFAULT_LAUNCH;

const [cmd, ...a] = process.argv.slice(2);
const task = (process.env.TASK ?? "push_cube") as "push_cube";
if (cmd === "eval") {
  const s = await evalSo101Bc({ launch: SO101_LAUNCH, task, package: a[0], obs: "pixels", count: Number(a[2]), seed: Number(a[1]), recordTo: a[3] });
  console.log(JSON.stringify(s));
} else if (cmd === "collect") {
  const s = await collectDemos({ launch: SO101_LAUNCH, task, seed: Number(a[0]), count: Number(a[1]), quality: 1, out: a[2] });
  console.log(JSON.stringify(s));
} else throw new Error("usage: bench/pixdiag/run.ts eval <package> <seed> <count> [recordTo] | collect <seed> <count> <out>");
