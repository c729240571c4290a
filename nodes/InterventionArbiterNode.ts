/**
 * intervention_arbiter: decides, each control tick, whether the policy's or the operator's command goes
 * on to the safety supervisor. The operator always wins while active; on hand-back the command blends
 * from the operator's last command into the policy's over `blendSec`, so the arm never jumps. A blended
 * tick counts as an intervention (the command is not the policy's), which is what the HIL-SERL buffer
 * rule needs (Luo et al. 2024, arXiv 2410.21845: intervention steps go to the demo buffer too).
 */
import type { NodeHandle, Publisher, Time } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import type { Intervention } from "../contracts/msgs.generated.ts";
import { ARM_SPEC } from "../sim/armSpec.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header, jointState, sameTime, type EpisodeEventMsg, type JointStateMsg } from "../contracts/msgs.ts";
import { OPERATOR_INTERVENTION } from "./OperatorNode.ts";

/** The arbiter's topics (the lead moves them into topics.ts). */
export const ARBITER_TOPICS = {
  /** The command that goes on to the safety supervisor. */
  command: { topic: "/arbiter/joint_command", type: "sensor_msgs/msg/JointState" },
  /** Who acted this tick: active = operator (or blending out of it), action = the command sent. */
  intervention: { topic: "/arbiter/intervention", type: "rlft_interfaces/msg/Intervention" },
} as const;

/** `source` of ticks on which the policy acted. */
export const POLICY_SOURCE = "policy";

/** Options of {@link CommandArbiter}. */
export interface CommandArbiterOptions {
  /** Seconds over which a hand-back blends from the operator's last command to the policy's. Default 0.5. */
  blendSec?: number;
  /** Control ticks per second (the blend is counted in ticks). */
  controlHz: number;
}

/** One tick's arbitration. */
export interface ArbiterDecision {
  /** The command to send (absolute joint targets). */
  command: number[];
  /** True when the command is not the policy's own: the operator's, or a blend out of it. */
  operatorActed: boolean;
  /** True on the blended ticks after a hand-back. */
  blending: boolean;
}

/**
 * The arbitration rule as plain code: operator wins; after it lets go, the command is the policy's plus
 * the hand-back offset (operator's last − policy's first), shrinking linearly to zero over the blend, so
 * each blended step is the policy's own step plus |offset| / blend ticks.
 */
export class CommandArbiter {
  readonly #blendTicks: number;
  #lastOperator: number[] | null = null;
  #offset: number[] | null = null;
  #blendStep = 0;

  constructor(opts: CommandArbiterOptions) {
    const blendSec = opts.blendSec ?? 0.5;
    if (!(blendSec >= 0) || !(opts.controlHz > 0)) {
      throw new Error(`CommandArbiter: blendSec must be ≥ 0 and controlHz > 0, got blendSec ${blendSec}, controlHz ${opts.controlHz}`);
    }
    this.#blendTicks = Math.max(1, Math.round(blendSec * opts.controlHz));
  }

  /** Forgets the last operator command and any blend in progress (episode start). */
  reset(): void {
    this.#lastOperator = null;
    this.#offset = null;
    this.#blendStep = 0;
  }

  /** One tick: `operator` is the operator's command while it is in control (else null); null when nothing can be sent. */
  decide(policy: readonly number[] | null, operator: readonly number[] | null): ArbiterDecision | null {
    if (operator) {
      this.#lastOperator = [...operator];
      this.#offset = null;
      return { command: [...operator], operatorActed: true, blending: false };
    }
    if (!policy) return null;
    if (this.#lastOperator) {
      const last = this.#lastOperator;
      this.#offset = policy.length === last.length ? policy.map((p, i) => last[i] - p) : null;
      this.#lastOperator = null;
      this.#blendStep = 0;
    }
    if (this.#offset) {
      this.#blendStep++;
      const f = 1 - this.#blendStep / this.#blendTicks;
      if (f > 0) {
        const off = this.#offset;
        return { command: policy.map((p, i) => p + f * off[i]), operatorActed: true, blending: true };
      }
      this.#offset = null;
    }
    return { command: [...policy], operatorActed: false, blending: false };
  }
}

/** Options of the arbiter node. */
export interface InterventionArbiterOptions extends CommandArbiterOptions {
  /** False when no operator node runs: every policy command is forwarded at once. */
  withOperator: boolean;
  /** Command order, used for operator commands (default: the rlft_arm5 joints). */
  jointNames?: readonly string[];
}

/** The intervention arbiter node. */
export class InterventionArbiterNode extends NodeBase {
  readonly arbiter: CommandArbiter;
  #opts: InterventionArbiterOptions;
  #pubCmd?: Publisher<unknown>;
  #pubInt?: Publisher<Intervention>;
  #policy: JointStateMsg | null = null;
  #operator: Intervention | null = null;
  #lastStamp: Time | null = null;
  #operatorSource = "operator";
  #active = false;
  /** Ticks by who acted, for status and tests. */
  readonly counts = { policy: 0, operator: 0, blend: 0 };

  /** Ticks whose command was not the policy's (operator or hand-back blend): what counts as an intervention step. */
  get interventionTicks(): number {
    return this.counts.operator + this.counts.blend;
  }

  constructor(node: NodeHandle, opts: InterventionArbiterOptions) {
    super(node);
    this.#opts = opts;
    this.arbiter = new CommandArbiter(opts);
  }

  override async configure(): Promise<void> {
    this.#pubCmd = this.node.createPublisher(ARBITER_TOPICS.command.type, ARBITER_TOPICS.command.topic);
    this.#pubInt = this.node.createPublisher<Intervention>(ARBITER_TOPICS.intervention.type, ARBITER_TOPICS.intervention.topic);
    this.subscribe<JointStateMsg>(TOPICS.proposedCommand, (m) => this.#onPolicy(m));
    this.subscribe<Intervention>(OPERATOR_INTERVENTION, (m) => this.#onOperator(m));
    this.subscribe<EpisodeEventMsg>(TOPICS.episodeEvent, (e) => {
      if (e.event === "reset") {
        this.arbiter.reset();
        this.#policy = null;
        this.#operator = null;
        this.#lastStamp = null;
      }
    });
  }

  /** Starts forwarding (commands arriving while inactive are dropped). */
  override async activate(): Promise<void> {
    this.#active = true;
  }

  override async deactivate(): Promise<void> {
    this.#active = false;
    await super.deactivate();
  }

  #onPolicy(m: JointStateMsg): void {
    if (!this.#active || this.#done(m.header.stamp)) return;
    this.#policy = m;
    if (!this.#opts.withOperator) this.#publish(m.header.stamp, Array.from(m.position), null);
    else this.#tryPublish();
  }

  #onOperator(m: Intervention): void {
    if (!this.#active || this.#done(m.header.stamp)) return;
    this.#operator = m;
    if (m.active) this.#operatorSource = m.source || this.#operatorSource;
    // The operator wins at once: no need to wait for the policy's command of this tick.
    if (m.active) this.#publish(m.header.stamp, null, Array.from(m.action));
    else this.#tryPublish();
  }

  /** Publishes when both inputs of the same tick are in (operator inactive). */
  #tryPublish(): void {
    const p = this.#policy;
    const o = this.#operator;
    if (!p || !o || !sameTime(p.header.stamp, o.header.stamp)) return;
    this.#publish(p.header.stamp, Array.from(p.position), null);
  }

  /** True when this tick's command has already gone out. */
  #done(stamp: Time): boolean {
    return this.#lastStamp !== null && sameTime(stamp, this.#lastStamp);
  }

  #publish(stamp: Time, policy: number[] | null, operator: number[] | null): void {
    const d = this.arbiter.decide(policy, operator);
    if (!d) return;
    this.#lastStamp = stamp;
    this.counts[d.blending ? "blend" : d.operatorActed ? "operator" : "policy"]++;
    const names = this.#policy?.name.length ? this.#policy.name : (this.#opts.jointNames ?? ARM_SPEC.jointNames);
    this.#pubCmd?.publish(jointState(stamp, names, d.command));
    this.#pubInt?.publish({
      header: header(stamp),
      active: d.operatorActed,
      source: d.operatorActed ? this.#operatorSource : POLICY_SOURCE,
      action: d.command,
    });
  }
}
