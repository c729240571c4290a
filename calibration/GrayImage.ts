/**
 * 8-bit grayscale images: the one pixel format calibration works on. Files are read through
 * ffmpeg (any format it decodes: PNG, JPEG, BMP, PGM…) or, without ffmpeg, as binary PGM (P5).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

/** A grayscale image, row-major, one byte per pixel. */
export interface GrayImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Encodes a binary PGM (P5), the simplest lossless format ffmpeg and every viewer read. */
export function encodePgm(img: GrayImage): Buffer {
  const head = Buffer.from(`P5\n${img.width} ${img.height}\n255\n`, "ascii");
  return Buffer.concat([head, Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength)]);
}

/** Decodes a binary PGM (P5, maxval ≤ 255). */
export function decodePgm(buf: Buffer, name = "<pgm>"): GrayImage {
  const tokens: string[] = [];
  let i = 0;
  while (tokens.length < 4 && i < buf.length) {
    const c = buf[i];
    if (c === 0x23) {
      while (i < buf.length && buf[i] !== 0x0a) i++;
    } else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      i++;
    } else {
      let s = "";
      while (i < buf.length && ![0x20, 0x0a, 0x0d, 0x09].includes(buf[i])) s += String.fromCharCode(buf[i++]);
      tokens.push(s);
    }
  }
  if (tokens[0] !== "P5") throw new Error(`${name}: not a binary PGM (expected magic P5, found ${JSON.stringify(tokens[0])}); install ffmpeg to read PNG/JPEG`);
  const [width, height, maxval] = tokens.slice(1).map(Number);
  if (!(width > 0 && height > 0) || maxval > 255) throw new Error(`${name}: unsupported PGM header ${tokens.join(" ")} (expected 8-bit)`);
  const data = new Uint8Array(buf.subarray(i + 1, i + 1 + width * height));
  if (data.length !== width * height) throw new Error(`${name}: truncated PGM (${data.length} of ${width * height} pixels)`);
  return { width, height, data };
}

/** Writes an image as PGM. */
export function writePgm(path: string, img: GrayImage): void {
  writeFileSync(path, encodePgm(img));
}

/** Reads an image file as grayscale: PGM directly, anything else through ffmpeg. */
export function readGrayImage(path: string): GrayImage {
  const buf = readFileSync(path);
  if (buf.subarray(0, 2).toString("ascii") === "P5") return decodePgm(buf, path);
  // ffmpeg converts any image format to PGM on stdout (the pgm image2pipe muxer keeps the size in the header).
  const r = spawnSync("ffmpeg", ["-v", "error", "-i", path, "-frames:v", "1", "-f", "image2pipe", "-vcodec", "pgm", "-pix_fmt", "gray", "pipe:1"], { maxBuffer: 1 << 28 });
  if (r.error) throw new Error(`Cannot read ${path}: ffmpeg is not installed (apt-get install ffmpeg), and only PGM files are read without it`);
  if (r.status !== 0) throw new Error(`Cannot read ${path}: ffmpeg failed: ${r.stderr.toString().trim().split("\n")[0]}`);
  return decodePgm(r.stdout, path);
}
