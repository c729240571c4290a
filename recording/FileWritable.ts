/** IWritable over a file handle: every buffer McapWriter hands over is appended to the file at once. */
import { open, type FileHandle } from "node:fs/promises";
import type { IWritable } from "@mcap/core";

/**
 * A byte budget shared by the files of a recording session (`recorder.max_mb`): a write that would pass it fails
 * with code ENOSPC before touching the file, exactly as a full disk would, so a robot with a small disk stops
 * recording cleanly instead of filling the disk its OS needs.
 */
export interface DiskQuota {
  limitBytes: number;
  usedBytes: number;
}

export class FileWritable implements IWritable {
  #pos = 0n;

  private constructor(
    readonly path: string,
    readonly handle: FileHandle,
    readonly sync: boolean,
    readonly quota: DiskQuota | undefined,
  ) {}

  /** Creates (never overwrites) the file. `sync`: fdatasync after each write (survives power loss, slower). */
  static async create(path: string, opts: { sync?: boolean; quota?: DiskQuota } = {}): Promise<FileWritable> {
    try {
      return new FileWritable(path, await open(path, "wx"), opts.sync ?? false, opts.quota);
    } catch (err) {
      throw new Error(`Cannot create episode file ${path}: ${(err as Error).message}`, { cause: err });
    }
  }

  async write(buffer: Uint8Array): Promise<void> {
    const q = this.quota;
    if (q !== undefined) {
      if (q.usedBytes + buffer.byteLength > q.limitBytes) {
        throw Object.assign(new Error(`ENOSPC: recording quota of ${(q.limitBytes / 1e6).toFixed(2)} MB reached writing ${this.path} — free space or raise recorder.max_mb`), { code: "ENOSPC" });
      }
      q.usedBytes += buffer.byteLength;
    }
    let off = 0;
    while (off < buffer.byteLength) {
      const { bytesWritten } = await this.handle.write(buffer, off, buffer.byteLength - off);
      off += bytesWritten;
    }
    this.#pos += BigInt(buffer.byteLength);
    if (this.sync) await this.handle.datasync();
  }

  position(): bigint {
    return this.#pos;
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
