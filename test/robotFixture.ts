/** Test helper: a real learner-exported diffusion package whose names match the sim robot's, so the stack accepts it. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeLearnerFixture, type LearnerFixture } from "../policies/testing/learnerFixture.ts";
import { ArmSim } from "../sim/ArmSim.ts";
import type { SimRobotName, TaskName } from "../sim/tasks.ts";

/** make-fixture (random-ish tiny diffusion policy), relabelled with the task's observation and joint names (default robot rlft_arm5). */
export async function robotPolicyFixture(task: TaskName = "push_cube", robot?: SimRobotName): Promise<LearnerFixture> {
  const sim = await ArmSim.create({ task, robot });
  const obsNames = sim.observation().names;
  const jointNames = [...sim.jointNames];
  sim.close();
  const fx = await makeLearnerFixture({ obsDim: obsNames.length, actionDim: jointNames.length });
  const file = join(fx.dir, "policy.json");
  const pj = JSON.parse(readFileSync(file, "utf8"));
  pj.observation.names = obsNames;
  pj.action.names = jointNames;
  writeFileSync(file, JSON.stringify(pj, null, 2));
  return fx;
}
