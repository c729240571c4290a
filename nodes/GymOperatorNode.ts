/**
 * operator (driver.kind gym): the Gymnasium environment's scripted operator (`driver.operator`, run in the env's
 * server where it may read privileged state) as a node. Like nodes/OperatorNode.ts for the sim, it publishes
 * /operator/intervention once per new /observation on the control tick, stamped with it: active with the operator's action while it has
 * taken over, inactive otherwise. The operator's decision for an observation arrives with that observation.
 */
import type { NodeHandle, Publisher } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import type { Intervention } from "../contracts/msgs.generated.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header, sameTime, type ObservationMsg } from "../contracts/msgs.ts";
import { OPERATOR_INTERVENTION, SCRIPTED_OPERATOR_SOURCE } from "./OperatorNode.ts";
import type { GymArmDriver } from "../hardware/gym/GymArmDriver.ts";

export class GymOperatorNode extends NodeBase {
  /** Ticks the operator had the robot, and takeovers (rising edges). */
  readonly stats = { active: 0, takeovers: 0 };
  #driver: GymArmDriver;
  #hz: number;
  #pub?: Publisher<Intervention>;
  #obs: ObservationMsg | null = null;
  #lastSeen: ObservationMsg | null = null;
  #was = false;

  constructor(node: NodeHandle, driver: GymArmDriver, opts: { controlHz: number }) {
    super(node);
    if (!driver.config.operator) throw new Error(`operator.kind scripted with driver.kind gym needs driver.operator (module:factory of a Python scripted operator for '${driver.config.env}')`);
    this.#driver = driver;
    this.#hz = opts.controlHz;
  }

  override async configure(): Promise<void> {
    this.#pub = this.node.createPublisher<Intervention>(OPERATOR_INTERVENTION.type, OPERATOR_INTERVENTION.topic);
    this.subscribe<ObservationMsg>(TOPICS.observation, (m) => {
      this.#obs = m;
    });
  }

  override async activate(): Promise<void> {
    // On the control tick, after every node has the tick's observation (the experience link matches the arbiter's
    // intervention to it), as nodes/OperatorNode.ts does.
    this.every(1 / this.#hz, () => this.tick());
  }

  /** Says, once per new observation, whether the operator has the robot. */
  tick(): void {
    const obs = this.#obs;
    if (!obs || (this.#lastSeen && sameTime(obs.header.stamp, this.#lastSeen.header.stamp))) return;
    this.#lastSeen = obs;
    const a = this.#driver.operatorAction;
    if (a && !this.#was) this.stats.takeovers++;
    if (a) this.stats.active++;
    this.#was = !!a;
    this.#pub?.publish({ header: header(obs.header.stamp), active: !!a, source: SCRIPTED_OPERATOR_SOURCE, action: a ?? [] });
  }
}
