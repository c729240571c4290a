/**
 * operator: the scripted supervisor (sim/ScriptedOperator.ts) as a node. Each control tick it watches
 * the latest /observation and publishes /operator/intervention, stamped with the observation's time:
 * active with the operator's joint targets while it has taken over, inactive with an empty action otherwise.
 * The intervention arbiter decides what reaches the safety supervisor.
 */
import type { NodeHandle, Publisher } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import type { Intervention } from "../contracts/msgs.generated.ts";
import { ScriptedOperator, type ScriptedOperatorOptions } from "../sim/ScriptedOperator.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header, sameTime, type EpisodeEventMsg, type ObservationMsg } from "../contracts/msgs.ts";

/** The operator's topic (the lead moves it into topics.ts). */
export const OPERATOR_INTERVENTION = { topic: "/operator/intervention", type: "rlft_interfaces/msg/Intervention" } as const;

/** `source` of the scripted operator's interventions. */
export const SCRIPTED_OPERATOR_SOURCE = "scripted_operator";

/** Options of the operator node: the ScriptedOperator's (controlHz is required: it is the tick rate). */
export type OperatorNodeOptions = ScriptedOperatorOptions & { controlHz: number };

/** Runs a ScriptedOperator on the control tick. */
export class OperatorNode extends NodeBase {
  readonly operator: ScriptedOperator;
  #opts: OperatorNodeOptions;
  #pub?: Publisher<Intervention>;
  #obs: ObservationMsg | null = null;
  #lastSeen: ObservationMsg | null = null;
  /** Last error from the operator, if any (it then publishes nothing: the arbiter keeps the policy). */
  lastError = "";

  constructor(node: NodeHandle, opts: OperatorNodeOptions) {
    super(node);
    this.#opts = opts;
    this.operator = new ScriptedOperator(opts);
  }

  override async configure(): Promise<void> {
    this.#pub = this.node.createPublisher<Intervention>(OPERATOR_INTERVENTION.type, OPERATOR_INTERVENTION.topic);
    this.subscribe<ObservationMsg>(TOPICS.observation, (m) => {
      this.#obs = m;
    });
    this.subscribe<EpisodeEventMsg>(TOPICS.episodeEvent, (e) => {
      if (e.event === "reset") {
        this.operator.reset(Number(e.seed));
        this.#obs = null;
        this.#lastSeen = null;
      }
    });
  }

  override async activate(): Promise<void> {
    this.every(1 / this.#opts.controlHz, () => this.tick());
  }

  /** One tick: watch each new observation once and say whether the operator has the robot. */
  tick(): void {
    const obs = this.#obs;
    if (!obs || (this.#lastSeen && sameTime(obs.header.stamp, this.#lastSeen.header.stamp))) return;
    this.#lastSeen = obs;
    try {
      const before = this.operator.takeovers;
      const d = this.operator.observe({ names: obs.names, values: Array.from(obs.values) });
      if (this.operator.takeovers > before) this.node.logger.info(`taking over: ${this.operator.lastReason}`);
      this.#pub?.publish({ header: header(obs.header.stamp), active: d.takeOver, source: SCRIPTED_OPERATOR_SOURCE, action: d.takeOver && d.action ? d.action : [] });
    } catch (e) {
      const msg = (e as Error).message;
      if (msg !== this.lastError) this.node.logger.error(`operator failed, publishing nothing: ${msg}`);
      this.lastError = msg;
    }
  }
}
