/**
 * teleop: a human operator's device as a node. On each new /observation it polls the device, runs the
 * takeover gesture and publishes /operator/intervention stamped with the observation's time (as the
 * scripted operator does): active with joint targets while the operator has control, inactive otherwise.
 * The first command of a takeover is the measured joint state, so the arm never jumps. Episode commands
 * from the device (success key, gamepad buttons) go to `onCommand`; a failed device releases control and
 * goes to `onFault`, which pauses the episode.
 */
import type { NodeHandle, Publisher } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import type { Intervention } from "../contracts/msgs.generated.ts";
import type { TeleopDevice } from "../hardware/teleop/TeleopDevice.ts";
import type { OperatorCommand } from "../contracts/operator.ts";
import { TakeoverGesture } from "../hardware/teleop/TakeoverGesture.ts";
import type { TeleopMapper } from "../hardware/teleop/TeleopMapper.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header, sameTime, fromTime, type EpisodeEventMsg, type JointStateMsg, type ObservationMsg } from "../contracts/msgs.ts";

/** Options of the teleop node. */
export interface TeleopNodeOptions {
  device: TeleopDevice;
  mapper: TeleopMapper;
  /** Motion-takeover devices hand back after this long without motion. */
  releaseSec: number;
  onCommand?: (cmd: OperatorCommand, source: string) => void;
  onFault?: (message: string) => void;
}

/** The teleop node. */
export class TeleopNode extends NodeBase {
  readonly device: TeleopDevice;
  readonly gesture: TakeoverGesture;
  #o: TeleopNodeOptions;
  #pub?: Publisher<Intervention>;
  #obs: ObservationMsg | null = null;
  #lastSeen: ObservationMsg | null = null;
  #measured: number[] | null = null;
  #faulted = false;
  /** Takeovers since start, for status. */
  takeovers = 0;

  constructor(node: NodeHandle, opts: TeleopNodeOptions) {
    super(node);
    this.#o = opts;
    this.device = opts.device;
    this.gesture = new TakeoverGesture({ mode: opts.device.takeoverMode, releaseSec: opts.releaseSec });
  }

  /** Opens the device (a TeleopDeviceError names the path and the fix) and subscribes. */
  override async configure(): Promise<void> {
    await this.device.open();
    this.#pub = this.node.createPublisher<Intervention>(TOPICS.operatorIntervention.type, TOPICS.operatorIntervention.topic);
    this.subscribe<ObservationMsg>(TOPICS.observation, (m) => (this.#obs = m));
    this.subscribe<JointStateMsg>(TOPICS.jointStates, (m) => (this.#measured = Array.from(m.position)));
    this.subscribe<EpisodeEventMsg>(TOPICS.episodeEvent, (e) => {
      if (e.event === "reset") {
        this.gesture.release();
        this.#obs = null;
        this.#lastSeen = null;
      }
    });
  }

  override async activate(): Promise<void> {
    // Faster than the control rate so a new observation is answered within a fraction of a tick.
    this.every(0.01, () => this.tick());
  }

  override async shutdown(): Promise<void> {
    await super.shutdown();
    await this.device.close();
  }

  /** Whether the operator has control now. */
  get inControl(): boolean {
    return this.gesture.inControl;
  }

  /** One step: answer each new observation once. */
  tick(): void {
    const obs = this.#obs;
    if (!obs || (this.#lastSeen && sameTime(obs.header.stamp, this.#lastSeen.header.stamp))) return;
    const dt = this.#lastSeen ? Math.max(1e-3, fromTime(obs.header.stamp) - fromTime(this.#lastSeen.header.stamp)) : 0;
    this.#lastSeen = obs;
    const stamp = obs.header.stamp;
    if (this.device.error) {
      if (!this.#faulted) {
        this.#faulted = true;
        this.gesture.release();
        this.node.logger.error(this.device.error);
        this.#o.onFault?.(this.device.error);
      }
      this.#pub?.publish({ header: header(stamp), active: false, source: this.device.source, action: [] });
      return;
    }
    const s = this.device.poll(dt);
    for (const c of s.commands) this.#o.onCommand?.(c, this.device.source);
    const was = this.gesture.inControl;
    const now = this.gesture.update(s, dt);
    if (now && !was) {
      if (!this.#measured) {
        this.gesture.release(); // no joint state yet: nothing safe to start from
      } else {
        this.takeovers++;
        this.#o.mapper.begin(this.#measured);
      }
    }
    if (this.gesture.inControl) {
      this.#pub?.publish({ header: header(stamp), active: true, source: this.device.source, action: this.#o.mapper.apply(s) });
    } else {
      this.#pub?.publish({ header: header(stamp), active: false, source: this.device.source, action: [] });
    }
  }
}
