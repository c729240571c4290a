/**
 * The ROS 2 runtime: the same NodeHandle surface on rclnodejs, so topics are real ROS 2 topics
 * (`ros2 topic echo` works). rclnodejs is imported lazily, only when this runtime is created.
 * Parameters: numbers are declared as ROS 2 doubles (ParamValue has no integer kind).
 */
import type { Clock, Logger, NodeHandle, ParamValue, Publisher, Qos, Runtime, Subscription, Time, Timer } from "../Runtime.ts";
import { MessageRegistry } from "../msgs/MessageRegistry.ts";
import { ros2TypeName } from "../msgs/ros2msgText.ts";
import { ParameterType, QosPolicy, type RclNode, type RclnodejsModule, type RclParameter, type ParameterTypeValue } from "./rclnodejs-api.ts";

/** The one sentence users see when ROS 2 is not available. */
export const ROS2_MISSING_MESSAGE =
  "The ros2 runtime needs rclnodejs and a sourced ROS 2 (run `source /opt/ros/jazzy/setup.bash` and `npm install rclnodejs`), or use runtime: embedded";

/** Thrown when rclnodejs cannot be loaded or initialised. */
export class Ros2UnavailableError extends Error {
  readonly code = "RLFT_ROS2_UNAVAILABLE";
  constructor(cause: unknown) {
    super(ROS2_MISSING_MESSAGE, { cause });
    this.name = "Ros2UnavailableError";
  }
}

/** Options of Ros2Runtime.create. */
export interface Ros2RuntimeOptions {
  /** "sim": nodes use /clock (use_sim_time); "wall": system time. */
  clock?: "wall" | "sim";
  /** Loads the module (tests inject a failing loader). */
  load?: () => Promise<unknown>;
  registry?: MessageRegistry;
}

function paramType(v: ParamValue): ParameterTypeValue {
  if (typeof v === "boolean") return ParameterType.PARAMETER_BOOL;
  if (typeof v === "number") return ParameterType.PARAMETER_DOUBLE;
  if (typeof v === "string") return ParameterType.PARAMETER_STRING;
  if (v.length > 0 && typeof v[0] === "string") return ParameterType.PARAMETER_STRING_ARRAY;
  return ParameterType.PARAMETER_DOUBLE_ARRAY;
}

function fromRclValue(v: unknown): ParamValue {
  if (typeof v === "bigint") return Number(v);
  if (Array.isArray(v)) return v.map((x) => (typeof x === "bigint" ? Number(x) : x)) as ParamValue;
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number>);
  return v as ParamValue;
}

class Ros2Clock implements Clock {
  constructor(
    readonly kind: "wall" | "sim",
    readonly node: RclNode,
  ) {}
  now(): number {
    return Number(this.node.now().nanoseconds) / 1e9;
  }
  stamp(): Time {
    const { seconds, nanoseconds } = this.node.now().secondsAndNanoseconds;
    return { sec: Number(seconds), nanosec: Number(nanoseconds) };
  }
}

class Ros2Node implements NodeHandle {
  readonly clock: Clock;
  readonly logger: Logger;

  constructor(
    readonly name: string,
    readonly rcl: RclnodejsModule,
    readonly node: RclNode,
    readonly registry: MessageRegistry,
    clockKind: "wall" | "sim",
  ) {
    this.clock = new Ros2Clock(clockKind, node);
    const l = node.getLogger();
    this.logger = { debug: (m) => void l.debug(m), info: (m) => void l.info(m), warn: (m) => void l.warn(m), error: (m) => void l.error(m) };
  }

  #qos(q: Qos = {}): InstanceType<RclnodejsModule["QoS"]> {
    return new this.rcl.QoS(
      QosPolicy.HISTORY_KEEP_LAST,
      q.depth ?? 10,
      q.reliability === "best_effort" ? QosPolicy.RELIABILITY_BEST_EFFORT : QosPolicy.RELIABILITY_RELIABLE,
      q.durability === "transient_local" ? QosPolicy.DURABILITY_TRANSIENT_LOCAL : QosPolicy.DURABILITY_VOLATILE,
    );
  }

  createPublisher<T = Record<string, unknown>>(type: string, topic: string, qos?: Qos): Publisher<T> {
    const canonical = this.registry.assertKnown(type);
    const pub = this.node.createPublisher(ros2TypeName(canonical), topic, { qos: this.#qos(qos) });
    return { topic, type: canonical, publish: (msg: T) => pub.publish(msg as object) };
  }

  createSubscription<T = Record<string, unknown>>(type: string, topic: string, cb: (msg: T) => void, qos?: Qos): Subscription {
    const canonical = this.registry.assertKnown(type);
    const sub = this.node.createSubscription(
      ros2TypeName(canonical),
      topic,
      { qos: this.#qos(qos), serializationMode: "plain" },
      (msg) => {
        try {
          cb(msg as T);
        } catch (err) {
          this.logger.error(`subscription callback on ${topic} threw: ${(err as Error)?.stack ?? String(err)}`);
        }
      },
    );
    return { topic, unsubscribe: () => this.node.destroySubscription(sub) };
  }

  createTimer(periodSec: number, cb: () => void | Promise<void>): Timer {
    if (!Number.isFinite(periodSec) || periodSec <= 0) {
      throw new Error(`Invalid period for a timer of node "${this.name}": expected a positive number of seconds, got ${periodSec}`);
    }
    let busy = false;
    const t = this.node.createTimer(BigInt(Math.round(periodSec * 1e9)), () => {
      if (busy) return; // an async callback still running: skip, never overlap
      const r = cb();
      if (r !== undefined && typeof (r as Promise<void>).then === "function") {
        busy = true;
        (r as Promise<void>)
          .catch((err) => this.logger.error(`timer callback failed: ${(err as Error)?.stack ?? String(err)}`))
          .finally(() => (busy = false));
      }
    });
    return { periodSec, cancel: () => this.node.destroyTimer(t) };
  }

  declareParameter<V extends ParamValue>(name: string, defaultValue: V): V {
    const p: RclParameter = this.node.declareParameter(new this.rcl.Parameter(name, paramType(defaultValue), defaultValue));
    return fromRclValue(p.value) as V;
  }

  getParameter<V extends ParamValue>(name: string): V {
    if (!this.node.hasParameter(name)) {
      throw new Error(`Parameter "${name}" of node "${this.name}" is not declared: call declareParameter("${name}", default) first`);
    }
    return fromRclValue(this.node.getParameter(name).value) as V;
  }

  destroy(): void {
    this.node.destroy();
  }
}

/** Runtime on ROS 2 through rclnodejs. */
export class Ros2Runtime implements Runtime {
  readonly kind = "ros2" as const;
  #nodes: Ros2Node[] = [];
  #clockNode: RclNode;

  private constructor(
    readonly rcl: RclnodejsModule,
    readonly clockKind: "wall" | "sim",
    readonly registry: MessageRegistry,
  ) {
    this.#clockNode = this.#makeRclNode("rlft_runtime_clock", {});
    this.#clockNode.spin();
    this.clock = new Ros2Clock(clockKind, this.#clockNode);
  }

  readonly clock: Clock;

  /** Loads rclnodejs and initialises ROS 2; throws Ros2UnavailableError with one clear sentence otherwise. */
  static async create(opts: Ros2RuntimeOptions = {}): Promise<Ros2Runtime> {
    let rcl: RclnodejsModule;
    try {
      const mod = (await (opts.load ?? (() => import("rclnodejs" as string)))()) as { default?: RclnodejsModule } & RclnodejsModule;
      rcl = mod.default ?? mod;
      await rcl.init();
    } catch (err) {
      throw new Ros2UnavailableError(err);
    }
    return new Ros2Runtime(rcl, opts.clock ?? "wall", opts.registry ?? MessageRegistry.default());
  }

  #makeRclNode(name: string, parameters: Record<string, ParamValue>): RclNode {
    const options = new this.rcl.NodeOptions();
    const overrides = Object.entries(parameters).map(([k, v]) => new this.rcl.Parameter(k, paramType(v), v));
    if (this.clockKind === "sim") overrides.push(new this.rcl.Parameter("use_sim_time", ParameterType.PARAMETER_BOOL, true));
    options.parameterOverrides = overrides;
    return new this.rcl.Node(name, "", undefined, options);
  }

  createNode(name: string, opts: { parameters?: Record<string, ParamValue> } = {}): NodeHandle {
    const rclNode = this.#makeRclNode(name, opts.parameters ?? {});
    const node = new Ros2Node(name, this.rcl, rclNode, this.registry, this.clockKind);
    rclNode.spin();
    this.#nodes.push(node);
    return node;
  }

  async shutdown(): Promise<void> {
    for (const n of this.#nodes) n.destroy();
    this.#clockNode.destroy();
    if (!this.rcl.isShutdown()) this.rcl.shutdown();
  }
}
