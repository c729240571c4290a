/** What the gym driver's tests share: the test environment's driver block, and whether this machine can run it. */
import { spawnSync } from "node:child_process";
import { findPython, learnerEnv } from "../../app/python.ts";
import type { GymDriverConfig } from "./GymArmDriver.ts";

/** The driver block of rlft/PointReach-v0 (learner/rlft_learner/gym_testenv.py), with `over` on top. */
export function testGymConfig(over: Partial<GymDriverConfig> = {}): GymDriverConfig {
  return {
    env: "rlft/PointReach-v0",
    kwargs: {},
    modules: ["rlft_learner.gym_testenv"],
    action: { names: ["x", "y"], lower: [-1, -1], upper: [1, 1], unit: "" },
    observation: [
      { key: "agent_pos", names: ["pos_x", "pos_y"] },
      { key: "goal", names: ["goal_x", "goal_y"] },
    ],
    cameras: { front: "pixels/front" },
    success: { info: "is_success" },
    step_timeout_sec: 30,
    start_timeout_sec: 120,
    ...over,
  };
}

let cached: string | false | undefined;

/** Why the learner's Python cannot serve Gymnasium here (a skip reason), or false. */
export function gymPythonProblem(): string | false {
  if (cached !== undefined) return cached;
  let py: string;
  try {
    py = findPython();
  } catch (e) {
    return (cached = (e as Error).message.split("\n")[0]);
  }
  const r = spawnSync(py, ["-c", "import gymnasium, zmq, numpy"], { env: learnerEnv(), encoding: "utf8" });
  cached = r.status === 0 ? false : `the learner's Python (${py}) has no gymnasium/pyzmq: pip install 'rlft-learner[gym]'`;
  return cached;
}
