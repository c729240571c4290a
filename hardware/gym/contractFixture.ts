/**
 * The gym driver's ArmDriver contract fixture: the learner's tiny test environment rlft/PointReach-v0
 * (learner/rlft_learner/gym_testenv.py) behind the real server process, stepped by the suite. Its one fault: the
 * environment's process dies.
 */
import type { ContractFixture } from "../driverEntry.ts";
import { GymArmDriver } from "./GymArmDriver.ts";
import { gymPythonProblem, testGymConfig } from "./testing.ts";

const problem = gymPythonProblem();

export const gymFixture: ContractFixture = {
  name: "gym (rlft/PointReach-v0 over the gym server)",
  skip: problem,
  faults: ["process exits"],
  make: async () => {
    const driver = new GymArmDriver(testGymConfig());
    return {
      driver,
      target: [0.4, -0.3],
      tolerance: 1e-6,
      advance: () => void driver.advance(),
      faults: [
        {
          name: "process exits",
          inject: () => void process.kill(driver.pid!, "SIGKILL"),
          expect: /process exited \(SIGKILL\)/,
        },
      ],
      close: async () => undefined,
    };
  },
};
