/**
 * arm_driver: owns one ArmDriver. Each control tick it writes the latest safe command, advances the
 * world when it is a simulator, reads the joints and publishes /joint_states. In simulation it also
 * publishes /observation (object state stands in for perception) and the ground-truth /reward.
 */
import type { NodeHandle, Publisher } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import type { ArmDriver, DriverWorld } from "../hardware/ArmDriver.ts";
import { TOPICS } from "../contracts/topics.ts";
import { jointState, header, type EpisodeEventMsg, type JointStateMsg } from "../contracts/msgs.ts";

/** Options of the arm driver node. */
export interface ArmDriverNodeOptions {
  controlHz: number;
  /** Present for simulated worlds (the sim, a Gymnasium env): reset on episode "reset" events, publish observation and reward. */
  world?: DriverWorld;
  /** Sim: publish the task's ground-truth terminal reward (default true; off when people label success). */
  groundTruthReward?: boolean;
  /** False when the robot itself already publishes /joint_states (ros2_control's joint_state_broadcaster). */
  publishJointStates?: boolean;
  /** Called once when the driver latches a fault (the stack ends the running episode as aborted). */
  onFault?: (fault: string) => void;
}

/** The arm driver node. */
export class ArmDriverNode extends NodeBase {
  readonly driver: ArmDriver;
  #opts: ArmDriverNodeOptions;
  #pubState?: Publisher<unknown>;
  #pubObs?: Publisher<unknown>;
  #pubReward?: Publisher<unknown>;
  #pubInstruction?: Publisher<unknown>;
  #command: number[] | null = null;
  #successSent = false;
  #lastError = "";
  #reportedFault = "";
  /** An asynchronous world's reset in flight: the next tick waits for it instead of stepping the old episode. */
  #resetting: Promise<void> | null = null;

  constructor(node: NodeHandle, driver: ArmDriver, opts: ArmDriverNodeOptions) {
    super(node);
    this.driver = driver;
    this.#opts = opts;
  }

  /** Creates publishers and subscriptions; configures the driver. */
  override async configure(): Promise<void> {
    await this.driver.configure();
    if (this.#opts.publishJointStates !== false) this.#pubState = this.node.createPublisher(TOPICS.jointStates.type, TOPICS.jointStates.topic);
    if (this.#opts.world) {
      this.#pubObs = this.node.createPublisher(TOPICS.observation.type, TOPICS.observation.topic);
      this.#pubReward = this.node.createPublisher(TOPICS.reward.type, TOPICS.reward.topic);
      this.#pubInstruction = this.node.createPublisher(TOPICS.instruction.type, TOPICS.instruction.topic, { durability: "transient_local", depth: 1 });
    }
    this.subscribe<JointStateMsg>(TOPICS.jointCommand, (m) => {
      this.#command = Array.from(m.position);
    });
    this.subscribe<EpisodeEventMsg>(TOPICS.episodeEvent, (e) => {
      if (e.event === "reset" && this.#opts.world) {
        this.#command = null;
        this.#successSent = false;
        const r = this.#opts.world.reset(Number(e.seed));
        if (r instanceof Promise) {
          const p: Promise<void> = r.then(
            () => this.#publish(),
            (err: Error) => this.#logOnce(`world reset failed: ${err.message}`),
          ).finally(() => {
            if (this.#resetting === p) this.#resetting = null;
          });
          this.#resetting = p;
        } else this.#publish();
      }
      // On start (the recorder has opened the episode's file by then), before the first tick: the episode's instruction.
      const instruction = this.#opts.world?.instruction ?? null;
      if (e.event === "start" && instruction !== null) this.#pubInstruction?.publish({ data: instruction });
    });
  }

  /** Starts the control tick. */
  override async activate(): Promise<void> {
    await this.driver.activate();
    this.every(1 / this.#opts.controlHz, () => this.tick());
  }

  /** Stops the tick; the driver stops taking commands. */
  override async deactivate(): Promise<void> {
    await super.deactivate();
    await this.driver.deactivate();
  }

  /** One control tick: write → advance (sim) → read → publish. An asynchronous world's step is awaited. */
  tick(): void | Promise<void> {
    // The reset's observation is this tick's (published when the reset completes): no step on top of it.
    if (this.#resetting) return this.#resetting.then(() => this.#checkFault());
    if (this.#command) {
      const st = this.driver.write(this.#command);
      if (!st.ok) this.#logOnce(`write failed: ${st.error}`);
    }
    const stepped = this.#opts.world?.advance();
    if (stepped instanceof Promise) return stepped.then(() => this.#afterAdvance(), (err: Error) => {
      this.#logOnce(`world step failed: ${err.message}`);
      this.#afterAdvance();
    });
    this.#afterAdvance();
  }

  #afterAdvance(): void {
    this.#publish();
    this.#checkFault();
  }

  #checkFault(): void {
    const fault = this.driver.fault ?? "";
    if (fault && fault !== this.#reportedFault) {
      this.node.logger.error(`arm fault: ${fault}`);
      this.#opts.onFault?.(fault);
    }
    this.#reportedFault = fault;
  }

  #publish(): void {
    const stamp = this.node.clock.stamp();
    const r = this.driver.read(1 / this.#opts.controlHz);
    if (!r.status.ok || !r.reading) {
      this.#logOnce(`read failed: ${r.status.ok ? "no reading" : r.status.error}`);
      return;
    }
    this.#pubState?.publish(jointState(stamp, this.driver.jointNames, r.reading.position, r.reading.velocity, r.reading.effort));
    const world = this.#opts.world;
    if (!world) return;
    const obs = world.observation();
    this.#pubObs?.publish({ header: header(stamp), names: obs.names, values: obs.values });
    const status = world.status();
    if ((status.success || status.failed) && !this.#successSent && this.#opts.groundTruthReward !== false) {
      this.#successSent = true;
      this.#pubReward?.publish({ header: header(stamp), reward: status.success ? 1 : 0, terminal: true, source: status.source ?? (status.success ? "sim_success" : "sim_failure") });
    }
  }

  #logOnce(msg: string): void {
    if (msg !== this.#lastError) this.node.logger.warn(msg);
    this.#lastError = msg;
  }
}
