/** A node of the embedded runtime: topics on the in-process bus, timers on the runtime's clock. */
import type { Clock, Logger, NodeHandle, ParamValue, Publisher, Qos, Subscription, Timer } from "../Runtime.ts";
import { ParameterStore } from "../Parameters.ts";
import type { TopicBus } from "./TopicBus.ts";
import type { TimerCallback, TimerHost } from "./SimClock.ts";

/** What a node needs from its runtime. */
export interface EmbeddedNodeContext {
  bus: TopicBus;
  clock: Clock & TimerHost;
  logger: Logger;
  parameters: Record<string, ParamValue>;
  onDestroy: () => void;
}

export class EmbeddedNode implements NodeHandle {
  readonly clock: Clock;
  readonly logger: Logger;
  #ctx: EmbeddedNodeContext;
  #params: ParameterStore;
  #timers = new Set<Timer>();
  #subs = new Set<Subscription>();
  #destroyed = false;

  constructor(
    readonly name: string,
    ctx: EmbeddedNodeContext,
  ) {
    this.#ctx = ctx;
    this.clock = ctx.clock;
    this.logger = ctx.logger;
    this.#params = new ParameterStore(name, ctx.parameters);
  }

  #alive(what: string): void {
    if (this.#destroyed) throw new Error(`Cannot ${what}: node "${this.name}" was destroyed`);
  }

  createPublisher<T = Record<string, unknown>>(type: string, topic: string, qos: Qos = {}): Publisher<T> {
    this.#alive(`create a publisher on ${topic}`);
    const bus = this.#ctx.bus;
    const canonical = bus.ensure(topic, type, "publisher");
    return {
      topic,
      type: canonical,
      publish: (msg: T) => {
        if (this.#destroyed) throw new Error(`Cannot publish on ${topic}: node "${this.name}" was destroyed`);
        bus.publish(topic, canonical, msg, { qos });
      },
    };
  }

  createSubscription<T = Record<string, unknown>>(type: string, topic: string, cb: (msg: T) => void, qos: Qos = {}): Subscription {
    this.#alive(`subscribe to ${topic}`);
    const inner = this.#ctx.bus.subscribe(
      topic,
      type,
      (env) => {
        try {
          cb(env.msg as T);
        } catch (err) {
          // A subscriber's bug must not break the publisher or other subscribers.
          this.logger.error(`subscription callback on ${topic} threw: ${(err as Error)?.stack ?? String(err)}`);
        }
      },
      qos,
    );
    const sub: Subscription = {
      topic,
      unsubscribe: () => {
        inner.unsubscribe();
        this.#subs.delete(sub);
      },
    };
    this.#subs.add(sub);
    return sub;
  }

  createTimer(periodSec: number, cb: TimerCallback): Timer {
    this.#alive("create a timer");
    const inner = this.#ctx.clock.createTimer(periodSec, cb, `timer (${periodSec} s) of node "${this.name}"`);
    const timer: Timer = {
      periodSec,
      cancel: () => {
        inner.cancel();
        this.#timers.delete(timer);
      },
    };
    this.#timers.add(timer);
    return timer;
  }

  declareParameter<V extends ParamValue>(name: string, defaultValue: V): V {
    return this.#params.declare(name, defaultValue);
  }

  getParameter<V extends ParamValue>(name: string): V {
    return this.#params.get<V>(name);
  }

  destroy(): void {
    if (this.#destroyed) return;
    for (const t of [...this.#timers]) t.cancel();
    for (const s of [...this.#subs]) s.unsubscribe();
    this.#destroyed = true;
    this.#ctx.onDestroy();
  }
}
