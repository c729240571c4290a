/**
 * An RTDE client (the guide's §"Protocol" setup sequence): negotiate the protocol version, read the
 * controller version, set up an output recipe (with its frequency) and an input recipe, start and pause
 * synchronisation; then receive output data packages and send input data packages. Text messages from the
 * controller go to the logger. Section names refer to the RTDE guide cited in rtdeProtocol.ts.
 */
import type { ByteTransport } from "../transport/ByteTransport.ts";
import {
  RTDE,
  RTDE_PROTOCOL_VERSION,
  bytes,
  decodeTextMessage,
  decodeValues,
  encodeValues,
  isRtdeType,
  rtdePackage,
  splitPackages,
  text,
  type RtdeType,
  type RtdeValue,
} from "./rtdeProtocol.ts";
import { RtdeError } from "./RtdeError.ts";

/** A configured recipe. */
export interface Recipe {
  id: number;
  names: string[];
  types: RtdeType[];
}

/** Options of the client. */
export interface RtdeClientOptions {
  /** Deadline for each setup reply. */
  timeoutMs?: number;
  logger?: { warn(msg: string): void; info(msg: string): void };
}

/** An RTDE session on one connection. */
export class RtdeClient {
  readonly transport: ByteTransport;
  #buf: Uint8Array = new Uint8Array(0);
  #waiting: { type: number; resolve: (p: Uint8Array) => void } | null = null;
  #output: Recipe | null = null;
  #onData: ((values: Record<string, RtdeValue>) => void)[] = [];
  #onText: ((m: { message: string; source: string; level: number }) => void)[] = [];
  #timeoutMs: number;
  #logger?: RtdeClientOptions["logger"];
  #off: (() => void)[] = [];
  #closedErr: Error | null = null;
  /** Controller version, after `connectSequence`. */
  controllerVersion = "";
  /** Output packages received / input packages sent. */
  readonly stats = { received: 0, sent: 0, textMessages: 0 };

  constructor(transport: ByteTransport, opts: RtdeClientOptions = {}) {
    this.transport = transport;
    this.#timeoutMs = opts.timeoutMs ?? 2000;
    this.#logger = opts.logger;
    this.#off.push(transport.onData((c) => this.#onBytes(c)));
    this.#off.push(
      transport.onClose((err) => {
        this.#closedErr = new RtdeError("DISCONNECTED", `RTDE connection to ${transport.name} closed${err ? `: ${err.message}` : ""} — check the network cable and that the controller is on`);
      }),
    );
  }

  /** Calls `cb` with every output data package, as name → value. */
  onData(cb: (values: Record<string, RtdeValue>) => void): () => void {
    this.#onData.push(cb);
    return () => (this.#onData = this.#onData.filter((x) => x !== cb));
  }

  /** Calls `cb` with every text message from the controller. */
  onText(cb: (m: { message: string; source: string; level: number }) => void): () => void {
    this.#onText.push(cb);
    return () => (this.#onText = this.#onText.filter((x) => x !== cb));
  }

  /** §RTDE_REQUEST_PROTOCOL_VERSION: asks for v2; the controller answers accepted (1) or not (0). */
  async negotiateVersion(version = RTDE_PROTOCOL_VERSION): Promise<void> {
    const p = new Uint8Array(2);
    new DataView(p.buffer).setUint16(0, version);
    const r = await this.#request(RTDE.REQUEST_PROTOCOL_VERSION, p);
    if (r[0] !== 1) throw new RtdeError("VERSION_REJECTED", `${this.transport.name} refused RTDE protocol version ${version} — the controller software is too old (PolyScope ≥ 3.5 / 5.x speaks v2); update it`);
  }

  /** §RTDE_GET_URCONTROL_VERSION: major.minor.bugfix.build. */
  async getControllerVersion(): Promise<string> {
    const r = await this.#request(RTDE.GET_URCONTROL_VERSION);
    const dv = new DataView(r.buffer, r.byteOffset, r.byteLength);
    this.controllerVersion = r.length >= 16 ? [0, 4, 8, 12].map((o) => dv.getUint32(o)).join(".") : "unknown";
    return this.controllerVersion;
  }

  /** §RTDE_CONTROL_PACKAGE_SETUP_OUTPUTS (v2): frequency (double) + names; rejects NOT_FOUND fields. */
  async setupOutputs(names: readonly string[], frequency: number): Promise<Recipe> {
    const p = new Uint8Array(8 + names.join(",").length);
    new DataView(p.buffer).setFloat64(0, frequency);
    p.set(bytes(names.join(",")), 8);
    const r = await this.#request(RTDE.CONTROL_PACKAGE_SETUP_OUTPUTS, p);
    this.#output = this.#recipe("output", names, r);
    return this.#output;
  }

  /** §RTDE_CONTROL_PACKAGE_SETUP_INPUTS: names; rejects NOT_FOUND and IN_USE fields. */
  async setupInputs(names: readonly string[]): Promise<Recipe> {
    const r = await this.#request(RTDE.CONTROL_PACKAGE_SETUP_INPUTS, bytes(names.join(",")));
    return this.#recipe("input", names, r);
  }

  /** §RTDE_CONTROL_PACKAGE_START. */
  async start(): Promise<void> {
    const r = await this.#request(RTDE.CONTROL_PACKAGE_START);
    if (r[0] !== 1) throw new RtdeError("START_REJECTED", `${this.transport.name} refused to start RTDE synchronisation — set up an output recipe first; another client may hold the connection`);
  }

  /** §RTDE_CONTROL_PACKAGE_PAUSE. */
  async pause(): Promise<void> {
    const r = await this.#request(RTDE.CONTROL_PACKAGE_PAUSE);
    if (r[0] !== 1) throw new RtdeError("START_REJECTED", `${this.transport.name} refused to pause RTDE synchronisation`);
  }

  /** §RTDE_DATA_PACKAGE to the controller: recipe id + values in recipe order. */
  async send(recipe: Recipe, values: Record<string, RtdeValue>): Promise<void> {
    if (this.#closedErr) throw this.#closedErr;
    const data = encodeValues(
      recipe.types,
      recipe.names.map((n) => {
        if (!(n in values)) throw new RtdeError("PROTOCOL", `RTDE input ${n} has no value`);
        return values[n];
      }),
    );
    const p = new Uint8Array(1 + data.length);
    p[0] = recipe.id;
    p.set(data, 1);
    this.stats.sent++;
    await this.transport.write(rtdePackage(RTDE.DATA_PACKAGE, p));
  }

  /** Stops listening (the transport's owner closes it). */
  dispose(): void {
    for (const off of this.#off) off();
  }

  #recipe(kind: "input" | "output", names: readonly string[], r: Uint8Array): Recipe {
    const id = r[0];
    const types = text(r.subarray(1)).split(",");
    const bad = names.map((n, i) => ({ n, t: types[i] })).filter(({ t }) => !t || !isRtdeType(t));
    if (bad.length || types.length !== names.length) {
      const inUse = bad.filter((b) => b.t === "IN_USE").map((b) => b.n);
      const notFound = bad.filter((b) => b.t !== "IN_USE").map((b) => b.n);
      const parts: string[] = [];
      if (inUse.length) parts.push(`${inUse.join(", ")} IN_USE — another RTDE client or a fieldbus (EtherNet/IP, PROFINET) already writes them: stop it, or disable the fieldbus adapter in Installation → Fieldbus`);
      if (notFound.length) parts.push(`${notFound.join(", ")} NOT_FOUND — not a field of this controller version (${this.controllerVersion || "unknown"}); check the names against the RTDE guide`);
      throw new RtdeError("RECIPE_REJECTED", `RTDE ${kind} recipe rejected by ${this.transport.name}: ${parts.join("; ")}`);
    }
    return { id, names: [...names], types: types as RtdeType[] };
  }

  async #request(type: number, payload?: Uint8Array): Promise<Uint8Array> {
    if (this.#closedErr) throw this.#closedErr;
    if (this.#waiting) throw new RtdeError("PROTOCOL", `RTDE request ${String.fromCharCode(type)} while another is pending`);
    const reply = new Promise<Uint8Array>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting = null;
        reject(new RtdeError("TIMEOUT", `no RTDE reply to '${String.fromCharCode(type)}' from ${this.transport.name} in ${this.#timeoutMs} ms — is port 30004 the RTDE interface of a running controller?`));
      }, this.#timeoutMs);
      this.#waiting = {
        type,
        resolve: (p) => {
          clearTimeout(timer);
          this.#waiting = null;
          resolve(p);
        },
      };
    });
    await this.transport.write(rtdePackage(type, payload));
    return reply;
  }

  #onBytes(chunk: Uint8Array): void {
    const b = new Uint8Array(this.#buf.length + chunk.length);
    b.set(this.#buf);
    b.set(chunk, this.#buf.length);
    const { packages, rest, error } = splitPackages(b);
    this.#buf = rest;
    if (error) this.#logger?.warn(`RTDE ${this.transport.name}: ${error}`);
    for (const p of packages) {
      if (p.type === RTDE.DATA_PACKAGE) {
        const rec = this.#output;
        if (!rec || p.payload[0] !== rec.id) continue;
        try {
          const vals = decodeValues(rec.types, p.payload.subarray(1));
          const obj: Record<string, RtdeValue> = {};
          rec.names.forEach((n, i) => (obj[n] = vals[i]));
          this.stats.received++;
          for (const cb of this.#onData) cb(obj);
        } catch (e) {
          this.#logger?.warn(`RTDE ${this.transport.name}: dropped a data package: ${(e as Error).message}`);
        }
      } else if (p.type === RTDE.TEXT_MESSAGE) {
        const m = decodeTextMessage(p.payload);
        this.stats.textMessages++;
        for (const cb of this.#onText) cb(m);
        if (m.level <= 1) this.#logger?.warn(`UR controller (${m.source}): ${m.message}`);
        else this.#logger?.info(`UR controller (${m.source}): ${m.message}`);
      } else if (this.#waiting && this.#waiting.type === p.type) {
        this.#waiting.resolve(p.payload);
      }
    }
  }
}
