/**
 * The MuJoCo arm as a full ArmDriver: the rest of the stack cannot tell it from a real arm.
 * It also exposes what only a simulator has (reset from a seed, object state as a perception
 * stand-in, ground-truth success) through SimWorld, which the sim-only nodes use.
 */
import { ArmSim, type ArmSimOptions } from "../../sim/ArmSim.ts";
import type { ArmDriver, DriverStatus, DriverWorld, JointReading } from "../ArmDriver.ts";

/** What the MuJoCo world adds to a driver. */
export interface SimWorld extends DriverWorld {
  readonly sim: ArmSim;
  reset(seed: number): void;
  /** Advances physics by one control period. */
  advance(): void;
}

/** ArmDriver over ArmSim. */
export class SimArmDriver implements ArmDriver, SimWorld {
  readonly sim: ArmSim;
  #state: ArmDriver["state"] = "unconfigured";

  private constructor(sim: ArmSim) {
    this.sim = sim;
  }

  /** Loads MuJoCo and builds the scene for the task. */
  static async create(opts: ArmSimOptions): Promise<SimArmDriver> {
    return new SimArmDriver(await ArmSim.create(opts));
  }

  get jointNames(): readonly string[] {
    return this.sim.jointNames;
  }
  get jointLower(): readonly number[] {
    return this.sim.jointLower;
  }
  get jointUpper(): readonly number[] {
    return this.sim.jointUpper;
  }
  get state(): ArmDriver["state"] {
    return this.#state;
  }

  async configure(): Promise<void> {
    this.#state = "inactive";
  }
  async activate(): Promise<void> {
    if (this.#state === "unconfigured") throw new Error("SimArmDriver.activate: configure() first");
    this.#state = "active";
  }
  async deactivate(): Promise<void> {
    this.#state = "inactive";
  }

  read(): { status: DriverStatus; reading?: JointReading } {
    if (this.#state === "unconfigured") return { status: { ok: false, error: "sim driver not configured" } };
    return { status: { ok: true }, reading: this.sim.jointState() };
  }

  write(positions: readonly number[]): DriverStatus {
    if (this.#state !== "active") return { ok: false, error: `sim driver is ${this.#state}: commands are not taken` };
    try {
      this.sim.setCommand(positions);
      return { ok: true };
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
  }

  reset(seed: number): void {
    this.sim.reset(seed);
  }

  advance(): void {
    this.sim.stepControl();
  }

  observation(): { names: string[]; values: number[] } {
    return this.sim.observation();
  }

  status(): { success: boolean; failed: boolean } {
    return this.sim.status();
  }

  get instruction(): string | null {
    return this.sim.instruction;
  }
}
