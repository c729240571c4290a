/**
 * The scripted expert of a Gymnasium environment (`driver.expert`, run inside the env's server process where it may
 * read the env's privileged state) as an actor: its action for each observation arrives with that observation, so
 * `act` answers from the driver without a round trip. Until the first observation it holds the driver's position.
 */
import type { Actor } from "./Actor.ts";
import type { GymArmDriver } from "../../hardware/gym/GymArmDriver.ts";

export class GymExpertActor implements Actor {
  readonly jointNames: readonly string[];
  #driver: GymArmDriver;

  constructor(driver: GymArmDriver) {
    if (!driver.config.expert) throw new Error(`actor.kind expert with driver.kind gym needs driver.expert (module:factory of a Python scripted expert for '${driver.config.env}')`);
    this.#driver = driver;
    this.jointNames = driver.jointNames;
  }

  reset(): void {}

  act(): number[] {
    return this.#driver.expertAction ?? this.#driver.read(0).reading?.position ?? this.jointNames.map(() => 0);
  }
}
