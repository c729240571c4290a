/** The sim driver's ArmDriver contract fixture: the MuJoCo push_cube arm, stepped by the suite. */
import type { ContractFixture } from "../driverEntry.ts";
import { SimArmDriver } from "./SimArmDriver.ts";

export const simFixture: ContractFixture = {
  name: "sim",
  make: async () => {
    const driver = await SimArmDriver.create({ task: "push_cube", controlHz: 20 });
    const mid = driver.jointLower.map((lo, i) => (lo + driver.jointUpper[i]) / 2);
    return { driver, target: mid.map((m, i) => Math.min(driver.jointUpper[i] - 0.1, m + 0.15)), tolerance: 0.05, advance: () => driver.advance(), faults: [], close: async () => driver.sim.close() };
  },
};
