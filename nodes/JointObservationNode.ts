/**
 * joint_observation: on a real arm there is no simulator to publish /observation, so the policy's
 * observation is built from the measured joints: `q.<joint>` positions (the same names the sim tasks use
 * for their joint part), stamped with the joint state's time. Camera features and object poses from
 * perception join here later.
 */
import type { Publisher } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import { TOPICS } from "../contracts/topics.ts";
import type { JointStateMsg } from "../contracts/msgs.ts";

/** Observation names for a robot's joints. */
export function jointObservationNames(jointNames: readonly string[]): string[] {
  return jointNames.map((j) => `q.${j}`);
}

/** The joint observation node. */
export class JointObservationNode extends NodeBase {
  #pub?: Publisher<unknown>;
  #names: string[] = [];
  #order: readonly string[];

  constructor(node: ConstructorParameters<typeof NodeBase>[0], jointNames: readonly string[]) {
    super(node);
    this.#order = jointNames;
  }

  override async configure(): Promise<void> {
    this.#names = jointObservationNames(this.#order);
    this.#pub = this.node.createPublisher(TOPICS.observation.type, TOPICS.observation.topic);
    this.subscribe<JointStateMsg>(TOPICS.jointStates, (m) => {
      // Reorder by name: a ros2_control broadcaster publishes joints in its own order.
      const idx = this.#order.map((n) => m.name.indexOf(n));
      if (idx.some((i) => i < 0)) return;
      this.#pub?.publish({ header: m.header, names: this.#names, values: idx.map((i) => m.position[i]) });
    });
  }
}
