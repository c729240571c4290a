/**
 * The ArmDriver contract (contract.ts) against every registered driver (hardware/registry.ts) over its simulator, with
 * the faults each simulator can inject. A driver added to the registry is covered by its `contract` fixture; the
 * fixtures live in each driver's folder (contractFixture.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { armDriverContract } from "./contract.ts";
import { DRIVERS } from "./registry.ts";
import type { ContractFixture } from "./driverEntry.ts";

for (const entry of DRIVERS) {
  let fixture: ContractFixture | undefined;
  let problem = "";
  try {
    fixture = await entry.contract();
    if (!fixture?.make) problem = "its contract() returned no fixture with make()";
  } catch (e) {
    problem = `its contract() failed: ${(e as Error).message}`;
  }
  if (!fixture || problem) {
    test(`ArmDriver contract, ${entry.kind}: has a simulator fixture`, () => {
      assert.fail(`driver kind ${entry.kind} is registered but ${problem || "has no contract fixture"}: give its entry contract: () => import("./contractFixture.ts") with a simulator harness (see hardware/sim/contractFixture.ts)`);
    });
    continue;
  }
  armDriverContract(fixture.name, fixture.make, { skip: fixture.skip, faults: fixture.faults });
}
