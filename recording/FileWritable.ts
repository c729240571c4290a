/** IWritable over a file handle: every buffer McapWriter hands over is appended to the file at once. */
import { open, type FileHandle } from "node:fs/promises";
import type { IWritable } from "@mcap/core";

export class FileWritable implements IWritable {
  #pos = 0n;

  private constructor(
    readonly path: string,
    readonly handle: FileHandle,
    readonly sync: boolean,
  ) {}

  /** Creates (never overwrites) the file. `sync`: fdatasync after each write (survives power loss, slower). */
  static async create(path: string, opts: { sync?: boolean } = {}): Promise<FileWritable> {
    try {
      return new FileWritable(path, await open(path, "wx"), opts.sync ?? false);
    } catch (err) {
      throw new Error(`Cannot create episode file ${path}: ${(err as Error).message}`, { cause: err });
    }
  }

  async write(buffer: Uint8Array): Promise<void> {
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
