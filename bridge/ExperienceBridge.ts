/**
 * The robot's experience uplink (docs/protocol.md, ARCHITECTURE.md §5): `push()` takes a transition on the control
 * tick without blocking; batches go to a disk spool; one background sender sends spooled batches in order, at most one
 * in flight, over a DEALER with a deadline on every exchange, and advances the spool's pointers from the learner's
 * replies: `acked_seq` (stored in the learner's memory) moves the send pointer, `durable_seq` (in its last completed
 * checkpoint) lets the spool delete. A lost link (deadline, or three missed heartbeats) is re-greeted with `hello`, and
 * everything after the learner's `acked_seq` is resent — also after a learner killed hard resumed from an older
 * checkpoint (the send pointer rewinds). Nothing leaves the spool before the learner's checkpoint holds it.
 */
import { join } from "node:path";
import { decode as msgpackDecode, encode as msgpackEncode } from "@msgpack/msgpack";
import { Dealer } from "zeromq";
import { decodeMessage, WireError, type Message } from "./wire.ts";
import { DiskSpool, type SpoolRecord } from "./DiskSpool.ts";
import { encodeGetPolicy, encodeHeartbeat, encodeHello, encodeTransitions, transitionProblem, toAck, toHeartbeatReply, toPolicy, toWelcome, type HeartbeatReply, type HelloFields, type PolicyMessage, type Welcome } from "./messages.ts";
import type { Transition } from "../contracts/Transition.ts";
import { curveClientOptions, type CurveClientKeys } from "./CurveCertificate.ts";
import { FrameCompressor, type FrameEncoding } from "./frameCodec.ts";

/** Options of {@link ExperienceBridge.open}. */
export interface ExperienceBridgeOptions extends HelloFields {
  /** The learner's experience ROUTER, e.g. `tcp://learner:5555`. */
  endpoint: string;
  /** The spool lives in `<spoolDir>/<robotId>/`. */
  spoolDir: string;
  /** Transitions per spooled batch. Default 32. */
  batchSize?: number;
  /** A partial batch is spooled at least this often, so an episode is sent while it runs. Default 500 ms. */
  flushIntervalMs?: number;
  /** Deadline of every exchange; a miss marks the link down. Default 5000 ms. */
  deadlineMs?: number;
  /** Heartbeat period when idle, until the learner's welcome says otherwise. Default 2 s. */
  heartbeatSec?: number;
  /** Wait between failed hellos. Default 1000 ms. */
  reconnectDelayMs?: number;
  /** fsync spool writes. Default true. */
  durable?: boolean;
  /**
   * Hard cap of the spool on disk (bytes). A batch that would pass it is dropped and counted in `overflowed`; sessions
   * pause episodes before that happens (see {@link ExperienceBridge.spoolRoom}). Default 1 GiB.
   */
  spoolCapBytes?: number;
  /** CURVE keys (docs/security.md): the link only comes up with the learner holding the pinned server key. */
  curve?: CurveClientKeys;
  /**
   * Cameras whose frames every transition carries (`images` / `nextImages`, one size per camera); empty (default):
   * none, and a transition with frames is refused, so a camera-less session's bytes stay as they were.
   */
  cameras?: readonly string[];
  /**
   * How camera frames travel (docs/protocol.md § Camera frames): `zlib` (default) deflates each frame once at push()
   * on the thread pool (bridge/frameCodec.ts) and spools and sends the streams; `raw` sends the rgb8 bytes.
   */
  frameEncoding?: FrameEncoding;
  logger?: { warn(msg: string): void; info(msg: string): void };
}

/** Counters of {@link ExperienceBridge.stats}. */
export interface ExperienceStats {
  /** Transitions accepted by push() in this process. */
  pushed: number;
  /** Transitions refused by push() (wrong width, non-finite values, closed bridge). */
  rejected: number;
  /** Transitions written to the spool in this process. */
  spooled: number;
  /** Transitions the learner acknowledged in this process. */
  acked: number;
  /** Highest seq the learner acknowledged (persisted in the spool): the send pointer. */
  ackedSeq: number;
  /** Highest seq in the learner's last completed checkpoint (persisted in the spool): the spool deletes up to it. */
  durableSeq: number;
  /** Transitions sent again because a learner resumed from a checkpoint older than its acks (send pointer rewound). */
  rewound: number;
  /** Transitions a learner lost that this spool no longer held (it lost its store; warned, then renumbered). */
  lost: number;
  /** Seq of the last spooled transition. */
  lastSeq: number;
  /** Transitions dropped because the spool was at its cap (lost: should stay 0 when episodes pause in time). */
  overflowed: number;
  /** Bytes of the spool on disk and its cap. */
  spoolBytes: number;
  spoolCapBytes: number;
  /** Transitions in the batch awaiting its ack (0 or one batch). */
  inFlight: number;
  linkUp: boolean;
  /** Replies that did not decode or matched no waiting request. */
  droppedReplies: number;
  /** Successful re-greetings after a lost link. */
  reconnects: number;
  /** Why the link last went down or a hello failed. */
  lastError: string | null;
}

type Logger = NonNullable<ExperienceBridgeOptions["logger"]>;
type Resolved = Required<Omit<ExperienceBridgeOptions, "logger" | "basePolicyVersion" | "curve" | "cameras" | "frameEncoding">> & { cameras: readonly string[]; frameEncoding: FrameEncoding } & { basePolicyVersion: string | null; logger: Logger; curve?: CurveClientKeys };

interface Pending {
  what: string;
  expect: string;
  resolve(m: Message): void;
  reject(e: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/** Why a learner exchange failed. */
export class LinkError extends Error {
  readonly code: "timeout" | "rejected" | "link_down" | "closed";

  constructor(code: LinkError["code"], message: string) {
    super(message);
    this.name = "LinkError";
    this.code = code;
  }
}

/** A robot's experience uplink with its disk spool. */
export class ExperienceBridge {
  readonly spool: DiskSpool;
  #o: Resolved;
  #batch: Transition[] = [];
  #socket: Dealer | undefined;
  #sendChain: Promise<unknown> = Promise.resolve();
  #pending = new Map<number, Pending>();
  #reqSeq = 0;
  #cursor = -1;
  #heartbeatMs: number;
  #missed = 0;
  #everUp = false;
  #closed = false;
  #wake: (() => void) | undefined;
  #loop: Promise<void> = Promise.resolve();
  #flushTimer: ReturnType<typeof setInterval> | undefined;
  #spoolWrites = new Set<Promise<unknown>>();
  #welcomeListeners = new Set<(w: Welcome) => void>();
  #heartbeatListeners = new Set<(h: HeartbeatReply) => void>();
  #ackListeners = new Set<() => void>();
  #stats: Omit<ExperienceStats, "ackedSeq" | "durableSeq" | "lastSeq" | "spoolBytes" | "spoolCapBytes"> = { pushed: 0, rejected: 0, spooled: 0, acked: 0, rewound: 0, lost: 0, overflowed: 0, inFlight: 0, linkUp: false, droppedReplies: 0, reconnects: 0, lastError: null };
  /** Bytes of batches handed to the spool but not yet written. */
  #pendingBytes = 0;
  /** Largest spooled bytes per transition seen (batch record / count), for {@link spoolRoom}. */
  #bytesPerTransition = 0;
  /** Highest acked seq seen in this process, so a rewound-and-resent transition is not counted as acked twice. */
  #ackedHigh: number;
  /** Each camera's frame size, from its first frame: a batch keeps one size per camera. */
  #frameSizes = new Map<string, string>();
  /** The spool's pointer update for the last ack (not awaited by the sender), the highest seq asked, and its failure. */
  #acking: Promise<void> = Promise.resolve();
  #ackAsked = -1;
  #ackError: Error | undefined;
  /** With zlib frames: each frame's deflate job (started at push), this batch's by frame, and the encode chain. */
  #compressor = new FrameCompressor();
  #batchStreams = new Map<Uint8Array, Promise<Buffer>>();
  #encodeChain: Promise<unknown> = Promise.resolve();
  #encoding = 0;

  private constructor(spool: DiskSpool, o: Resolved) {
    this.spool = spool;
    this.#o = o;
    this.#heartbeatMs = o.heartbeatSec * 1000;
    this.#ackedHigh = spool.ackedSeq;
  }

  /** Opens the spool (replaying what a previous run left unacked) and starts the sender; does not wait for the learner. */
  static async open(options: ExperienceBridgeOptions): Promise<ExperienceBridge> {
    const o: Resolved = { batchSize: 32, flushIntervalMs: 500, deadlineMs: 5000, heartbeatSec: 2, reconnectDelayMs: 1000, durable: true, spoolCapBytes: 1 << 30, logger: console, ...options, cameras: options.cameras ?? [], frameEncoding: options.frameEncoding ?? "zlib" };
    if (o.frameEncoding !== "raw" && o.frameEncoding !== "zlib") throw new Error(`frameEncoding ${JSON.stringify(o.frameEncoding)}: expected "raw" or "zlib" (learner.frame_encoding)`);
    if (!/^[A-Za-z0-9_.-]+$/.test(o.robotId)) throw new Error(`robotId ${JSON.stringify(o.robotId)} must be a plain name (letters, digits, _ . -): it names the spool directory`);
    const spool = await DiskSpool.open(join(o.spoolDir, o.robotId), { durable: o.durable, logger: o.logger });
    if (spool.pendingRecords > 0) o.logger.info(`ExperienceBridge: spool ${spool.dir} holds ${spool.pendingRecords} unacked batches (seq ${spool.ackedSeq + 1}..${spool.lastSeq}); they are sent first`);
    const bridge = new ExperienceBridge(spool, o);
    spool.onAppend(() => bridge.#wakeUp());
    bridge.#flushTimer = setInterval(() => bridge.#spoolBatch(), o.flushIntervalMs);
    bridge.#loop = bridge.#run();
    return bridge;
  }

  /** Records one transition; synchronous, never throws. Returns false (and counts it) when the transition is refused. */
  push(t: Transition): boolean {
    const problem = this.#closed ? "the bridge is closed" : transitionProblem(t, this.#o.obsNames.length, this.#o.actionNames.length, this.#o.cameras, this.#frameSizes);
    if (problem !== undefined) {
      if (this.#stats.rejected++ < 10) this.#o.logger.warn(`ExperienceBridge: dropped transition (episode ${t?.episode} step ${t?.step}): ${problem}`);
      return false;
    }
    this.#batch.push(t);
    this.#stats.pushed++;
    if (this.#o.frameEncoding === "zlib" && t.images !== undefined) {
      for (const frames of [t.images, t.nextImages]) {
        for (const f of Object.values(frames ?? {})) if (!this.#batchStreams.has(f.rgb)) this.#batchStreams.set(f.rgb, this.#compressor.compress(f.rgb));
      }
    }
    if (this.#batch.length >= this.#o.batchSize) this.#spoolBatch();
    return true;
  }

  /** Counters for logs and dashboards. */
  stats(): ExperienceStats {
    return { ...this.#stats, ackedSeq: this.spool.ackedSeq, durableSeq: this.spool.durableSeq, lastSeq: this.spool.lastSeq, spoolBytes: this.spool.bytes + this.#pendingBytes, spoolCapBytes: this.#o.spoolCapBytes };
  }

  /**
   * How many more transitions fit under the spool cap (at the largest size per transition seen so far). A session
   * starts an episode only when a whole episode fits, so the cap is never hit mid-episode.
   */
  spoolRoom(): number {
    const free = this.#o.spoolCapBytes - this.spool.bytes - this.#pendingBytes;
    const per = this.#bytesPerTransition || 1024;
    return Math.max(0, Math.floor(free / per));
  }

  /** Calls `cb` on every welcome (first connection and each reconnect); returns the unsubscribe function. */
  onWelcome(cb: (w: Welcome) => void): () => void {
    this.#welcomeListeners.add(cb);
    return () => this.#welcomeListeners.delete(cb);
  }

  /** Calls `cb` on every heartbeat reply; returns the unsubscribe function. */
  onHeartbeat(cb: (h: HeartbeatReply) => void): () => void {
    this.#heartbeatListeners.add(cb);
    return () => this.#heartbeatListeners.delete(cb);
  }

  /** Asks the learner for a policy package (its latest without `version`); rejects when the link is down. */
  async getPolicy(version?: string): Promise<PolicyMessage> {
    if (!this.#stats.linkUp) throw new LinkError("link_down", `no link to the learner at ${this.#o.endpoint}; cannot ask for policy ${version ?? "(latest)"}`);
    const seq = ++this.#reqSeq;
    return toPolicy(await this.#request(seq, encodeGetPolicy(seq, version), `get_policy ${version ?? "(latest)"}`, "policy"));
  }

  /**
   * Spools the current batch and waits until the learner has acked everything spooled (with `durable`, until its
   * checkpoint holds it: reported by acks and heartbeats, so allow a checkpoint period plus a heartbeat); false on timeout.
   */
  async flush(options: { timeoutMs?: number; durable?: boolean } = {}): Promise<boolean> {
    const deadline = Date.now() + (options.timeoutMs ?? 4 * this.#o.deadlineMs);
    this.#spoolBatch();
    await Promise.allSettled([...this.#spoolWrites]);
    while ((options.durable ? this.spool.durableSeq : this.spool.ackedSeq) < this.spool.lastSeq) {
      const left = deadline - Date.now();
      if (left <= 0 || this.#closed) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        const off = this.#onAck(done);
        function done() {
          clearTimeout(timer);
          off();
          resolve();
        }
      });
    }
    await this.#acking; // the counters of the last ack
    return true;
  }

  /** Spools the current batch, stops the sender and closes the socket; unacked batches stay in the spool for the next run. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#spoolBatch();
    await Promise.allSettled([...this.#spoolWrites]);
    this.#closed = true;
    clearInterval(this.#flushTimer);
    this.#linkDown("closed", false);
    this.#wakeUp();
    await this.#loop;
    await this.#acking;
    await this.spool.close();
  }

  #onAck(cb: () => void): () => void {
    this.#ackListeners.add(cb);
    return () => this.#ackListeners.delete(cb);
  }

  #spoolBatch(): void {
    if (this.#batch.length === 0 || this.#closed) return;
    const batch = this.#batch;
    this.#batch = [];
    const streams = this.#batchStreams;
    this.#batchStreams = new Map();
    // seq and first_seq are stamped when the record is sent (renumbering may change first_seq).
    const encode = (zlib?: (rgb: Uint8Array) => Uint8Array): Buffer[] | undefined => {
      try {
        return encodeTransitions(0, this.#o.robotId, 0, batch, zlib ? { zlib } : {});
      } catch (e) {
        this.#stats.rejected += batch.length;
        this.#o.logger.warn(`ExperienceBridge: dropped a batch of ${batch.length} transitions that does not encode: ${(e as Error).message}`);
        return undefined;
      }
    };
    if (streams.size === 0 && this.#encoding === 0) {
      const frames = encode();
      if (frames !== undefined) this.#append(frames, batch.length);
      return;
    }
    // Frames being deflated: the batch is encoded once its streams are done and appended after the batches before it
    // (spool order). The next batch waits for this append call only, not for its write, so appends still group-commit.
    this.#encoding++;
    const appended = this.#encodeChain.then(async (): Promise<{ write: Promise<unknown> } | undefined> => {
      const done = new Map<Uint8Array, Buffer>();
      try {
        for (const [rgb, stream] of streams) done.set(rgb, await stream);
      } catch (e) {
        this.#stats.rejected += batch.length;
        this.#o.logger.warn(`ExperienceBridge: dropped a batch of ${batch.length} transitions whose frames did not compress: ${(e as Error).message}`);
        return undefined;
      }
      const frames = encode(streams.size > 0 ? (rgb) => done.get(rgb)! : undefined);
      return frames === undefined ? undefined : { write: this.#append(frames, batch.length) };
    }).finally(() => this.#encoding--);
    this.#encodeChain = appended;
    const job = appended.then((a) => a?.write); // settles once the batch is on disk (or refused)
    this.#spoolWrites.add(job);
    void job.finally(() => this.#spoolWrites.delete(job));
  }

  /** Appends one encoded batch to the spool unless that would pass the cap; resolves once it is written (or refused). */
  #append(frames: Buffer[], count: number): Promise<unknown> {
    const bytes = frames.reduce((a, f) => a + f.byteLength, 64);
    this.#bytesPerTransition = Math.max(this.#bytesPerTransition, bytes / count);
    if (this.spool.bytes + this.#pendingBytes + bytes > this.#o.spoolCapBytes) {
      this.#stats.overflowed += count;
      this.#o.logger.warn(`ExperienceBridge: spool ${this.spool.dir} is at its cap (${(this.spool.bytes / 1e6).toFixed(1)} of ${(this.#o.spoolCapBytes / 1e6).toFixed(1)} MB): dropped ${count} transitions — pause episodes before the cap (spoolRoom()), or raise learner.spool_cap_mb`);
      return Promise.resolve();
    }
    this.#pendingBytes += bytes;
    const write = this.spool.append(frames, count).then(
      () => void (this.#stats.spooled += count),
      (e: Error) => this.#o.logger.warn(`ExperienceBridge: cannot spool ${count} transitions to ${this.spool.dir}: ${e.message}`),
    ).finally(() => (this.#pendingBytes -= bytes));
    this.#spoolWrites.add(write);
    void write.finally(() => this.#spoolWrites.delete(write));
    return write;
  }

  async #run(): Promise<void> {
    while (!this.#closed) {
      try {
        if (this.#ackError !== undefined) {
          const e = this.#ackError;
          this.#ackError = undefined;
          throw e;
        }
        if (!this.#stats.linkUp) {
          await this.#connect();
          continue;
        }
        const rec = await this.spool.next(Math.max(this.#cursor, this.spool.ackedSeq));
        if (rec === undefined) await this.#idle();
        else await this.#send(rec);
      } catch (e) {
        if (this.#closed) break;
        this.#linkDown(e instanceof LinkError || e instanceof WireError ? e.message : `unexpected: ${(e as Error).stack ?? String(e)}`);
        await this.#sleep(this.#o.reconnectDelayMs);
      }
    }
  }

  async #connect(): Promise<void> {
    this.#socket?.close();
    const socket = new Dealer({ linger: 0, sendHighWaterMark: 100, ...curveClientOptions(this.#o.curve) });
    socket.connect(this.#o.endpoint);
    this.#socket = socket;
    void this.#receive(socket);
    const seq = ++this.#reqSeq;
    const o = this.#o;
    let welcome: Welcome;
    try {
      const frames = encodeHello(seq, { robotId: o.robotId, configHash: o.configHash, obsNames: o.obsNames, actionNames: o.actionNames, task: o.task, basePolicyVersion: o.basePolicyVersion });
      welcome = toWelcome(await this.#request(seq, frames, "hello", "welcome"));
    } catch (e) {
      if (this.#closed) return;
      const curveHint = o.curve !== undefined && e instanceof LinkError && e.code === "timeout" ? " (CURVE: the handshake fails silently when the learner's key differs from the pinned one or its curve_authorized lacks this robot's public key)" : "";
      this.#linkDown((e as Error).message + curveHint);
      await this.#sleep(o.reconnectDelayMs);
      return;
    }
    if (o.frameEncoding === "zlib" && o.cameras.length > 0 && !welcome.frameEncodings.includes("zlib")) {
      this.#linkDown(`the learner at ${o.endpoint} (${welcome.learner}) does not take zlib camera frames (its welcome lists frame_encodings [${welcome.frameEncodings.join(", ")}]): update the learner, or set learner.frame_encoding: raw in the launch file`);
      await this.#sleep(o.reconnectDelayMs);
      return;
    }
    if (welcome.heartbeatSec !== undefined) this.#heartbeatMs = welcome.heartbeatSec * 1000;
    await this.#reconcile(welcome.ackedSeq, welcome.durableSeq, "welcome");
    this.#missed = 0;
    this.#stats.linkUp = true;
    this.#stats.lastError = null;
    if (this.#everUp) this.#stats.reconnects++;
    this.#everUp = true;
    o.logger.info(`ExperienceBridge: linked to ${welcome.learner} at ${o.endpoint}; learner holds seq ≤ ${welcome.ackedSeq} (checkpointed ≤ ${welcome.durableSeq}), spool holds ≤ ${this.spool.lastSeq}`);
    for (const cb of this.#welcomeListeners) cb(welcome);
  }

  /**
   * Aligns the spool with what the learner says it stores (`learnerAcked`) and has checkpointed (`learnerDurable`);
   * docs/protocol.md § Disk spool. The next record sent holds `learnerAcked + 1`.
   */
  async #reconcile(learnerAcked: number, learnerDurable: number, from: string): Promise<void> {
    // An ack at or past every seq asked so far needs no rewind nor renumbering; anything else sees the spool's pointers
    // only after the last pointer update ran.
    const usual = from === "ack" && learnerAcked >= this.#ackAsked;
    if (!usual) await this.#acking;
    const spool = this.spool;
    if (learnerAcked < spool.durableSeq || learnerAcked >= spool.nextSeq) {
      // The learner lost seqs its checkpoint held (restart without its store), or knows seqs this spool never made (the
      // spool was wiped): a gap would make it store nothing, so the kept records continue right after its acked_seq.
      let why: string;
      const lost = Math.max(0, spool.durableSeq - learnerAcked);
      if (lost > 0) {
        why = `the learner lost seq ${learnerAcked + 1}..${spool.ackedSeq} although its checkpoint held ≤ ${spool.durableSeq} (restarted without its run_dir?); ${lost} transitions (seq ${learnerAcked + 1}..${spool.durableSeq}) were deleted here once durable and cannot be re-sent`;
      } else why = `the learner already holds seq ≤ ${learnerAcked}, beyond this spool's ${spool.lastSeq} (was the spool wiped?)`;
      this.#o.logger.warn(`ExperienceBridge: ${why}; renumbering the ${spool.keptRecords} kept batches to start at seq ${learnerAcked + 1}`);
      await spool.renumber(learnerAcked + 1);
      this.#ackedHigh = learnerAcked;
      this.#stats.lost += lost; // counted once the spool is renumbered, so stats() never shows one without the other
    } else if (learnerAcked < spool.ackedSeq) {
      // A learner killed hard resumed from a checkpoint older than its last acks: everything after it is still here.
      const n = spool.ackedSeq - learnerAcked;
      this.#o.logger.warn(`ExperienceBridge: the learner (${from}) holds seq ≤ ${learnerAcked} but had acked ≤ ${spool.ackedSeq} (it resumed from its checkpoint); resending those ${n} transitions from the spool`);
      await spool.rewind(learnerAcked);
      this.#stats.rewound += n;
    } else if (usual && learnerAcked < spool.nextSeq) {
      // The usual ack: the next batch goes out at once; the spool persists the pointers on its queue (which may be
      // writing appends), and a failure there takes the link down on the sender's next turn.
      this.#cursor = learnerAcked;
      this.#ackAsked = learnerAcked;
      this.#acking = this.#ack(learnerAcked, learnerDurable).catch((e: Error) => void (this.#ackError = e));
      return;
    }
    await this.#ack(learnerAcked, learnerDurable);
    this.#cursor = learnerAcked;
    this.#ackAsked = spool.ackedSeq;
  }

  async #ack(ackedSeq: number, durableSeq: number): Promise<void> {
    const before = { acked: this.spool.ackedSeq, durable: this.spool.durableSeq };
    const upTo = Math.min(ackedSeq, this.spool.lastSeq);
    await this.spool.ack(upTo, Math.min(durableSeq, upTo));
    if (upTo > this.#ackedHigh) {
      this.#stats.acked += upTo - this.#ackedHigh;
      this.#ackedHigh = upTo;
    }
    if (this.spool.ackedSeq !== before.acked || this.spool.durableSeq !== before.durable) for (const cb of this.#ackListeners) cb();
  }

  async #send(rec: SpoolRecord): Promise<void> {
    const seq = ++this.#reqSeq;
    const head = msgpackDecode(rec.frames[0]) as Record<string, unknown>;
    const frames = [Buffer.from(msgpackEncode({ ...head, seq, first_seq: rec.firstSeq })), ...rec.frames.slice(1)];
    this.#stats.inFlight = rec.count;
    let ack: { ackedSeq: number; durableSeq: number };
    try {
      ack = toAck(await this.#request(seq, frames, `transitions ${rec.firstSeq}..${rec.firstSeq + rec.count - 1}`, "ack"));
    } finally {
      this.#stats.inFlight = 0;
    }
    // Also a gap (acked < first_seq - 1) moves the cursor back: the next record sent holds acked + 1.
    await this.#reconcile(ack.ackedSeq, ack.durableSeq, "ack");
  }

  /** Waits for a new record; after a quiet heartbeat period, sends a heartbeat. */
  async #idle(): Promise<void> {
    const appended = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        resolve(false);
      }, this.#heartbeatMs);
      this.#wake = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve(true);
      };
    });
    if (appended || this.#closed) return;
    const seq = ++this.#reqSeq;
    try {
      const reply = toHeartbeatReply(await this.#request(seq, encodeHeartbeat(seq, this.#o.robotId), "heartbeat", "heartbeat", Math.min(this.#o.deadlineMs, this.#heartbeatMs)));
      this.#missed = 0;
      await this.#reconcile(reply.ackedSeq, reply.durableSeq, "heartbeat");
      for (const cb of this.#heartbeatListeners) cb(reply);
    } catch (e) {
      if (!(e instanceof LinkError) || e.code !== "timeout") throw e;
      this.#missed++;
      this.#o.logger.warn(`ExperienceBridge: heartbeat ${this.#missed}/3 to ${this.#o.endpoint} unanswered`);
      if (this.#missed >= 3) throw new LinkError("link_down", `3 heartbeats to ${this.#o.endpoint} unanswered`);
    }
  }

  #wakeUp(): void {
    this.#wake?.();
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        resolve();
      }, ms);
      this.#wake = () => {
        if (!this.#closed) return; // only close() cuts a reconnect delay short
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
    });
  }

  #linkDown(reason: string, log = true): void {
    const wasUp = this.#stats.linkUp;
    this.#stats.linkUp = false;
    this.#stats.lastError = reason;
    if (log) this.#o.logger.warn(`ExperienceBridge: ${wasUp ? "link down" : "no link"} to ${this.#o.endpoint}: ${reason}; spooling and reconnecting`);
    this.#socket?.close();
    this.#socket = undefined;
    this.#sendChain = Promise.resolve();
    for (const p of this.#pending.values()) {
      clearTimeout(p.timer);
      p.reject(new LinkError(this.#closed ? "closed" : "link_down", `link down while waiting for the reply to ${p.what}`));
    }
    this.#pending.clear();
  }

  #request(seq: number, frames: Buffer[], what: string, expect: string, timeoutMs = this.#o.deadlineMs): Promise<Message> {
    const socket = this.#socket;
    if (this.#closed || socket === undefined) return Promise.reject(new LinkError(this.#closed ? "closed" : "link_down", `cannot send ${what}: ${this.#closed ? "bridge closed" : "no socket"}`));
    return new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => {
        // Forgotten: a late reply with this seq matches nothing and is dropped.
        this.#pending.delete(seq);
        reject(new LinkError("timeout", `learner at ${this.#o.endpoint} did not answer ${what} (seq ${seq}) within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(seq, { what, expect, resolve, reject, timer });
      // zeromq allows one send at a time per socket; with no peer a DEALER send waits (the deadline covers it).
      const send = this.#sendChain.then(() => socket.send(frames));
      this.#sendChain = send.catch(() => undefined);
      send.catch(() => undefined);
    });
  }

  async #receive(socket: Dealer): Promise<void> {
    try {
      for await (const frames of socket) this.#onReply(frames);
    } catch {
      // socket closed
    }
  }

  #onReply(frames: Buffer[]): void {
    let m: Message;
    try {
      m = decodeMessage(frames);
    } catch (e) {
      this.#stats.droppedReplies++;
      this.#o.logger.warn(`ExperienceBridge: dropped a malformed reply from ${this.#o.endpoint}: ${(e as Error).message}`);
      return;
    }
    const p = this.#pending.get(m.header.seq);
    if (p === undefined || (m.header.type !== p.expect && m.header.type !== "error")) {
      this.#stats.droppedReplies++;
      // An unsolicited error (seq -1) is a notice, e.g. another peer said hello with this robot's id and was refused.
      const why = m.header.type === "error" ? `: ${String(m.header.reason)}` : "";
      this.#o.logger.warn(`ExperienceBridge: dropped a ${m.header.type} reply with seq ${m.header.seq} that matches no waiting request${why}`);
      return;
    }
    this.#pending.delete(m.header.seq);
    clearTimeout(p.timer);
    if (m.header.type === "error") p.reject(new LinkError("rejected", `learner at ${this.#o.endpoint} refused ${p.what}: ${String(m.header.reason)}`));
    else p.resolve(m);
  }
}
