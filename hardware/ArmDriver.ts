/**
 * One small interface every arm driver implements (sim, ros2_control bridge, UR RTDE, Feetech, Dynamixel),
 * after ros2_control's hardware components: lifecycle + read/write returning a status, never throwing
 * through the control tick. INACTIVE: state readable, no commands taken.
 */

/** Measured joint state, in the driver's joint order. */
export interface JointReading {
  position: number[];
  velocity: number[];
  effort: number[];
}

/** Result of read/write: the control loop checks it instead of catching exceptions. */
export type DriverStatus = { ok: true } | { ok: false; error: string };

/** An arm driver. */
export interface ArmDriver {
  readonly jointNames: readonly string[];
  readonly jointLower: readonly number[];
  readonly jointUpper: readonly number[];
  readonly state: "unconfigured" | "inactive" | "active";
  /**
   * A latched fault ("" or absent when none): one line naming the joint or servo, what the device reported and the
   * fix. The arm is held or limp as configured and commands are refused until the driver is re-activated; the
   * arm driver node ends the running episode as aborted when it appears.
   */
  readonly fault?: string;
  configure(): Promise<void>;
  activate(): Promise<void>;
  deactivate(): Promise<void>;
  /** Reads the joints; `periodSec` is the time since the last read. */
  read(periodSec: number): { status: DriverStatus; reading?: JointReading };
  /** Sends joint-position targets; refused while inactive. */
  write(positions: readonly number[]): DriverStatus;
  /** Releases the port or socket (real arms); after deactivate. */
  close?(): Promise<void>;
}

/**
 * What a simulated world adds to its driver (the MuJoCo sim, a Gymnasium environment): reset from a seed, one step per
 * control tick, the full observation (object state stands in for perception) and the ground-truth outcome. The arm
 * driver node resets it on the episode's reset event, advances it each tick (awaiting an asynchronous step before the
 * tick ends, so a stepped clock waits for it) and publishes /observation and the terminal /reward from it.
 */
export interface DriverWorld {
  reset(seed: number): void | Promise<void>;
  /** Advances the world by one control period (applying the last written command). */
  advance(): void | Promise<void>;
  observation(): { names: string[]; values: number[] };
  /** `source` names who decided (default sim_success / sim_failure). */
  status(): { success: boolean; failed: boolean; source?: string };
  /** The episode's language instruction, or null. */
  readonly instruction?: string | null;
}
