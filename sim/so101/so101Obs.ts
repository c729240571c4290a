/** The named fields of an SO-101 task observation the scripted expert and operator read (by name, not position). */
import type { So101TaskName } from "../tasks.ts";
import { SO101_SPEC } from "./so101Spec.ts";

/** An SO-101 observation, pulled apart. Fields the task does not have are NaN. */
export interface So101Obs {
  /** Joint positions, jointNames order. */
  q: number[];
  /** Cube centre x, y, z (z = resting height when the task does not publish it) and yaw (0 when not published). */
  cube: [number, number, number];
  cubeYaw: number;
  /** Target point (reach) or disc centre (z = 0). */
  target: [number, number, number];
}

/** Reads `obs` for `task`; a missing name is one clear error naming what was expected. */
export function readSo101Obs(obs: { names: readonly string[]; values: readonly number[] }, task: So101TaskName, who: string): So101Obs {
  const get = (name: string, fallback?: number): number => {
    const i = obs.names.indexOf(name);
    if (i >= 0 && i < obs.values.length) return obs.values[i];
    if (fallback !== undefined) return fallback;
    throw new Error(`${who}: observation has no "${name}" (got ${obs.names.join(", ")}); expected the so101 ${task} layout of sim/tasks.ts`);
  };
  const q = SO101_SPEC.jointNames.map((j) => get(`q.${j}`));
  if (task === "reach") return { q, cube: [NaN, NaN, NaN], cubeYaw: NaN, target: [get("target.x"), get("target.y"), get("target.z")] };
  return {
    q,
    cube: [get("cube.x"), get("cube.y"), get("cube.z", SO101_SPEC.cubeHalf)],
    cubeYaw: get("cube.yaw", 0),
    target: [get("target.x"), get("target.y"), 0],
  };
}
