/**
 * Serves the operator web UI (web/static: plain HTML/JS/CSS, no bundler) over HTTP and streams status and
 * camera frames over a WebSocket (`ws`). Loopback by default; on any other address a token is required.
 * Every API and WebSocket request must carry the token when one is set (`?token=` or `Authorization:
 * Bearer`); the Host header must name this server and a browser Origin must match it, so a web page on
 * another site cannot drive the robot (DNS rebinding, cross-site WebSocket).
 *
 * Nothing a client sends can end the robot process: every socket (HTTP requests and responses, refused upgrades,
 * WebSocket clients) has an error listener, a request line that is not a URL answers 400, and a frame the WebSocket
 * protocol refuses (over 4096 bytes, invalid UTF-8 in a text frame: RFC 6455 §5.6 and §8.1, a missing mask, a
 * reserved opcode) closes that one client with its close code (1009, 1007, 1002) and is counted in `refused.frame`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { readFileSync } from "node:fs";
import { timingSafeEqual, createHash } from "node:crypto";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { z } from "zod";
import { checkListenAddress } from "../runtime/listenAddress.ts";
import type { CommandRequest, CommandResult, OperatorStatus } from "../contracts/operator.ts";

const STATIC_DIR = join(dirname(fileURLToPath(import.meta.url)), "static");
const FILES: Record<string, string> = { "/": "index.html", "/index.html": "index.html", "/app.js": "app.js", "/style.css": "style.css", "/charts.js": "charts.js" };
const TYPES: Record<string, string> = { html: "text/html; charset=utf-8", js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8" };

/** What the server needs from the operator console. */
export interface UiBackend {
  status(): OperatorStatus;
  onStatus(cb: (s: OperatorStatus) => void): () => void;
  onFrame(cb: (f: { width: number; height: number; encoding: string; data: Uint8Array }) => void): () => void;
  command(req: CommandRequest): CommandResult;
  malformed(from: string, detail: string): void;
  /** Keys held in the browser, for the web keyboard teleop (optional). */
  key?(key: string, down: boolean): void;
}

/** Options of {@link OperatorUiServer.start}. */
export interface OperatorUiServerOptions {
  host: string;
  port: number;
  token?: string;
  cameraFps: number;
}

/** Messages a browser may send. */
const ClientMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("command"), cmd: z.string().max(32), robot: z.string().max(128).optional() }).strict(),
  z.object({ type: z.literal("key"), key: z.string().max(16), down: z.boolean() }).strict(),
]);

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);
/** Largest text frame a browser sends (a command or a key is under 100 bytes). */
const MAX_FRAME_BYTES = 4096;
/** Browsers at once: each gets the status and the camera stream; an operator station needs a handful. */
const MAX_CLIENTS = 32;
const ignore = () => undefined;

/** The running UI server. */
export class OperatorUiServer {
  readonly url: string;
  readonly #server: Server;
  readonly #wss: WebSocketServer;
  readonly #off: (() => void)[] = [];
  readonly #o: OperatorUiServerOptions;
  /**
   * Requests refused: bad token, foreign Host/Origin, a request line that is no URL (`bad_request`), WebSocket frames
   * the protocol refuses (`frame`: oversize, invalid UTF-8, unmasked...; the client is closed), upgrades beyond
   * {@link MAX_CLIENTS} (`busy`), and sockets that failed under the server (`socket`: reset by the peer and the like).
   */
  readonly refused = { token: 0, origin: 0, bad_request: 0, frame: 0, busy: 0, socket: 0 };

  private constructor(server: Server, wss: WebSocketServer, url: string, o: OperatorUiServerOptions) {
    this.#server = server;
    this.#wss = wss;
    this.url = url;
    this.#o = o;
  }

  /** Starts listening; the URL it returns carries the token. */
  static async start(backend: UiBackend, o: OperatorUiServerOptions): Promise<OperatorUiServer> {
    checkListenAddress({ setting: "ui.host", address: o.host, authenticated: !!o.token, risk: "press the robot's buttons (start, resume, release the e-stop) and watch its camera", authFix: "set ui.token (or ui.token_file) in the launch file" });
    const files = new Map<string, { body: Buffer; type: string; etag: string }>();
    for (const [route, f] of Object.entries(FILES)) {
      const body = readFileSync(join(STATIC_DIR, f));
      files.set(route, { body, type: TYPES[f.split(".").pop()!], etag: createHash("sha1").update(body).digest("hex").slice(0, 16) });
    }
    let self: OperatorUiServer | null = null;
    const server = createServer((req, res) => self!.#http(req, res, backend, files));
    // A client that resets its connection makes the next write fail with ECONNRESET/EPIPE on that socket: without a
    // listener that error would end the process (issue 24 item 1). Each failure is counted and closes that socket only.
    const socketFailed = (socket: { destroy(): void }) => {
      if (self) self.refused.socket++;
      socket.destroy();
    };
    server.on("connection", (socket) => socket.on("error", () => socketFailed(socket)));
    server.on("clientError", (_e, socket) => {
      if (self) self.refused.bad_request++;
      if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
      socket.destroy();
    });
    const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
    wss.on("error", ignore);
    server.on("upgrade", (req, socket, head) => {
      socket.on("error", () => socketFailed(socket));
      const refuse = (status: string) => void socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
      const path = pathOf(req);
      if (path === null) return (self!.refused.bad_request++, refuse("400 Bad Request"));
      const why = self!.#refuse(req);
      if (why || path !== "/ws") return refuse(why === "token" ? "401 Unauthorized" : why ? "403 Forbidden" : "404 Not Found");
      if (wss.clients.size >= MAX_CLIENTS) return (self!.refused.busy++, refuse("503 Service Unavailable"));
      wss.handleUpgrade(req, socket, head, (ws) => self!.#client(ws, backend));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", (e: NodeJS.ErrnoException) =>
        reject(new Error(e.code === "EADDRINUSE" ? `ui.port ${o.port} on ${o.host} is in use: pick another port (or 0 for a free one)` : `operator UI cannot listen on ${o.host}:${o.port}: ${e.message}`)),
      );
      server.listen(o.port, o.host, () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    const host = o.host.includes(":") ? `[${o.host}]` : o.host;
    self = new OperatorUiServer(server, wss, `http://${host}:${port}/${o.token ? `?token=${encodeURIComponent(o.token)}` : ""}`, o);
    return self;
  }

  /** Which check a request fails: "token", "origin", or null when it may proceed. */
  #refuse(req: IncomingMessage): "token" | "origin" | null {
    const host = req.headers.host ?? "";
    const addr = this.#server.address() as AddressInfo;
    const hostName = host.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
    // A loopback server answers only to loopback names: a DNS-rebound name cannot reach it from a browser.
    if (LOOPBACK.has(this.#o.host) && !LOOPBACK.has(hostName)) return (this.refused.origin++, "origin");
    const origin = req.headers.origin;
    if (origin !== undefined) {
      let oh = "";
      try {
        oh = new URL(origin).host;
      } catch {
        oh = "";
      }
      if (oh !== host && oh !== `${hostName}:${addr.port}`) return (this.refused.origin++, "origin");
    }
    if (!this.#o.token) return null;
    const given = searchParam(req, "token") ?? (req.headers.authorization?.startsWith("Bearer ") ? req.headers.authorization.slice(7) : "");
    const a = Buffer.from(given);
    const b = Buffer.from(this.#o.token);
    if (a.length === b.length && timingSafeEqual(a, b)) return null;
    this.refused.token++;
    return "token";
  }

  #http(req: IncomingMessage, res: ServerResponse, backend: UiBackend, files: Map<string, { body: Buffer; type: string; etag: string }>): void {
    req.on("error", ignore);
    res.on("error", ignore);
    const path = pathOf(req);
    if (path === null) {
      this.refused.bad_request++;
      return json(res, 400, { error: "the request target is not a URL path" });
    }
    const f = files.get(path);
    if (f && req.method === "GET") {
      // The page itself is public (it holds no data); everything it fetches needs the token.
      res.writeHead(200, { "content-type": f.type, "cache-control": "no-cache", etag: f.etag, "x-content-type-options": "nosniff", "content-security-policy": "default-src 'self'; connect-src 'self'; img-src 'self' data:" });
      res.end(f.body);
      return;
    }
    if (path.startsWith("/api/")) {
      const why = this.#refuse(req);
      if (why) return json(res, why === "token" ? 401 : 403, { error: why === "token" ? "missing or wrong token" : "foreign Host or Origin" });
      if (path === "/api/status" && req.method === "GET") return json(res, 200, backend.status());
      if (path === "/api/command" && req.method === "POST") {
        const chunks: Buffer[] = [];
        let size = 0;
        req.on("data", (c: Buffer) => {
          size += c.length;
          if (size > MAX_FRAME_BYTES) {
            this.refused.bad_request++;
            json(res, 413, { error: `body over ${MAX_FRAME_BYTES} bytes` });
            req.destroy();
          } else chunks.push(c);
        });
        req.on("end", () => {
          // Decoded once, as a whole: a multi-byte character split across chunks stays intact.
          const parsed = parseCommand(Buffer.concat(chunks).toString("utf8"));
          if ("error" in parsed) {
            backend.malformed("http", parsed.error);
            return json(res, 400, { error: parsed.error });
          }
          const r = backend.command({ cmd: parsed.cmd, robot: parsed.robot, from: "web_ui" });
          json(res, r.ok ? 200 : (r as { ignored?: boolean }).ignored ? 409 : 422, r);
        });
        return;
      }
    }
    json(res, 404, { error: `no route ${req.method} ${path}` });
  }

  #client(ws: WebSocket, backend: UiBackend): void {
    // `ws` reports a frame it refuses (too big, invalid UTF-8, unmasked, bad opcode) as an 'error' on this client and
    // closes it with the matching close code; without this listener the error would end the process.
    ws.on("error", () => {
      this.refused.frame++;
      ws.terminate();
    });
    const send = (s: OperatorStatus) => ws.readyState === ws.OPEN && ws.send(JSON.stringify({ type: "status", status: s }));
    send(backend.status());
    const offStatus = backend.onStatus(send);
    let lastFrame = 0;
    const offFrame = backend.onFrame((f) => {
      const now = Date.now();
      if (now - lastFrame < 1000 / this.#o.cameraFps || ws.readyState !== ws.OPEN || ws.bufferedAmount > 1 << 20) return;
      lastFrame = now;
      // Binary frame: u16 width, u16 height, u8 channels (3 = rgb8), then the pixels (little-endian header).
      const hdr = Buffer.alloc(5);
      hdr.writeUInt16LE(f.width, 0);
      hdr.writeUInt16LE(f.height, 2);
      hdr.writeUInt8(f.encoding === "rgb8" ? 3 : 1, 4);
      ws.send(Buffer.concat([hdr, Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength)]));
    });
    this.#off.push(offStatus, offFrame);
    ws.on("message", (data, isBinary) => {
      let msg: z.infer<typeof ClientMessage>;
      try {
        if (isBinary) throw new Error("binary message");
        msg = ClientMessage.parse(JSON.parse(data.toString()));
      } catch (e) {
        backend.malformed("web_ui", (e as Error).message.slice(0, 200));
        return;
      }
      if (msg.type === "key") backend.key?.(msg.key, msg.down);
      else {
        const r = backend.command({ cmd: msg.cmd, robot: msg.robot, from: "web_ui" });
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: "result", cmd: msg.cmd, ...r }));
      }
    });
    ws.on("close", () => {
      offStatus();
      offFrame();
    });
  }

  /** Closes every connection and the server. */
  async close(): Promise<void> {
    for (const off of this.#off) off();
    for (const c of this.#wss.clients) c.terminate();
    this.#wss.close();
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }
}

function json(res: ServerResponse, code: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** The path of a request, or null when its target is no URL (`//[`, `http://%`): answered 400, never thrown. */
function pathOf(req: IncomingMessage): string | null {
  try {
    return new URL(req.url ?? "/", "http://x").pathname;
  } catch {
    return null;
  }
}

/** A query parameter of a request ("" when the target is no URL or has none). */
function searchParam(req: IncomingMessage, name: string): string | null {
  try {
    return new URL(req.url ?? "/", "http://x").searchParams.get(name);
  } catch {
    return null;
  }
}

/** Parses an HTTP command body: {"cmd": "...", "robot": "..."}. */
function parseCommand(body: string): { cmd: string; robot?: string } | { error: string } {
  try {
    const r = z.object({ cmd: z.string().max(32), robot: z.string().max(128).optional() }).strict().safeParse(JSON.parse(body));
    return r.success ? r.data : { error: r.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ") };
  } catch (e) {
    return { error: `not JSON: ${(e as Error).message}` };
  }
}
