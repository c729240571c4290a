/**
 * Test double of the learner's online side (docs/protocol.md): a ROUTER that answers hello, transitions, heartbeat
 * and get_policy with the learner's storage rules (store seq > acked_seq only; a gap stores nothing), plus knobs to
 * misbehave: partial acks, silence, malformed replies, restarts on the same port. With `reportDurable` it also keeps
 * a checkpoint (`checkpoint()`), reports `durable_seq`, and can restart from it (`restart({ fromCheckpoint })`), as a
 * learner killed hard does.
 */
import { Router, Publisher } from "zeromq";
import { checkListenAddress } from "../../runtime/listenAddress.ts";
import { decodeMessage, encodeMessage } from "../wire.ts";
import { encodePolicy, toTransitions } from "../messages.ts";
import type { Transition } from "../../contracts/Transition.ts";

/** A package the stub serves and publishes. */
export interface StubPolicy {
  version: string;
  kind: string;
  baseVersion: string | null;
  files: { name: string; data: Uint8Array; sha256: string }[];
}

/** Knobs, changeable between messages. */
export interface StubBehaviour {
  /** Store and ack at most this many transitions of each batch. */
  partialAck?: number;
  /** Answer nothing (a dead learner, a cut cable). */
  silent?: boolean;
  /** Go silent after this many more transitions messages have been answered. */
  silentAfterBatches?: number;
  /** Garbage replies to send before each of the next N real replies. */
  malformedReplies?: number;
  /** Answer hello with error (config mismatch). */
  refuseHello?: string;
}

/** The learner stand-in; `stored` is what it kept, per robot, by seq. */
export class LearnerStub {
  endpoint = "";
  policyEndpoint = "";
  stored = new Map<string, Map<number, Transition>>();
  /** Transitions received again after they were stored (dropped as duplicates, as the learner does). */
  duplicates = 0;
  hellos = 0;
  heartbeats = 0;
  batches = 0;
  behaviour: StubBehaviour = {};
  latestPolicy: StubPolicy | undefined;
  heartbeatSec: number | undefined;
  /** Send `durable_seq` in welcome, ack and heartbeat replies (a learner before it did not). */
  reportDurable = false;
  /** Per robot, the acked_seq of the last `checkpoint()`. */
  durable = new Map<string, number>();
  /** Camera frame encodings the welcome lists (a learner before zlib frames listed none). */
  frameEncodings: string[] | undefined = ["zlib"];
  #router: Router | undefined;
  #pub: Publisher | undefined;

  /** Binds a ROUTER (and a PUB for policies) on free loopback ports. */
  static async start(options: { heartbeatSec?: number; endpoint?: string; reportDurable?: boolean } = {}): Promise<LearnerStub> {
    const stub = new LearnerStub();
    stub.heartbeatSec = options.heartbeatSec;
    stub.reportDurable = options.reportDurable ?? false;
    const endpoint = options.endpoint ?? "tcp://127.0.0.1:*";
    checkListenAddress({ setting: "the learner stub's endpoint", address: endpoint, authenticated: false, risk: "send it experience" });
    await stub.#bind(endpoint);
    stub.#pub = new Publisher({ linger: 0 });
    await stub.#pub.bind("tcp://127.0.0.1:*");
    stub.policyEndpoint = stub.#pub.lastEndpoint!;
    return stub;
  }

  ackedSeq(robotId: string): number {
    const s = this.stored.get(robotId);
    if (s === undefined || s.size === 0) return -1;
    let i = -1;
    while (s.has(i + 1)) i++;
    return i;
  }

  durableSeq(robotId: string): number {
    return this.durable.get(robotId) ?? -1;
  }

  /** Makes everything stored so far durable (a completed checkpoint). */
  checkpoint(): void {
    for (const robot of this.stored.keys()) this.durable.set(robot, this.ackedSeq(robot));
  }

  /**
   * Closes the ROUTER and binds a new one on the same port; `wipe` forgets everything stored (a learner without a
   * store), `fromCheckpoint` forgets what the last checkpoint did not hold (a learner killed hard).
   */
  async restart(options: { wipe?: boolean; fromCheckpoint?: boolean } = {}): Promise<void> {
    this.#router?.close();
    this.#router = undefined;
    if (options.wipe) {
      this.stored.clear();
      this.durable.clear();
    }
    if (options.fromCheckpoint) {
      for (const [robot, store] of this.stored) for (const seq of [...store.keys()]) if (seq > this.durableSeq(robot)) store.delete(seq);
    }
    await this.#bind(this.endpoint);
  }

  #durableField(robotId: string): { durable_seq?: number } {
    return this.reportDurable ? { durable_seq: Math.min(this.durableSeq(robotId), this.ackedSeq(robotId)) } : {};
  }

  /** Publishes raw frames on the policy PUB socket. */
  async publish(frames: Buffer[]): Promise<void> {
    await this.#pub!.send(frames);
  }

  /** Publishes `p` as `[policy, header, ...files]`. */
  async publishPolicy(p: StubPolicy): Promise<void> {
    await this.publish(encodePolicy(0, p, { topic: true }));
  }

  close(): void {
    this.#router?.close();
    this.#pub?.close();
  }

  async #bind(endpoint: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const router = new Router({ linger: 0 });
      try {
        await router.bind(endpoint);
        this.#router = router;
        this.endpoint = router.lastEndpoint!;
        void this.#serve(router);
        return;
      } catch (e) {
        router.close();
        if (attempt > 50) throw e;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  async #serve(router: Router): Promise<void> {
    try {
      for await (const [id, ...frames] of router) {
        const replies = this.#handle(frames);
        for (const r of replies) await router.send([id, ...r]);
      }
    } catch {
      // closed
    }
  }

  #handle(frames: Buffer[]): Buffer[][] {
    const b = this.behaviour;
    if (b.silent) return [];
    let m;
    try {
      m = decodeMessage(frames);
    } catch (e) {
      return [encodeMessage({ type: "error", seq: -1, reason: (e as Error).message })];
    }
    const h = m.header;
    let reply: Buffer[];
    switch (h.type) {
      case "hello":
        this.hellos++;
        if (b.refuseHello !== undefined) {
          reply = encodeMessage({ type: "error", seq: h.seq, reason: b.refuseHello });
          break;
        }
        reply = encodeMessage({
          type: "welcome", seq: h.seq, learner: "LearnerStub", acked_seq: this.ackedSeq(h.robot_id as string), ...this.#durableField(h.robot_id as string),
          latest_policy: this.latestPolicy === undefined ? null : { version: this.latestPolicy.version, kind: this.latestPolicy.kind },
          ...(this.heartbeatSec === undefined ? {} : { heartbeat_sec: this.heartbeatSec }),
          ...(this.frameEncodings === undefined ? {} : { frame_encodings: this.frameEncodings }),
        });
        break;
      case "transitions": {
        if (b.silentAfterBatches !== undefined) {
          if (b.silentAfterBatches <= 0) return [];
          b.silentAfterBatches--;
        }
        this.batches++;
        const batch = toTransitions(m);
        const store = this.stored.get(batch.robotId) ?? new Map<number, Transition>();
        this.stored.set(batch.robotId, store);
        const acked = this.ackedSeq(batch.robotId);
        if (batch.firstSeq <= acked + 1) {
          const n = Math.min(batch.transitions.length, b.partialAck ?? Infinity);
          for (let i = 0; i < n; i++) {
            const seq = batch.firstSeq + i;
            if (seq <= acked) this.duplicates++;
            else store.set(seq, batch.transitions[i]);
          }
        }
        reply = encodeMessage({ type: "ack", seq: h.seq, acked_seq: this.ackedSeq(batch.robotId), ...this.#durableField(batch.robotId) });
        break;
      }
      case "heartbeat":
        this.heartbeats++;
        reply = encodeMessage({
          type: "heartbeat", seq: h.seq, acked_seq: this.ackedSeq(h.robot_id as string), ...this.#durableField(h.robot_id as string), policy_version: this.latestPolicy?.version ?? null,
          updates: 0, online_transitions: 0, offline_transitions: 0,
        });
        break;
      case "get_policy":
        reply = this.latestPolicy === undefined ? encodeMessage({ type: "error", seq: h.seq, reason: "no policy yet" }) : encodePolicy(h.seq, this.latestPolicy);
        break;
      default:
        reply = encodeMessage({ type: "error", seq: h.seq, reason: `unexpected ${h.type}` });
    }
    const out: Buffer[][] = [];
    if ((b.malformedReplies ?? 0) > 0) {
      b.malformedReplies!--;
      out.push([Buffer.from([0xc1, 0x00])]);
      out.push(encodeMessage({ type: "ack", seq: 999_999, acked_seq: 0 }));
    }
    out.push(reply);
    return out;
  }
}
