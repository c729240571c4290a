/**
 * Leader-arm teleop: a second, unpowered arm read by position; the follower mirrors it while the operator
 * has control (GELLO / ALOHA style). Moving the leader takes over (motion mode); holding it still for
 * `release_sec` hands back. Reads are asynchronous (a servo bus round trip), so each poll uses the latest
 * completed reading and starts the next one; a failed read is reported through `error`.
 */
import { idleSample, TeleopDeviceError, type TeleopDevice, type TeleopSample } from "./TeleopDevice.ts";
import type { JointPositionSource } from "./JointPositionSource.ts";
import type { TeleopConfig } from "./TeleopConfig.ts";

/** Options of {@link LeaderArmTeleop}. */
export interface LeaderArmTeleopOptions {
  config: TeleopConfig;
  source: JointPositionSource;
  /** The follower's joint order; the leader must have the same joints. */
  followerJoints: readonly string[];
}

/** The leader-arm device. */
export class LeaderArmTeleop implements TeleopDevice {
  readonly source = "leader_arm";
  readonly takeoverMode = "motion" as const;
  readonly path: string;
  readonly #o: LeaderArmTeleopOptions;
  #latest: number[] | null = null;
  #previous: number[] | null = null;
  #inFlight: Promise<void> | null = null;
  #error: string | null = null;
  /** Completed reads, for status. */
  reads = 0;

  constructor(opts: LeaderArmTeleopOptions) {
    this.#o = opts;
    this.path = opts.source.path;
  }

  get error(): string | null {
    return this.#error;
  }

  /** Checks the joint names and takes the first reading (so the first poll has a pose). */
  async open(): Promise<void> {
    const have = this.#o.source.jointNames.join(", ");
    const want = this.#o.followerJoints.join(", ");
    if (have !== want) throw new TeleopDeviceError(this.path, `leader arm at ${this.path} has joints [${have}] but the follower has [${want}]: map the leader's servo ids to the follower's joints in its bus config`);
    try {
      this.#latest = await this.#o.source.read();
    } catch (e) {
      throw new TeleopDeviceError(this.path, `Cannot read the leader arm at ${this.path}: ${(e as Error).message} — check power and the serial cable; permission errors on ${this.path} are fixed by adding your user to the dialout group`, { cause: e });
    }
    this.#previous = this.#latest;
    this.reads++;
  }

  async close(): Promise<void> {
    await this.#inFlight?.catch(() => undefined);
    await this.#o.source.close();
  }

  /** Waits for the read in flight (tests step deterministically with it). */
  async settle(): Promise<void> {
    await this.#inFlight;
  }

  #startRead(): void {
    if (this.#inFlight || this.#error) return;
    this.#inFlight = this.#o.source
      .read()
      .then((q) => {
        if (q.length !== this.#o.followerJoints.length || q.some((x) => !Number.isFinite(x))) throw new Error(`expected ${this.#o.followerJoints.length} finite positions, got [${q.join(", ")}]`);
        this.#latest = q;
        this.reads++;
      })
      .catch((e: Error) => {
        this.#error = `leader arm at ${this.path} stopped answering: ${e.message} — check power and the cable; the episode is paused`;
      })
      .finally(() => {
        this.#inFlight = null;
      });
  }

  poll(dtSec: number): TeleopSample {
    this.#startRead();
    const s = idleSample();
    const q = this.#latest;
    if (!q) return s;
    const prev = this.#previous ?? q;
    const speed = Math.max(...q.map((x, i) => Math.abs(x - prev[i]))) / Math.max(dtSec, 1e-6);
    this.#previous = q;
    s.joints = [...q];
    s.moving = speed > this.#o.config.leader.motion_threshold;
    return s;
  }
}
