/**
 * The embedded runtime: ROS 2-shaped nodes without ROS 2. Topics are in-process RxJS subjects;
 * an optional ZeroMQ bridge shares selected topics with other processes (CDR over XPUB/XSUB).
 */
import type { Clock, NodeHandle, ParamValue, Runtime, SteppableClock } from "../Runtime.ts";
import { MessageRegistry } from "../msgs/MessageRegistry.ts";
import { ConsoleLogger, type LogLevel, type LogSink } from "./ConsoleLogger.ts";
import { EmbeddedNode } from "./EmbeddedNode.ts";
import { SimClock, type TimerHost } from "./SimClock.ts";
import { TopicBus } from "./TopicBus.ts";
import { WallClock } from "./WallClock.ts";
import { ZmqBridge, type ZmqBridgeOptions } from "./ZmqBridge.ts";

/** Options of EmbeddedRuntime.create. */
export interface EmbeddedRuntimeOptions {
  /** "sim" (default): stepped by the simulation; "wall": real time. */
  clock?: "wall" | "sim";
  /** Share topics with other processes through a ZmqProxy. */
  bus?: ZmqBridgeOptions;
  /** Minimum log level of node loggers (default "info"). */
  logLevel?: LogLevel;
  /** Where log lines go (default console). */
  logSink?: LogSink;
  /** Message types (default: standard ROS 2 + rlft_interfaces). */
  registry?: MessageRegistry;
}

export class EmbeddedRuntime implements Runtime {
  readonly kind = "embedded" as const;
  readonly clock: Clock & TimerHost;
  readonly bus: TopicBus;
  #bridge: ZmqBridge | undefined;
  #nodes = new Map<string, EmbeddedNode>();
  #opts: EmbeddedRuntimeOptions;
  #log: ConsoleLogger;

  private constructor(opts: EmbeddedRuntimeOptions) {
    this.#opts = opts;
    this.#log = new ConsoleLogger("runtime", opts.logLevel ?? "info", opts.logSink);
    this.clock =
      (opts.clock ?? "sim") === "sim"
        ? new SimClock()
        : new WallClock((label, err) => this.#log.error(`${label} failed: ${(err as Error)?.stack ?? String(err)}`));
    this.bus = new TopicBus(opts.registry ?? MessageRegistry.default());
  }

  /** Creates the runtime (and connects the bridge when `bus` is given). */
  static async create(opts: EmbeddedRuntimeOptions = {}): Promise<EmbeddedRuntime> {
    const rt = new EmbeddedRuntime(opts);
    if (opts.bus) {
      rt.#bridge = await ZmqBridge.connect(rt.bus, opts.bus, new ConsoleLogger("zmq_bridge", opts.logLevel ?? "info", opts.logSink));
    }
    return rt;
  }

  /** The stepped clock; throws on a wall-clock runtime. */
  get simClock(): SteppableClock {
    if (!(this.clock instanceof SimClock)) {
      throw new Error(`This embedded runtime runs on the wall clock; create it with { clock: "sim" } to step time`);
    }
    return this.clock;
  }

  /** The ZeroMQ bridge, if any. */
  get bridge(): ZmqBridge | undefined {
    return this.#bridge;
  }

  createNode(name: string, opts: { parameters?: Record<string, ParamValue> } = {}): NodeHandle {
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) {
      throw new Error(`Invalid node name "${name}": expected letters, digits and underscores, starting with a letter`);
    }
    if (this.#nodes.has(name)) throw new Error(`A node named "${name}" already exists in this runtime`);
    const node = new EmbeddedNode(name, {
      bus: this.bus,
      clock: this.clock,
      logger: new ConsoleLogger(name, this.#opts.logLevel ?? "info", this.#opts.logSink),
      parameters: opts.parameters ?? {},
      onDestroy: () => this.#nodes.delete(name),
    });
    this.#nodes.set(name, node);
    return node;
  }

  async shutdown(): Promise<void> {
    for (const n of [...this.#nodes.values()]) n.destroy();
    await this.#bridge?.close();
    this.#bridge = undefined;
    this.bus.close();
  }
}
