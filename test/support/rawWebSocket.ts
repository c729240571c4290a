/**
 * Raw TCP pieces for attacking a WebSocket/HTTP server the way a hostile client can and a well-behaved library
 * never would: hand-built upgrade requests, frames with any opcode, length, mask and payload (RFC 6455 §5.2), and
 * connections ended with a TCP reset.
 */
import { connect, type Socket } from "node:net";
import { randomBytes } from "node:crypto";

/** An upgrade request for `path` (add `?token=` yourself); `extra` headers are appended verbatim. */
export function upgradeRequest(host: string, path: string, extra: Record<string, string> = {}): string {
  const headers = { Host: host, Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Key": randomBytes(16).toString("base64"), "Sec-WebSocket-Version": "13", ...extra };
  return `GET ${path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join("\r\n")}\r\n\r\n`;
}

/** One frame as a client sends it (masked unless `mask: false`); `opcode` 1 = text, 2 = binary, 8 = close, 9 = ping. */
export function frame(opcode: number, payload: Buffer, o: { fin?: boolean; mask?: boolean; rsv?: number; declaredLength?: number } = {}): Buffer {
  const len = o.declaredLength ?? payload.length;
  const head: number[] = [((o.fin ?? true) ? 0x80 : 0) | ((o.rsv ?? 0) << 4) | (opcode & 0x0f)];
  const maskBit = (o.mask ?? true) ? 0x80 : 0;
  let ext = Buffer.alloc(0);
  if (len < 126) head.push(maskBit | len);
  else if (len < 65536) {
    head.push(maskBit | 126);
    ext = Buffer.alloc(2);
    ext.writeUInt16BE(len);
  } else {
    head.push(maskBit | 127);
    ext = Buffer.alloc(8);
    ext.writeBigUInt64BE(BigInt(len));
  }
  if (!(o.mask ?? true)) return Buffer.concat([Buffer.from(head), ext, payload]);
  const key = randomBytes(4);
  const body = Buffer.from(payload);
  for (let i = 0; i < body.length; i++) body[i] ^= key[i % 4];
  return Buffer.concat([Buffer.from(head), ext, key, body]);
}

/** Connects to 127.0.0.1:port; errors (resets from the server) are swallowed: the attacker does not care. */
export function rawConnect(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    let connected = false;
    const s = connect(port, "127.0.0.1", () => ((connected = true), resolve(s)));
    s.on("error", (e) => (connected ? undefined : reject(e)));
  });
}

/** Opens a WebSocket with a raw upgrade; resolves with the socket and the bytes after the 101 response. */
export async function rawWebSocket(port: number, path: string): Promise<{ socket: Socket; status: number; received: () => Buffer; closed: Promise<void> }> {
  const socket = await rawConnect(port);
  let buf = Buffer.alloc(0);
  socket.on("data", (d: Buffer) => (buf = Buffer.concat([buf, d])));
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  socket.write(upgradeRequest(`127.0.0.1:${port}`, path));
  const end = Date.now() + 10_000;
  while (!buf.includes("\r\n\r\n") && Date.now() < end && !socket.destroyed) await new Promise((r) => setTimeout(r, 5));
  const headEnd = buf.indexOf("\r\n\r\n");
  const status = Number(/^HTTP\/1\.1 (\d+)/.exec(buf.toString("latin1"))?.[1] ?? 0);
  const rest = headEnd >= 0 ? headEnd + 4 : buf.length;
  return { socket, status, received: () => buf.subarray(rest), closed };
}

/** The status code of the first close frame (opcode 8) the server sent in `bytes` (server frames are unmasked), or null. */
export function closeCode(bytes: Buffer): number | null {
  let i = 0;
  while (i + 2 <= bytes.length) {
    const opcode = bytes[i] & 0x0f;
    let len = bytes[i + 1] & 0x7f;
    let off = i + 2;
    if (len === 126) {
      len = bytes.readUInt16BE(off);
      off += 2;
    } else if (len === 127) {
      len = Number(bytes.readBigUInt64BE(off));
      off += 8;
    }
    if (opcode === 8) return len >= 2 && off + 2 <= bytes.length ? bytes.readUInt16BE(off) : 1005;
    i = off + len;
  }
  return null;
}
