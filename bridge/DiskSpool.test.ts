import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFile, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiskSpool } from "./DiskSpool.ts";
import { recordingLogger } from "./testing/helpers.ts";

const frames = (k: number) => [Buffer.from(`header-${k}`), Buffer.from(new Float32Array([k, k + 0.5]).buffer)];

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "rlft-spool-"));
}

test("records come back in order with their seqs; acked segments are deleted", async () => {
  const dir = await tempDir();
  try {
    const spool = await DiskSpool.open(dir, { segmentBytes: 1 }); // one record per segment
    assert.equal(spool.nextSeq, 0);
    const firsts = await Promise.all([spool.append(frames(1), 3), spool.append(frames(2), 2), spool.append(frames(3), 4)]);
    assert.deepEqual(firsts, [0, 3, 5]);
    const r = await spool.next(2);
    assert.deepEqual([r!.firstSeq, r!.count], [3, 2]);
    assert.deepEqual(r!.frames, frames(2));
    assert.equal((await readdir(dir)).filter((n) => n.startsWith("seg-")).length, 3);
    await spool.ack(3);
    assert.equal((await spool.next(-1))!.firstSeq, 3, "a partly acked record stays");
    await spool.ack(8);
    assert.equal(await spool.next(-1), undefined);
    assert.equal((await readdir(dir)).filter((n) => n.startsWith("seg-")).length, 0);
    await spool.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a crash (no close) loses nothing spooled; seqs continue; a torn tail is skipped with a warning", async () => {
  const dir = await tempDir();
  try {
    const a = await DiskSpool.open(dir);
    await a.append(frames(1), 10);
    await a.append(frames(2), 10);
    await a.ack(9);
    // Dropped without close(); then a half-written record, as a kill mid-write leaves it.
    const seg = (await readdir(dir)).find((n) => n.startsWith("seg-"))!;
    await appendFile(join(dir, seg), Buffer.from([0x52, 0x4c, 0x53, 0x50, 0xff, 0, 0, 0, 1, 2]));
    const logger = recordingLogger();
    const b = await DiskSpool.open(dir, { logger });
    assert.equal(b.ackedSeq, 9);
    assert.equal(b.nextSeq, 20);
    assert.match(logger.warnings.join("\n"), /corrupt or incomplete record/);
    const r = await b.next(b.ackedSeq);
    assert.deepEqual([r!.firstSeq, r!.count, r!.frames], [10, 10, frames(2)]);
    assert.equal(await b.append(frames(3), 5), 20);
    assert.equal((await b.next(19))!.firstSeq, 20);
    await b.close();
    await a.close().catch(() => {}); // only now, so its descriptor is not reclaimed by the GC mid-test
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("renumber moves unacked records right after a new acked seq, and survives a reopen", async () => {
  const dir = await tempDir();
  try {
    const a = await DiskSpool.open(dir);
    await a.append(frames(1), 4);
    await a.append(frames(2), 4);
    await a.ack(3);
    await a.renumber(0);
    assert.equal(a.ackedSeq, -1);
    assert.equal(a.nextSeq, 4);
    await a.close();
    const b = await DiskSpool.open(dir);
    const r = await b.next(-1);
    assert.deepEqual([r!.firstSeq, r!.count, r!.frames], [0, 4, frames(2)]);
    assert.equal(b.nextSeq, 4);
    await b.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("acked records stay until durable; rewind goes back to any seq ≥ the durable pointer; pointers survive a reopen", async () => {
  const dir = await tempDir();
  try {
    const a = await DiskSpool.open(dir, { segmentBytes: 1 });
    for (let k = 0; k < 4; k++) await a.append(frames(k), 5); // seq 0..19, one record per segment
    await a.ack(14, 4);
    assert.deepEqual([a.ackedSeq, a.durableSeq, a.pendingRecords, a.keptRecords], [14, 4, 1, 3]);
    assert.equal((await readdir(dir)).filter((n) => n.startsWith("seg-")).length, 3, "only the durable record's segment is gone");
    await a.ack(12, 20);
    assert.deepEqual([a.ackedSeq, a.durableSeq], [14, 14], "pointers never move back in ack; durable ≤ acked");
    await assert.rejects(a.rewind(9), /cannot rewind to seq 9/);
    await a.close();
    const b = await DiskSpool.open(dir, { segmentBytes: 1 });
    assert.deepEqual([b.ackedSeq, b.durableSeq, b.keptRecords], [14, 14, 1]);
    await b.close();
    const c = await DiskSpool.open(dir);
    await c.append(frames(9), 5); // 20..24
    await c.ack(24, 14);
    await c.rewind(14);
    assert.deepEqual([c.ackedSeq, c.durableSeq, c.nextSeq], [14, 14, 25]);
    assert.deepEqual([(await c.next(c.ackedSeq))!.firstSeq, (await c.next(19))!.firstSeq], [15, 20]);
    await c.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a pointer file from before durable_seq reads as durable = acked", async () => {
  const dir = await tempDir();
  try {
    await writeFile(join(dir, "acked"), JSON.stringify({ acked_seq: 7 }) + "\n");
    const s = await DiskSpool.open(dir);
    assert.deepEqual([s.ackedSeq, s.durableSeq, s.nextSeq], [7, 7, 8]);
    await s.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("appends that wait together (written as one group, one fsync) are each on disk once they resolve, in order", async () => {
  const dir = await tempDir();
  try {
    const spool = await DiskSpool.open(dir, { segmentBytes: 40 }); // a group crosses segments
    const firsts = await Promise.all(Array.from({ length: 6 }, (_, k) => spool.append(frames(k), 2)));
    assert.deepEqual(firsts, [0, 2, 4, 6, 8, 10]);
    const fromMemory = await spool.next(3);
    assert.deepEqual([fromMemory!.firstSeq, fromMemory!.frames], [4, frames(2)]);
    // What a crash (no close) leaves on disk: every resolved append, in order.
    const again = await DiskSpool.open(dir);
    assert.equal(again.nextSeq, 12);
    for (let k = 0; k < 6; k++) assert.deepEqual((await again.next(2 * k - 1))!.frames, frames(k));
    await spool.ack(5);
    assert.equal((await spool.next(-1))!.firstSeq, 6, "acked records leave memory and the send pointer moves on");
    await spool.close();
    await again.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
