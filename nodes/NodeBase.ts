/**
 * What every node class shares: it owns its subscriptions (for its lifetime) and its timers (while
 * active), as rclnodejs lifecycle nodes do: configure creates, activate starts timers, deactivate stops
 * them, shutdown releases everything.
 */
import type { NodeHandle, Qos, Subscription, Timer } from "../runtime/Runtime.ts";

/** A topic and its ROS 2 type (see topics.ts). */
export interface TopicSpec {
  topic: string;
  type: string;
}

/** Base of the node classes in this folder. */
export class NodeBase {
  readonly node: NodeHandle;
  #subs: Subscription[] = [];
  #timers: Timer[] = [];

  constructor(node: NodeHandle) {
    this.node = node;
  }

  /** Subscribes until shutdown. */
  protected subscribe<T>(t: TopicSpec, cb: (msg: T) => void, qos?: Qos): void {
    this.#subs.push(this.node.createSubscription<T>(t.type, t.topic, cb, qos));
  }

  /** Runs `cb` every `periodSec` on the node's clock until deactivate. */
  protected every(periodSec: number, cb: () => void | Promise<void>): void {
    this.#timers.push(this.node.createTimer(periodSec, cb));
  }

  /** Creates publishers and subscriptions. */
  async configure(): Promise<void> {}

  /** Starts timers. */
  async activate(): Promise<void> {}

  /** Stops the node's timers. */
  async deactivate(): Promise<void> {
    for (const t of this.#timers) t.cancel();
    this.#timers = [];
  }

  /** Deactivates and drops every subscription. */
  async shutdown(): Promise<void> {
    await this.deactivate();
    for (const s of this.#subs) s.unsubscribe();
    this.#subs = [];
  }
}
