/**
 * ROS 2 managed-node state machine over any NodeHandle (embedded or ROS 2):
 * unconfigured --configure--> inactive --activate--> active --deactivate--> inactive
 * --cleanup--> unconfigured; shutdown from any state → finalized. onConfigure creates
 * resources, onActivate starts timers, onDeactivate stops them (rclnodejs lifecycle examples).
 * A failing callback leaves the state unchanged and rethrows with the node's name.
 */
import type { LifecycleNode, LifecycleState, NodeHandle } from "./Runtime.ts";

/** What a managed node does on each transition. */
export interface LifecycleCallbacks {
  onConfigure?(node: NodeHandle): void | Promise<void>;
  onActivate?(node: NodeHandle): void | Promise<void>;
  onDeactivate?(node: NodeHandle): void | Promise<void>;
  onCleanup?(node: NodeHandle): void | Promise<void>;
  onShutdown?(node: NodeHandle): void | Promise<void>;
}

/** Thrown on a transition that is not allowed from the current state. */
export class LifecycleTransitionError extends Error {
  readonly code = "RLFT_LIFECYCLE_TRANSITION";
  constructor(node: string, transition: string, state: LifecycleState, allowedFrom: LifecycleState[]) {
    super(
      `Cannot ${transition} node "${node}": it is ${state}; ${transition} is allowed only from ${allowedFrom.join(" or ")}`,
    );
    this.name = "LifecycleTransitionError";
  }
}

/** A managed node. */
export class Lifecycle implements LifecycleNode {
  #state: LifecycleState = "unconfigured";
  #busy = false;

  constructor(
    readonly node: NodeHandle,
    readonly callbacks: LifecycleCallbacks = {},
  ) {}

  get state(): LifecycleState {
    return this.#state;
  }

  configure(): Promise<void> {
    return this.#transition("configure", ["unconfigured"], "inactive", this.callbacks.onConfigure);
  }

  activate(): Promise<void> {
    return this.#transition("activate", ["inactive"], "active", this.callbacks.onActivate);
  }

  deactivate(): Promise<void> {
    return this.#transition("deactivate", ["active"], "inactive", this.callbacks.onDeactivate);
  }

  cleanup(): Promise<void> {
    return this.#transition("cleanup", ["inactive"], "unconfigured", this.callbacks.onCleanup);
  }

  /** From any state but finalized: deactivates first when active, then onShutdown. */
  async shutdown(): Promise<void> {
    if (this.#state === "active") await this.deactivate();
    return this.#transition("shutdown", ["unconfigured", "inactive"], "finalized", this.callbacks.onShutdown);
  }

  async #transition(
    name: string,
    from: LifecycleState[],
    to: LifecycleState,
    cb: ((node: NodeHandle) => void | Promise<void>) | undefined,
  ): Promise<void> {
    if (this.#busy) throw new Error(`Cannot ${name} node "${this.node.name}": another transition is still running`);
    if (!from.includes(this.#state)) throw new LifecycleTransitionError(this.node.name, name, this.#state, from);
    this.#busy = true;
    try {
      await cb?.(this.node);
      this.#state = to;
    } catch (err) {
      throw new Error(`${name} of node "${this.node.name}" failed (still ${this.#state}): ${(err as Error)?.message ?? String(err)}`, {
        cause: err,
      });
    } finally {
      this.#busy = false;
    }
  }
}
