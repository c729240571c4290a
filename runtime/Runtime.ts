/**
 * The surface a node needs, identical on the embedded runtime and on ROS 2 (rclnodejs).
 * Nodes import only this file; `runtime/embedded` and `runtime/ros2` implement it.
 */

import type { Time } from "../contracts/msgs.generated.ts";
/** A ROS 2 time stamp (builtin_interfaces/Time), from the generated message types. */
export type { Time };

/** QoS profile subset shared by both runtimes. */
export interface Qos {
  /** "reliable" (default) or "best_effort" (camera streams). */
  reliability?: "reliable" | "best_effort";
  /** History depth (default 10). */
  depth?: number;
  /** Late joiners get the last message ("transient_local"), like a latched topic. */
  durability?: "volatile" | "transient_local";
}

/** A clock: wall time on a robot, stepped sim time in simulation. */
export interface Clock {
  readonly kind: "wall" | "sim";
  /** Now, in seconds. */
  now(): number;
  /** Now as a ROS 2 stamp. */
  stamp(): Time;
}

/**
 * A sim clock that the simulation steps: time only moves when `advance`/`runUntil` is called,
 * each due timer fires in time order, and async timer callbacks are awaited before time moves on.
 */
export interface SteppableClock extends Clock {
  readonly kind: "sim";
  /** Moves time forward by dtSec, firing every timer that falls due on the way. */
  advance(dtSec: number): Promise<void>;
  /** Moves time forward to tSec (no-op if already there). */
  runUntil(tSec: number): Promise<void>;
}

/** A periodic timer on a clock. Async callbacks are awaited on the sim clock, so sim time waits for them. */
export interface Timer {
  cancel(): void;
  readonly periodSec: number;
}

export interface Publisher<T> {
  readonly topic: string;
  readonly type: string;
  publish(msg: T): void;
}

export interface Subscription {
  readonly topic: string;
  unsubscribe(): void;
}

/** Parameters: declared with a default, overridable from launch files. */
export type ParamValue = string | number | boolean | number[] | string[];

export interface Logger {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

/** One node in the graph. */
export interface NodeHandle {
  readonly name: string;
  readonly clock: Clock;
  readonly logger: Logger;
  createPublisher<T = Record<string, unknown>>(type: string, topic: string, qos?: Qos): Publisher<T>;
  createSubscription<T = Record<string, unknown>>(type: string, topic: string, cb: (msg: T) => void, qos?: Qos): Subscription;
  /** Timer on the node's clock; an async callback delays the next sim step until it settles. */
  createTimer(periodSec: number, cb: () => void | Promise<void>): Timer;
  declareParameter<V extends ParamValue>(name: string, defaultValue: V): V;
  getParameter<V extends ParamValue>(name: string): V;
  destroy(): void;
}

/** A runtime hosts nodes on one transport. */
export interface Runtime {
  readonly kind: "embedded" | "ros2";
  readonly clock: Clock;
  createNode(name: string, opts?: { parameters?: Record<string, ParamValue> }): NodeHandle;
  shutdown(): Promise<void>;
}

/** Lifecycle states, as in ROS 2 managed nodes (INACTIVE: state readable, no commands taken). */
export type LifecycleState = "unconfigured" | "inactive" | "active" | "finalized";

/** A managed node: configure creates resources, activate starts timers, deactivate stops them. */
export interface LifecycleNode {
  readonly node: NodeHandle;
  readonly state: LifecycleState;
  configure(): Promise<void>;
  activate(): Promise<void>;
  deactivate(): Promise<void>;
  shutdown(): Promise<void>;
}
