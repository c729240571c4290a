/**
 * The robot's disk spool of encoded transition batches (docs/protocol.md § Disk spool), in `<dir>/`:
 * append-only segment files `seg-<first seq>.spool` of CRC-checked records, plus an `acked` pointer file holding two
 * pointers: `acked_seq` (the learner holds every seq ≤ it in memory: the send pointer) and `durable_seq` (≤ acked_seq;
 * the learner's last completed checkpoint holds every seq ≤ it: the deletion pointer). A record is deleted only once
 * `durable_seq` covers it, so a learner killed hard and resumed from its checkpoint can be sent everything after its
 * restored acked_seq again ({@link DiskSpool.rewind}). What is kept is bounded by disk, not memory (only a small index
 * per record is held). Sequence numbers continue across restarts.
 *
 * Record layout (little-endian): u32 magic "RLSP", u32 body length, u32 crc32(body), body =
 * f64 first_seq, u32 count, u32 frame count, u32 frame length × frame count, frame bytes.
 * Every mutation runs on one FIFO queue and a record is written with one `write` on an O_APPEND handle, so two
 * records never interleave; a crash mid-write leaves a short or CRC-failing tail that the next open skips. Appends
 * that wait together are written as one group with one fsync (group commit); each resolves only once it is on disk.
 * Unacked records appended in this process stay in memory (up to CACHE_BYTES) so the sender does not read them back.
 */
import { mkdir, open, readdir, readFile, rename, rm, truncate, writeFile, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";

const MAGIC = 0x50534c52; // "RLSP" read as little-endian u32
const HEAD = 12;
const SEG_RE = /^seg-(\d{16})\.spool$/;
const READY_RE = /^renumber-(\d{16})\.ready$/;
/** Most bytes of waiting appends written with one fsync. */
const GROUP_BYTES = 32 << 20;
/** Most bytes of unacked records kept in memory for the sender. */
const CACHE_BYTES = 64 << 20;

interface WaitingAppend {
  frames: readonly Uint8Array[];
  count: number;
  resolve(firstSeq: number): void;
  reject(e: Error): void;
}

/** One spooled batch. */
export interface SpoolRecord {
  firstSeq: number;
  count: number;
  frames: Buffer[];
}

/** Options of {@link DiskSpool.open}. */
export interface DiskSpoolOptions {
  /** A segment is closed for appends once it reaches this size. Default 4 MiB. */
  segmentBytes?: number;
  /** fsync every record and pointer write (power loss, not only a crashed process). Default true. */
  durable?: boolean;
  logger?: { warn(msg: string): void; info?(msg: string): void };
}

type ResolvedOptions = Required<Omit<DiskSpoolOptions, "logger">> & { logger: NonNullable<DiskSpoolOptions["logger"]> };

interface RecordIndex {
  offset: number;
  length: number;
  firstSeq: number;
  count: number;
}

interface Segment {
  path: string;
  firstSeq: number;
  size: number;
  records: RecordIndex[];
}

/** An open spool directory; one instance per directory at a time. */
export class DiskSpool {
  readonly dir: string;
  #acked: number;
  #durable: number;
  #nextSeq: number;
  #segments: Segment[];
  #writer: { seg: Segment; fh: FileHandle } | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #opts: ResolvedOptions;
  #closed = false;
  #appendListeners = new Set<() => void>();
  /** Appends not yet written, and whether a drain of them is queued. */
  #waiting: WaitingAppend[] = [];
  #drainQueued = false;
  /** Unacked records appended in this process, by first seq, so the sender does not read them back from disk. */
  #cache = new Map<number, SpoolRecord>();
  #cacheBytes = 0;

  private constructor(dir: string, acked: number, durable: number, segments: Segment[], opts: ResolvedOptions) {
    this.dir = dir;
    this.#acked = acked;
    this.#durable = durable;
    this.#segments = segments;
    this.#opts = opts;
    const last = segments.at(-1)?.records.at(-1);
    this.#nextSeq = Math.max(acked + 1, last === undefined ? 0 : last.firstSeq + last.count);
  }

  /** Opens (or creates) the spool in `dir`, recovering from a crash: corrupt tails are skipped with a warning. */
  static async open(dir: string, options: DiskSpoolOptions = {}): Promise<DiskSpool> {
    const opts = { segmentBytes: 4 << 20, durable: true, logger: console, ...options };
    await mkdir(dir, { recursive: true });
    let { acked, durable } = await readPointers(dir, opts.logger);
    let names = await readdir(dir);
    // A renumbering that got as far as `.ready` is complete: it replaces every older segment (see renumber()).
    const ready = names.find((n) => READY_RE.test(n));
    if (ready !== undefined) {
      const first = Number(READY_RE.exec(ready)![1]);
      for (const n of names) if (SEG_RE.test(n)) await rm(join(dir, n));
      await rename(join(dir, ready), join(dir, segName(first)));
      acked = durable = first - 1;
      await writePointers(dir, acked, durable, opts.durable);
      names = await readdir(dir);
    }
    for (const n of names) if (n.endsWith(".tmp")) await rm(join(dir, n), { force: true });
    const segments: Segment[] = [];
    for (const name of names.filter((n) => SEG_RE.test(n)).sort()) {
      const seg = await scanSegment(join(dir, name), Number(SEG_RE.exec(name)![1]), opts.logger);
      seg.records = seg.records.filter((r) => r.firstSeq + r.count - 1 > durable);
      if (seg.records.length === 0) await rm(seg.path, { force: true });
      else segments.push(seg);
    }
    return new DiskSpool(dir, acked, durable, segments, opts);
  }

  /** Highest seq the learner has acknowledged (-1: none): the send pointer. */
  get ackedSeq(): number {
    return this.#acked;
  }

  /** Highest seq in the learner's last completed checkpoint (-1: none; ≤ ackedSeq): records up to it are deleted. */
  get durableSeq(): number {
    return this.#durable;
  }

  /** Records kept on disk (not yet durable on the learner), acked or not. */
  get keptRecords(): number {
    return this.#segments.reduce((a, s) => a + s.records.length, 0);
  }

  /** Bytes of the segment files on disk (what a spool cap limits). */
  get bytes(): number {
    return this.#segments.reduce((a, s) => a + s.size, 0);
  }

  /** Seq the next appended transition gets. */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** Records on disk not fully acked. */
  get pendingRecords(): number {
    return this.#segments.reduce((a, s) => a + s.records.filter((r) => r.firstSeq + r.count - 1 > this.#acked).length, 0);
  }

  /** Seq of the last spooled transition (-1 when none ever was). */
  get lastSeq(): number {
    return this.#nextSeq - 1;
  }

  /** Calls `cb` after every append; returns the unsubscribe function. */
  onAppend(cb: () => void): () => void {
    this.#appendListeners.add(cb);
    return () => this.#appendListeners.delete(cb);
  }

  /**
   * Appends a batch of `count` transitions; `frames` are stored as given (and kept in memory until sent: do not
   * change them afterwards). Seqs are assigned in call order when the write runs; resolves with the batch's first seq
   * once the record is on disk. Appends waiting together are written as one group with one fsync (group commit, at
   * most {@link GROUP_BYTES} per group): each still resolves only once its own record is on disk.
   */
  append(frames: readonly Uint8Array[], count: number): Promise<number> {
    if (this.#closed) return Promise.reject(new Error(`DiskSpool ${this.dir} is closed`));
    return new Promise<number>((resolve, reject) => {
      this.#waiting.push({ frames, count, resolve, reject });
      if (!this.#drainQueued) this.#queueDrain();
    });
  }

  #queueDrain(): void {
    this.#drainQueued = true;
    this.#enqueue(() => this.#drain()).catch((e: Error) => {
      // The spool closed (or a write failed) before these appends ran: they are not on disk.
      this.#drainQueued = false;
      for (const w of this.#waiting.splice(0)) w.reject(e);
    });
  }

  /** Writes waiting appends (up to GROUP_BYTES), fsyncs once, then indexes and resolves them; queues the rest. */
  async #drain(): Promise<void> {
    this.#drainQueued = false;
    const group: WaitingAppend[] = [];
    let bytes = 0;
    while (this.#waiting.length > 0 && (group.length === 0 || bytes < GROUP_BYTES)) {
      const w = this.#waiting.shift()!;
      group.push(w);
      bytes += w.frames.reduce((a, f) => a + f.byteLength, 0);
    }
    if (this.#waiting.length > 0) this.#queueDrain(); // after whatever (acks) was queued meanwhile
    const written: { seg: Segment; index: RecordIndex; rec: SpoolRecord; w: WaitingAppend }[] = [];
    try {
      let seq = this.#nextSeq;
      for (const w of group) {
        const rec = encodeRecord(seq, w.count, w.frames);
        const writer = await this.#writerFor(seq);
        await writeAll(writer.fh, rec);
        const index = { offset: writer.seg.size, length: rec.byteLength, firstSeq: seq, count: w.count };
        writer.seg.size += rec.byteLength;
        written.push({ seg: writer.seg, index, rec: { firstSeq: seq, count: w.count, frames: w.frames.map(asBuffer) }, w });
        seq += w.count;
      }
      if (this.#opts.durable) await this.#writer?.fh.datasync();
    } catch (e) {
      for (const w of group) w.reject(e as Error);
      return;
    }
    for (const { seg, index, rec, w } of written) {
      seg.records.push(index);
      this.#nextSeq = index.firstSeq + index.count;
      this.#remember(rec);
      w.resolve(index.firstSeq);
    }
    for (const cb of this.#appendListeners) cb();
  }

  /** Keeps `rec` (on disk now) in memory for the sender while it is unacked and the cache has room. */
  #remember(rec: SpoolRecord): void {
    const bytes = rec.frames.reduce((a, f) => a + f.byteLength, 0);
    if (this.#cacheBytes + bytes > CACHE_BYTES) return;
    this.#cache.set(rec.firstSeq, rec);
    this.#cacheBytes += bytes;
  }

  /** Drops cached records whose every seq is ≤ `seq` (all of them when `seq` is Infinity). */
  #forget(seq: number): void {
    for (const [first, rec] of this.#cache) {
      if (first + rec.count - 1 > seq) continue;
      this.#cache.delete(first);
      this.#cacheBytes -= rec.frames.reduce((a, f) => a + f.byteLength, 0);
    }
  }

  /**
   * The first record holding a seq > `afterSeq`: from memory when it was appended in this process and is still unacked
   * (up to CACHE_BYTES of them), else read from disk; undefined when there is none yet.
   */
  async next(afterSeq: number): Promise<SpoolRecord | undefined> {
    for (const seg of this.#segments) {
      for (const r of seg.records) {
        if (r.firstSeq + r.count - 1 <= afterSeq) continue;
        const cached = this.#cache.get(r.firstSeq);
        if (cached !== undefined && cached.count === r.count) return cached;
        const fh = await open(seg.path, "r");
        try {
          const buf = Buffer.alloc(r.length);
          await fh.read(buf, 0, r.length, r.offset);
          return { firstSeq: r.firstSeq, count: r.count, frames: decodeRecord(buf)!.frames };
        } finally {
          await fh.close();
        }
      }
    }
    return undefined;
  }

  /**
   * Records that the learner holds every seq ≤ `ackedSeq`, and that its last checkpoint holds every seq ≤
   * `durableSeq` (default `ackedSeq`: a learner that does not report durable_seq). Both pointers only move forward
   * here (see {@link rewind}); `durableSeq` is capped at the acked pointer. Persists them and deletes the records
   * and segments the durable pointer covers.
   */
  ack(ackedSeq: number, durableSeq: number = ackedSeq): Promise<void> {
    return this.#enqueue(async () => {
      const acked = Math.max(this.#acked, ackedSeq);
      const durable = Math.max(this.#durable, Math.min(durableSeq, acked));
      if (acked === this.#acked && durable === this.#durable) return;
      this.#acked = acked;
      this.#durable = durable;
      this.#forget(acked);
      await writePointers(this.dir, acked, durable, this.#opts.durable);
      await this.#dropDurable();
    });
  }

  /**
   * Moves the send pointer back to `ackedSeq` (a learner that resumed from a checkpoint older than its last acks):
   * every record after it is still on disk because `ackedSeq` ≥ the durable pointer. Throws (changing nothing) when
   * `ackedSeq` is below the durable pointer: those records are gone, see {@link renumber}.
   */
  rewind(ackedSeq: number): Promise<void> {
    return this.#enqueue(async () => {
      if (ackedSeq < this.#durable) throw new Error(`DiskSpool ${this.dir}: cannot rewind to seq ${ackedSeq}: seq ≤ ${this.#durable} were durable on the learner and are deleted`);
      if (ackedSeq >= this.#acked) return;
      this.#acked = ackedSeq;
      await writePointers(this.dir, this.#acked, this.#durable, this.#opts.durable);
    });
  }

  async #dropDurable(): Promise<void> {
    const durable = this.#durable;
    const keep: Segment[] = [];
    for (const seg of this.#segments) {
      seg.records = seg.records.filter((r) => r.firstSeq + r.count - 1 > durable);
      if (seg.records.length > 0) {
        keep.push(seg);
        continue;
      }
      if (this.#writer?.seg === seg) {
        await this.#writer.fh.close();
        this.#writer = undefined;
      }
      await rm(seg.path, { force: true });
    }
    this.#segments = keep;
  }

  /**
   * Renumbers every kept record (all not yet durable, acked or not) so the first starts at `newFirst`, and sets both
   * pointers to `newFirst - 1`. For a learner whose `acked_seq` does not fit this spool (it lost its store, or this
   * spool was wiped): seqs must stay contiguous after its acked_seq or it stores nothing. Crash-safe: the rewritten
   * segment becomes `.ready` before the old ones are removed, and open() finishes a renumbering that got that far.
   */
  renumber(newFirst: number): Promise<void> {
    return this.#enqueue(async () => {
      this.#forget(Infinity);
      const recs: SpoolRecord[] = [];
      for (const seg of this.#segments) for (const r of seg.records) {
        const buf = await readSlice(seg.path, r.offset, r.length);
        recs.push({ firstSeq: r.firstSeq, count: r.count, frames: decodeRecord(buf)!.frames });
      }
      if (this.#writer !== undefined) {
        await this.#writer.fh.close();
        this.#writer = undefined;
      }
      const seg: Segment = { path: join(this.dir, segName(newFirst)), firstSeq: newFirst, size: 0, records: [] };
      const parts: Buffer[] = [];
      let seq = newFirst;
      for (const r of recs) {
        const rec = encodeRecord(seq, r.count, r.frames);
        seg.records.push({ offset: seg.size, length: rec.byteLength, firstSeq: seq, count: r.count });
        seg.size += rec.byteLength;
        parts.push(rec);
        seq += r.count;
      }
      const tmp = join(this.dir, `renumber-${pad(newFirst)}.tmp`);
      const ready = join(this.dir, `renumber-${pad(newFirst)}.ready`);
      await writeFile(tmp, Buffer.concat(parts), { flush: this.#opts.durable });
      await rename(tmp, ready);
      for (const s of this.#segments) await rm(s.path, { force: true });
      await rm(seg.path, { force: true });
      await rename(ready, seg.path);
      this.#acked = this.#durable = newFirst - 1;
      await writePointers(this.dir, this.#acked, this.#durable, this.#opts.durable);
      this.#segments = recs.length > 0 ? [seg] : [];
      if (recs.length === 0) await rm(seg.path, { force: true });
      this.#nextSeq = seq;
    });
  }

  /** Closes the append handle; the spool stays on disk. */
  close(): Promise<void> {
    const done = this.#enqueue(async () => {
      this.#closed = true;
      this.#forget(Infinity);
      await this.#writer?.fh.close();
      this.#writer = undefined;
    });
    return done;
  }

  async #writerFor(firstSeq: number): Promise<{ seg: Segment; fh: FileHandle }> {
    if (this.#writer !== undefined && this.#writer.seg.size < this.#opts.segmentBytes) return this.#writer;
    if (this.#writer !== undefined && this.#opts.durable) await this.#writer.fh.datasync(); // its records of this group
    await this.#writer?.fh.close();
    const seg: Segment = { path: join(this.dir, segName(firstSeq)), firstSeq, size: 0, records: [] };
    const fh = await open(seg.path, "a");
    this.#segments.push(seg);
    this.#writer = { seg, fh };
    return this.#writer;
  }

  #enqueue<T>(op: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error(`DiskSpool ${this.dir} is closed`));
    const run = this.#queue.then(op);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}

function asBuffer(f: Uint8Array): Buffer {
  return Buffer.isBuffer(f) ? f : Buffer.from(f.buffer, f.byteOffset, f.byteLength);
}

function pad(n: number): string {
  return String(n).padStart(16, "0");
}

function segName(firstSeq: number): string {
  return `seg-${pad(firstSeq)}.spool`;
}

function encodeRecord(firstSeq: number, count: number, frames: readonly Uint8Array[]): Buffer {
  const bodyLen = 16 + 4 * frames.length + frames.reduce((a, f) => a + f.byteLength, 0);
  const buf = Buffer.alloc(HEAD + bodyLen);
  buf.writeUInt32LE(MAGIC, 0);
  buf.writeUInt32LE(bodyLen, 4);
  buf.writeDoubleLE(firstSeq, HEAD);
  buf.writeUInt32LE(count, HEAD + 8);
  buf.writeUInt32LE(frames.length, HEAD + 12);
  let off = HEAD + 16;
  for (const f of frames) {
    buf.writeUInt32LE(f.byteLength, off);
    off += 4;
  }
  for (const f of frames) {
    buf.set(f, off);
    off += f.byteLength;
  }
  buf.writeUInt32LE(crc32(buf.subarray(HEAD)), 8);
  return buf;
}

/** The record at the start of `buf`, or undefined when it is short or fails its checks. */
function decodeRecord(buf: Buffer): (SpoolRecord & { length: number }) | undefined {
  if (buf.byteLength < HEAD + 16 || buf.readUInt32LE(0) !== MAGIC) return undefined;
  const bodyLen = buf.readUInt32LE(4);
  if (buf.byteLength < HEAD + bodyLen || bodyLen < 16) return undefined;
  const body = buf.subarray(HEAD, HEAD + bodyLen);
  if (crc32(body) !== buf.readUInt32LE(8)) return undefined;
  const firstSeq = body.readDoubleLE(0);
  const count = body.readUInt32LE(8);
  const n = body.readUInt32LE(12);
  let off = 16 + 4 * n;
  if (off > bodyLen) return undefined;
  const frames: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const len = body.readUInt32LE(16 + 4 * i);
    if (off + len > bodyLen) return undefined;
    frames.push(Buffer.from(body.subarray(off, off + len)));
    off += len;
  }
  return { firstSeq, count, frames, length: HEAD + bodyLen };
}

async function scanSegment(path: string, firstSeq: number, logger: NonNullable<DiskSpoolOptions["logger"]>): Promise<Segment> {
  const buf = await readFile(path);
  const seg: Segment = { path, firstSeq, size: 0, records: [] };
  let off = 0;
  while (off < buf.byteLength) {
    const rec = decodeRecord(buf.subarray(off));
    if (rec === undefined) {
      logger.warn(`DiskSpool: ${path} has a corrupt or incomplete record at byte ${off} (a crash mid-write?); skipping the last ${buf.byteLength - off} bytes`);
      await truncate(path, off);
      break;
    }
    seg.records.push({ offset: off, length: rec.length, firstSeq: rec.firstSeq, count: rec.count });
    off += rec.length;
  }
  seg.size = off;
  return seg;
}

async function readSlice(path: string, offset: number, length: number): Promise<Buffer> {
  const fh = await open(path, "r");
  try {
    const buf = Buffer.alloc(length);
    await fh.read(buf, 0, length, offset);
    return buf;
  } finally {
    await fh.close();
  }
}

async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  // One write call for the whole record; loop only for the (rare) short write.
  let off = 0;
  while (off < buf.byteLength) {
    const { bytesWritten } = await fh.write(buf, off, buf.byteLength - off);
    off += bytesWritten;
  }
}

/** The `acked` file; a file from before durable_seq (records were deleted once acked) reads as durable = acked. */
async function readPointers(dir: string, logger: NonNullable<DiskSpoolOptions["logger"]>): Promise<{ acked: number; durable: number }> {
  const path = join(dir, "acked");
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return { acked: -1, durable: -1 };
  }
  const ok = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= -1;
  try {
    const p = JSON.parse(text) as { acked_seq?: unknown; durable_seq?: unknown };
    const durable = p.durable_seq ?? p.acked_seq;
    if (ok(p.acked_seq) && ok(durable) && durable <= p.acked_seq) return { acked: p.acked_seq, durable };
  } catch {
    // fall through: the learner's welcome tells us what it has, and it drops duplicates.
  }
  logger.warn(`DiskSpool: ${path} is unreadable (${JSON.stringify(text.slice(0, 80))}); assuming nothing was acked — the learner drops what it already has`);
  return { acked: -1, durable: -1 };
}

async function writePointers(dir: string, acked: number, durable: number, sync: boolean): Promise<void> {
  const tmp = join(dir, "acked.tmp");
  await writeFile(tmp, JSON.stringify({ acked_seq: acked, durable_seq: durable }) + "\n", { flush: sync });
  await rename(tmp, join(dir, "acked"));
}
