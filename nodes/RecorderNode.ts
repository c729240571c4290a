/**
 * recorder: writes every recorded topic to one MCAP file per episode (ros2msg schemas, CDR), opened on
 * the episode's "start" and closed on its end with the result, plus a session index (index.json).
 * Writes are queued so subscription callbacks never wait on the disk.
 *
 * A directory that already holds episodes is resumed, never overwritten (issue 24 item 7): `index.json` is read back,
 * episode files it does not list (a crash before the index was written) are added from their own metadata, and
 * {@link nextEpisode} continues after the highest episode number found, so no new file collides with an old one.
 */
import { mkdirSync, writeFileSync, renameSync, readFileSync, readdirSync, existsSync } from "node:fs";
import { statfs } from "node:fs/promises";
import type { DiskQuota } from "../recording/FileWritable.ts";
import { join } from "node:path";
import type { NodeHandle } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import { McapEpisodeWriter } from "../recording/McapEpisodeWriter.ts";
import { RECORDED, TOPICS } from "../contracts/topics.ts";
import { timeNs, type EpisodeEventMsg } from "../contracts/msgs.ts";
import { EpisodeReader } from "../recording/EpisodeReader.ts";

const EPISODE_FILE = /^episode_(\d{6,})\.mcap$/;

/** Options of the recorder. */
export interface RecorderOptions {
  outDir: string;
  chunkBytes: number;
  /** Written into every episode's metadata (robot, task, policy version, git revision...). */
  metadata: Record<string, string>;
  topics?: readonly { topic: string; type: string }[];
  /** Byte budget of this recorder's files (recorder.max_mb): past it writes fail as on a full disk. */
  maxBytes?: number;
}

/** One row of the session index. */
export interface IndexEntry {
  episode: number;
  file: string;
  seed: number;
  task: string;
  /** success | failure | timeout | abort; `interrupted` for a file found without an end (the process died). */
  outcome: string;
  steps?: number;
}

/** The recorder node. */
export class RecorderNode extends NodeBase {
  #opts: RecorderOptions;
  /** The open episode's writer (a promise: creating the file is async, writes queue behind it). */
  #writer: Promise<McapEpisodeWriter> | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  #current: IndexEntry | null = null;
  /** Control ticks (observations) recorded in the open episode. */
  #ticks = 0;
  #failed: Error | null = null;
  /** Episodes in the directory: those found at start (resumed), then those written since. */
  readonly index: IndexEntry[] = [];
  /** Episodes that were already in the directory when the recorder started. */
  resumed = 0;
  #next = 0;
  /** The shared byte budget when `maxBytes` is set (tests and operators may raise `limitBytes`). */
  readonly quota: DiskQuota | undefined;
  #failureListeners = new Set<(e: Error) => void>();

  constructor(node: NodeHandle, opts: RecorderOptions) {
    super(node);
    this.#opts = opts;
    this.quota = opts.maxBytes === undefined ? undefined : { limitBytes: opts.maxBytes, usedBytes: 0 };
  }

  /** The first write error since the last {@link recover} (disk full, quota, I/O), or null. */
  get failure(): Error | null {
    return this.#failed;
  }

  /** Calls `cb` once per failure (the stack aborts the episode; a session pauses); returns the unsubscribe function. */
  onFailure(cb: (e: Error) => void): () => void {
    this.#failureListeners.add(cb);
    return () => this.#failureListeners.delete(cb);
  }

  /**
   * After a failure: true (and recording resumes with the next episode) once there is room again — at least
   * `needBytes` free on the disk of outDir and under the quota. Already written episodes are never touched.
   */
  async recover(needBytes = 64 << 20): Promise<boolean> {
    if (this.#failed === null) return true;
    await this.#queue;
    const q = this.quota;
    if (q !== undefined && q.limitBytes - q.usedBytes < Math.min(needBytes, q.limitBytes / 4)) return false;
    const fs = await statfs(this.#opts.outDir).catch(() => null);
    if (fs !== null && fs.bavail * fs.bsize < needBytes) return false;
    this.#failed = null;
    return true;
  }

  /** The first episode number that has no file in the directory yet: where a resumed run continues. */
  get nextEpisode(): number {
    return this.#next;
  }

  /** True while an episode file is open (its end not yet seen). */
  get recording(): boolean {
    return this.#current !== null;
  }

  override async configure(): Promise<void> {
    mkdirSync(this.#opts.outDir, { recursive: true });
    await this.#resume();
    for (const { topic, type } of this.#opts.topics ?? RECORDED) {
      this.subscribe<Record<string, unknown>>({ topic, type }, (msg) => {
        if (topic === TOPICS.episodeEvent.topic) this.#onEvent(msg as unknown as EpisodeEventMsg);
        else this.#write(topic, type, msg);
      });
    }
  }

  override async deactivate(): Promise<void> {
    await this.flush();
  }

  override async shutdown(): Promise<void> {
    if (this.#writer) this.#close({ outcome: "abort", detail: "recorder shut down" }, null);
    await super.shutdown();
  }

  /** Resolves when every queued write has reached the file. Rejects with the first write error. */
  async flush(): Promise<void> {
    await this.#queue;
    if (this.#failed) throw this.#failed;
  }

  #enqueue(fn: () => Promise<unknown>): void {
    this.#queue = this.#queue.then(fn).catch((e: Error) => {
      if (this.#failed) return;
      this.node.logger.error(`recording failed: ${e.message}`);
      this.#failed = e;
      for (const cb of this.#failureListeners) cb(e);
    });
  }

  #onEvent(e: EpisodeEventMsg): void {
    const type = TOPICS.episodeEvent.type;
    if (e.event === "start") {
      const name = `episode_${String(e.episode).padStart(6, "0")}.mcap`;
      this.#next = Math.max(this.#next, e.episode + 1);
      const file = join(this.#opts.outDir, name);
      this.#ticks = 0;
      this.#current = { episode: e.episode, file: name, seed: Number(e.seed), task: e.task, outcome: "running" };
      const m = this.#opts.metadata;
      const episode = { robot: "unknown", policy_version: "unknown", git_revision: "unknown", ...m, task: e.task, seed: Number(e.seed), episode: e.episode, started_at: new Date().toISOString() };
      if (this.#failed) {
        // Recording is stopped until recover(): no new file on a full disk.
        this.#current = null;
        this.#writer = null;
        return;
      }
      const pending = McapEpisodeWriter.create(file, { chunkSize: this.#opts.chunkBytes, episode, quota: this.quota });
      pending.catch(() => undefined); // reported through the queue
      this.#writer = pending;
      this.#write(TOPICS.episodeEvent.topic, type, e as unknown as Record<string, unknown>);
    } else if (e.event === "reset") {
      return;
    } else if (e.event === "pause" || e.event === "resume") {
      this.#write(TOPICS.episodeEvent.topic, type, e as unknown as Record<string, unknown>);
    } else if (this.#current) {
      this.#write(TOPICS.episodeEvent.topic, type, e as unknown as Record<string, unknown>);
      this.#close({ outcome: e.event, detail: e.detail }, e);
    }
  }

  /** Reads back what the directory holds (see the file comment). */
  async #resume(): Promise<void> {
    const dir = this.#opts.outDir;
    const path = join(dir, "index.json");
    if (existsSync(path)) {
      let doc: { format?: unknown; episodes?: unknown };
      try {
        doc = JSON.parse(readFileSync(path, "utf8"));
      } catch (e) {
        throw new Error(`${path} is not valid JSON (${(e as Error).message}): move it away to rebuild the index from the episode files, or record into another directory`);
      }
      if (doc.format !== "rlft-session-index" || !Array.isArray(doc.episodes)) throw new Error(`${path} is not an rlft session index (format ${JSON.stringify(doc.format)}): record into another directory`);
      for (const e of doc.episodes as IndexEntry[]) if (Number.isInteger(e?.episode) && typeof e.file === "string") this.index.push(e);
    }
    const listed = new Set(this.index.map((e) => e.file));
    const files = readdirSync(dir).filter((f) => EPISODE_FILE.test(f)).sort();
    for (const file of files) {
      if (listed.has(file)) continue;
      this.index.push(await recoveredEntry(join(dir, file), Number(EPISODE_FILE.exec(file)![1])));
    }
    this.index.sort((a, b) => a.episode - b.episode);
    this.resumed = this.index.length;
    const numbers = [...this.index.map((e) => e.episode), ...files.map((f) => Number(EPISODE_FILE.exec(f)![1]))];
    this.#next = numbers.length ? Math.max(...numbers) + 1 : 0;
    if (this.index.length > listed.size) this.#writeIndex();
  }

  #write(topic: string, type: string, msg: Record<string, unknown>): void {
    const w = this.#writer;
    if (!this.#current || !w) return;
    const stamp = (msg.header as { stamp?: { sec: number; nanosec: number } } | undefined)?.stamp ?? this.node.clock.stamp();
    const t = timeNs(stamp);
    if (topic === TOPICS.observation.topic) this.#ticks++;
    this.#enqueue(async () => (await w).write(topic, msg, t, { type }));
  }

  #close(result: { outcome: string; detail: string; steps?: number }, _e: EpisodeEventMsg | null): void {
    const entry = this.#current;
    if (!entry) return;
    this.#current = null;
    entry.outcome = result.outcome;
    entry.steps = this.#ticks;
    this.index.push(entry);
    const w = this.#writer;
    this.#writer = null;
    this.#enqueue(async () => {
      if (w) await (await w).close({ success: result.outcome === "success", length: entry.steps ?? 0, reason: result.detail || result.outcome, outcome: result.outcome });
      this.#writeIndex();
    });
  }

  #writeIndex(): void {
    const path = join(this.#opts.outDir, "index.json");
    const tmp = `${path}.tmp`;
    writeFileSync(tmp, JSON.stringify({ format: "rlft-session-index", version: 1, episodes: this.index }, null, 2));
    renameSync(tmp, path);
  }
}

/** An index entry for an episode file the index does not list, from the file's own metadata. */
async function recoveredEntry(path: string, episode: number): Promise<IndexEntry> {
  const file = path.slice(path.lastIndexOf("/") + 1);
  try {
    const r = await EpisodeReader.open(path);
    try {
      const info = r.episode ?? {};
      const result = r.result;
      return { episode, file, seed: Number(info.seed ?? -1), task: info.task ?? "unknown", outcome: result?.outcome ?? "interrupted", ...(result?.length !== undefined ? { steps: Number(result.length) } : {}) };
    } finally {
      await r.close();
    }
  } catch {
    return { episode, file, seed: -1, task: "unknown", outcome: "unreadable" };
  }
}
