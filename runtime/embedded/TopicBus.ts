/**
 * In-process topics as RxJS Subjects. Messages are plain objects shaped like ROS 2 messages and
 * are delivered synchronously, in publish order. A topic has one type, fixed by its first
 * publisher or subscriber. transient_local publishers keep their last `depth` messages for
 * transient_local late joiners, like a latched ROS 2 topic.
 */
import { Subject, type Subscription as RxSubscription } from "rxjs";
import type { Qos } from "../Runtime.ts";
import { MessageRegistry } from "../msgs/MessageRegistry.ts";

/** A message plus where it came from (`origin` is set by bridges for messages from other processes). */
export interface Envelope {
  msg: unknown;
  origin?: string;
}

/** Thrown when a publisher or subscriber uses a type other than the topic's. */
export class TopicTypeMismatchError extends Error {
  readonly code = "RLFT_TOPIC_TYPE_MISMATCH";
  constructor(topic: string, topicType: string, requested: string, who: string) {
    super(
      `Topic "${topic}" carries ${topicType}, but this ${who} uses ${requested}: ` +
        `every publisher and subscriber of a topic must use the same message type`,
    );
    this.name = "TopicTypeMismatchError";
  }
}

interface TopicState {
  name: string;
  type: string;
  subject: Subject<Envelope>;
  /** Retained messages of transient_local publishers (bounded by their depth). */
  retained: Envelope[];
  retainDepth: number;
}

type Tap = (type: string, env: Envelope) => void;

/** The topics of one embedded runtime. */
export class TopicBus {
  #topics = new Map<string, TopicState>();
  #taps = new Map<string, Set<Tap>>();
  #fields = new Map<string, Set<string>>();

  constructor(readonly registry: MessageRegistry = MessageRegistry.default()) {}

  /** Known topics and their types. */
  topics(): { name: string; type: string }[] {
    return [...this.#topics.values()].map((t) => ({ name: t.name, type: t.type }));
  }

  /** The type of a topic, if it exists. */
  typeOf(topic: string): string | undefined {
    return this.#topics.get(topic)?.type;
  }

  /** Creates the topic or checks its type; returns the canonical type name. */
  ensure(topic: string, type: string, who = "publisher"): string {
    if (!topic.startsWith("/")) {
      throw new Error(`Invalid topic name "${topic}": expected an absolute name such as /joint_states`);
    }
    const canonical = this.registry.assertKnown(type);
    const t = this.#topics.get(topic);
    if (t) {
      if (t.type !== canonical) throw new TopicTypeMismatchError(topic, t.type, canonical, who);
      return canonical;
    }
    this.#topics.set(topic, { name: topic, type: canonical, subject: new Subject(), retained: [], retainDepth: 0 });
    return canonical;
  }

  /** Throws unless every top-level key of msg is a field of `type` (catches `positions` for `position`). */
  checkShape(topic: string, type: string, msg: unknown): void {
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
      throw new Error(`Message for ${topic} (${type}) must be an object shaped like the message, got ${Array.isArray(msg) ? "an array" : typeof msg}`);
    }
    let fields = this.#fields.get(type);
    if (!fields) {
      fields = new Set(this.registry.definition(type).definitions.filter((f) => !f.isConstant).map((f) => f.name));
      this.#fields.set(type, fields);
    }
    for (const k of Object.keys(msg)) {
      if (!fields.has(k)) {
        throw new Error(`Message for ${topic} (${type}) has unknown field "${k}"; expected fields: ${[...fields].join(", ")}`);
      }
    }
  }

  /** Publishes on a topic whose type must be `type`. */
  publish(topic: string, type: string, msg: unknown, opts: { origin?: string; qos?: Qos } = {}): void {
    const canonical = this.ensure(topic, type);
    this.checkShape(topic, canonical, msg);
    const t = this.#topics.get(topic)!;
    const env: Envelope = { msg, origin: opts.origin };
    if (opts.qos?.durability === "transient_local") {
      t.retainDepth = Math.max(t.retainDepth, opts.qos.depth ?? 10);
      t.retained.push(env);
      while (t.retained.length > t.retainDepth) t.retained.shift();
    }
    t.subject.next(env);
    const taps = this.#taps.get(topic);
    if (taps) for (const tap of taps) tap(canonical, env);
  }

  /**
   * Subscribes to a topic. A transient_local subscriber first gets the retained messages
   * (on a microtask, so the callback never runs inside subscribe()), then live ones in order.
   */
  subscribe(topic: string, type: string, cb: (env: Envelope) => void, qos: Qos = {}): { unsubscribe(): void } {
    this.ensure(topic, type, "subscription");
    const t = this.#topics.get(topic)!;
    if (qos.durability !== "transient_local" || t.retained.length === 0) {
      const sub = t.subject.subscribe(cb);
      return { unsubscribe: () => sub.unsubscribe() };
    }
    const history = [...t.retained].slice(-(qos.depth ?? 10));
    let pending: Envelope[] | undefined = [];
    let closed = false;
    const live: RxSubscription = t.subject.subscribe((env) => {
      if (pending) pending.push(env);
      else cb(env);
    });
    queueMicrotask(() => {
      const queued = pending ?? [];
      pending = undefined;
      for (const env of [...history, ...queued]) {
        if (closed) return;
        cb(env);
      }
    });
    return {
      unsubscribe: () => {
        closed = true;
        live.unsubscribe();
      },
    };
  }

  /** Observes every message published on a topic, whatever subscribers exist (used by bridges). */
  tap(topic: string, fn: Tap): () => void {
    let set = this.#taps.get(topic);
    if (!set) {
      set = new Set();
      this.#taps.set(topic, set);
    }
    set.add(fn);
    return () => set.delete(fn);
  }

  /** Completes every topic. */
  close(): void {
    for (const t of this.#topics.values()) t.subject.complete();
    this.#taps.clear();
  }
}
