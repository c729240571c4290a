/**
 * A Gymnasium environment as the robot (`driver: {kind: gym}`): rlft starts `python -m rlft_learner.gym_server` with
 * the learner's Python (app/python.ts), which makes the environment by id and serves it over ZeroMQ on 127.0.0.1 (a
 * random port; every request carries a random token that only this process knows, handed over on the server's stdin).
 *
 * To the stack it is an arm driver and a world, exactly as the MuJoCo sim is: the joints are the env's action vector
 * (names and limits from the launch file); a joint's position is the action value the env last stepped with; each
 * control tick steps the env once with the latest command; /observation is the mapped part of the env's observation;
 * a terminal reward comes from `terminated` (or the mapped info key); image keys become cameras (raw rgb8 bytes).
 * The process dying, hanging past `step_timeout_sec`, or answering what the mapping does not describe latches a fault
 * (one line), which ends the running episode as aborted: the recording keeps everything up to there.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import { Request } from "zeromq";
import type { ArmDriver, DriverStatus, DriverWorld, JointReading } from "../ArmDriver.ts";
import type { CameraFrame, CameraSource } from "../../contracts/camera.ts";
import { findPython, learnerEnv } from "../../app/python.ts";

/** The `driver:` block of kind gym, as parsed (hardware/gym/driver.ts has the schema). */
export interface GymDriverConfig {
  env: string;
  kwargs: Record<string, unknown>;
  modules: string[];
  action: { names: string[]; lower: number[]; upper: number[]; unit: string; initial?: number[]; delta?: boolean };
  observation: { key: string; names: string[] }[];
  cameras: Record<string, string>;
  success: { info?: string };
  expert?: string;
  expert_kwargs?: Record<string, unknown>;
  operator?: string;
  operator_kwargs?: Record<string, unknown>;
  step_timeout_sec: number;
  start_timeout_sec: number;
}

/** A problem with the environment or its mapping, in one sentence. */
export class GymDriverError extends Error {}

interface ReplyHead {
  ok: boolean;
  error?: string;
  state_len?: number;
  images?: { name: string; height: number; width: number }[];
  reward?: number;
  terminated?: boolean;
  truncated?: boolean;
  success?: boolean;
  expert?: number[] | null;
  operator?: number[] | null;
  action?: { shape: number[]; low: number[]; high: number[] };
  observation?: Record<string, { shape: number[]; dtype: string }>;
  max_episode_steps?: number | null;
}

const prod = (s: number[]) => s.reduce((a, b) => a * b, 1);

/** The gym driver. */
export class GymArmDriver implements ArmDriver, DriverWorld {
  readonly config: GymDriverConfig;
  readonly jointNames: readonly string[];
  readonly jointLower: readonly number[];
  readonly jointUpper: readonly number[];
  /** /observation's names: the mapped observation keys, one name per value. */
  readonly observationNames: string[];
  /** The env's own episode limit (its TimeLimit), once configured. */
  maxEpisodeSteps: number | null = null;
  /** Steps and resets served (tests, status). */
  readonly stats = { steps: 0, resets: 0 };
  #python: string | undefined;
  #env: NodeJS.ProcessEnv;
  #state: ArmDriver["state"] = "unconfigured";
  #fault = "";
  #proc: ChildProcessByStdio<Writable, Readable, Readable> | null = null;
  #stderr = "";
  #exited: string | null = null;
  #sock: Request | null = null;
  #endpoint: string | null = null;
  #token = randomBytes(24).toString("hex");
  #queue: Promise<unknown> = Promise.resolve();
  #stepping: Promise<void> | null = null;
  #command: number[];
  #applied: number[];
  #still: number[];
  #obs: number[];
  #frames = new Map<string, CameraFrame>();
  #outcome = { success: false, failed: false, source: "" };
  #reward = 0;
  #expert: number[] | null = null;
  #operator: number[] | null = null;

  constructor(config: GymDriverConfig, opts: { python?: string; env?: NodeJS.ProcessEnv } = {}) {
    const a = config.action;
    const n = a.names.length;
    for (const [key, v] of [["lower", a.lower], ["upper", a.upper], ["initial", a.initial]] as const) {
      if (v !== undefined && v.length !== n) throw new GymDriverError(`driver.action.${key}: expected ${n} values (${a.names.join(", ")}), got ${v.length}`);
    }
    const bad = a.names.filter((_, i) => !(a.lower[i] < a.upper[i]));
    if (bad.length) throw new GymDriverError(`driver.action: lower must be below upper for ${bad.join(", ")}`);
    this.config = config;
    this.jointNames = a.names;
    this.jointLower = a.lower;
    this.jointUpper = a.upper;
    this.observationNames = config.observation.flatMap((o) => o.names);
    const dup = this.observationNames.find((x, i) => this.observationNames.indexOf(x) !== i);
    if (dup) throw new GymDriverError(`driver.observation: the name ${dup} is listed twice — give every observation value its own name`);
    const initial = a.initial ?? a.names.map((_, i) => Math.min(a.upper[i], Math.max(a.lower[i], 0)));
    this.#still = [...initial];
    this.#command = [...initial];
    this.#applied = [...initial];
    this.#obs = this.observationNames.map(() => 0);
    this.#python = opts.python;
    this.#env = opts.env ?? process.env;
  }

  get state(): ArmDriver["state"] {
    return this.#state;
  }
  get fault(): string {
    return this.#fault;
  }
  /** The server's ZeroMQ endpoint (tests: hostile clients), once configured. */
  get endpoint(): string | null {
    return this.#endpoint;
  }
  /** The server's process id (tests). */
  get pid(): number | undefined {
    return this.#proc?.pid ?? undefined;
  }
  /** The scripted expert's action for the current observation (driver.expert), or null. */
  get expertAction(): number[] | null {
    return this.#expert ? [...this.#expert] : null;
  }

  /** The scripted operator's action for the current observation while it has taken over (driver.operator), else null. */
  get operatorAction(): number[] | null {
    return this.#operator ? [...this.#operator] : null;
  }

  /** The last step's reward (dense, as the env gives it). */
  get reward(): number {
    return this.#reward;
  }

  /** Starts the Python process, checks the mapping against the env's spaces and resets it once (seed 0). */
  async configure(): Promise<void> {
    if (!this.#proc) await this.#start();
    await this.#checkSpec();
    await this.reset(0);
    if (this.#fault) throw new GymDriverError(this.#fault);
    this.#state = "inactive";
  }

  async activate(): Promise<void> {
    if (this.#state === "unconfigured") throw new Error("GymArmDriver.activate: configure() first");
    this.#state = "active";
  }

  async deactivate(): Promise<void> {
    if (this.#state === "active") this.#state = "inactive";
  }

  read(_periodSec = 0): { status: DriverStatus; reading?: JointReading } {
    if (this.#state === "unconfigured") return { status: { ok: false, error: "gym driver not configured" } };
    const n = this.jointNames.length;
    const position = this.config.action.delta ? [...this.#still] : [...this.#applied];
    return { status: this.#fault ? { ok: false, error: this.#fault } : { ok: true }, reading: { position, velocity: Array(n).fill(0), effort: Array(n).fill(0) } };
  }

  write(positions: readonly number[]): DriverStatus {
    if (this.#fault) return { ok: false, error: this.#fault };
    if (this.#state !== "active") return { ok: false, error: `gym driver is ${this.#state}: commands are not taken` };
    const n = this.jointNames.length;
    if (positions.length !== n) return { ok: false, error: `gym driver: expected ${n} action values (${this.jointNames.join(", ")}), got ${positions.length}` };
    const bad = this.jointNames.filter((_, i) => !Number.isFinite(positions[i]));
    if (bad.length) return { ok: false, error: `gym driver: the command for ${bad.join(", ")} is not a finite number` };
    this.#command = positions.map((q, i) => Math.min(this.jointUpper[i], Math.max(this.jointLower[i], q)));
    return { ok: true };
  }

  // -- the world ---------------------------------------------------------------------------------------------------

  /** Resets the env with `seed`; a failure latches the fault (never throws). */
  async reset(seed: number): Promise<void> {
    await this.#stepping?.catch(() => undefined);
    this.#outcome = { success: false, failed: false, source: "" };
    this.#reward = 0;
    const r = await this.#request({ token: this.#token, op: "reset", seed: Math.max(0, Math.floor(seed)) });
    if (r) {
      this.stats.resets++;
      // A delta action stands still after a reset; a position target stays where it was commanded.
      if (this.config.action.delta) this.#command = [...this.#still];
      this.#applied = [...this.#command];
    }
  }

  /** Steps the env once with the latest command (a step still in flight is waited for, not doubled). */
  advance(): Promise<void> {
    if (this.#stepping) return this.#stepping;
    if (this.#fault || this.#state !== "active" || this.#outcome.success || this.#outcome.failed) return Promise.resolve();
    const action = [...this.#command];
    const p = (async () => {
      const r = await this.#request({ token: this.#token, op: "step" }, Buffer.from(new Float64Array(action).buffer));
      if (!r) return;
      this.stats.steps++;
      this.#applied = action;
      this.#reward = r.head.reward ?? 0;
      if (r.head.success) this.#outcome = { success: true, failed: false, source: "gym_success" };
      else if (r.head.terminated) this.#outcome = { success: false, failed: true, source: "gym_terminated" };
      else if (r.head.truncated) this.#outcome = { success: false, failed: true, source: "gym_truncated" };
    })().finally(() => (this.#stepping = null));
    this.#stepping = p;
    return p;
  }

  observation(): { names: string[]; values: number[] } {
    return { names: this.observationNames, values: [...this.#obs] };
  }

  status(): { success: boolean; failed: boolean; source?: string } {
    return { ...this.#outcome, source: this.#outcome.source || undefined };
  }

  readonly instruction = null;

  /** A camera fed by the env's image key mapped to `name` (the newest frame). */
  camera(name: string): CameraSource {
    if (!(name in this.config.cameras)) throw new GymDriverError(`camera ${name} is not in driver.cameras (${Object.keys(this.config.cameras).join(", ") || "none"})`);
    return { capture: () => this.#frames.get(name) ?? null };
  }

  /** Asks the server to close, then ends the process. */
  async close(): Promise<void> {
    this.#state = "unconfigured";
    const proc = this.#proc;
    if (proc && this.#exited === null && this.#sock) {
      await Promise.race([this.#request({ token: this.#token, op: "close" }, undefined, true), new Promise((r) => setTimeout(r, 2000))]);
    }
    this.#sock?.close();
    this.#sock = null;
    if (proc && this.#exited === null) {
      const gone = new Promise((r) => proc.once("exit", r));
      proc.stdin.end();
      const t = setTimeout(() => proc.kill("SIGKILL"), 3000);
      await gone;
      clearTimeout(t);
    }
    this.#proc = null;
  }

  // -- the process -------------------------------------------------------------------------------------------------

  async #start(): Promise<void> {
    const python = this.#python ?? findPython(this.#env);
    const proc = spawn(python, ["-m", "rlft_learner.gym_server"], { env: learnerEnv(this.#env), stdio: ["pipe", "pipe", "pipe"] });
    this.#proc = proc;
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (d: string) => (this.#stderr = (this.#stderr + d).slice(-4000)));
    proc.stdin.on("error", () => undefined);
    const { kwargs, ...rest } = this.config;
    proc.stdin.write(JSON.stringify({ token: this.#token, driver: { ...rest, kwargs } }) + "\n");
    const hello = await new Promise<{ port?: number; error?: string; max_episode_steps?: number | null }>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => {
        proc.kill("SIGKILL");
        reject(new GymDriverError(`gym driver: environment '${this.config.env}' was not ready within ${this.config.start_timeout_sec} s — raise driver.start_timeout_sec if it is slow to build`));
      }, this.config.start_timeout_sec * 1000);
      const onData = (d: Buffer) => {
        out += d.toString("utf8");
        const nl = out.indexOf("\n");
        if (nl < 0) return;
        clearTimeout(timer);
        proc.stdout.off("data", onData);
        try {
          resolve(JSON.parse(out.slice(0, nl)));
        } catch {
          reject(new GymDriverError(`gym driver: ${python} -m rlft_learner.gym_server printed ${JSON.stringify(out.slice(0, 200))} instead of its port — the learner package there is not this rlft's`));
        }
      };
      proc.stdout.on("data", onData);
      proc.once("error", (e) => {
        clearTimeout(timer);
        reject(new GymDriverError(`gym driver: cannot run ${python}: ${e.message} — set RLFT_PYTHON or run node scripts/setup-python.mjs`));
      });
      proc.once("exit", (code, sig) => {
        clearTimeout(timer);
        const tail = this.#stderrTail();
        reject(new GymDriverError(`gym driver: ${python} -m rlft_learner.gym_server exited (${sig ?? `code ${code}`}) before serving '${this.config.env}'${tail ? `: ${tail}` : ""}`));
      });
    }).catch((e: Error) => {
      this.#proc = null;
      throw e;
    });
    proc.removeAllListeners("exit");
    proc.once("exit", (code, sig) => {
      this.#exited = sig ?? `code ${code}`;
      if (this.#state !== "unconfigured") this.#latch(`gym environment '${this.config.env}' process exited (${this.#exited})${this.#stderrTail() ? `: ${this.#stderrTail()}` : ""} — the episode ends here; restart the session`);
      this.#sock?.close();
    });
    if (hello.error) {
      await new Promise((r) => (this.#exited === null ? proc.once("exit", r) : r(null)));
      this.#proc = null;
      throw new GymDriverError(hello.error);
    }
    if (!Number.isInteger(hello.port)) throw new GymDriverError(`gym driver: the server sent no port (${JSON.stringify(hello)})`);
    this.maxEpisodeSteps = hello.max_episode_steps ?? null;
    const ms = this.config.step_timeout_sec * 1000;
    this.#sock = new Request({ linger: 0, receiveTimeout: ms, sendTimeout: ms, maxMessageSize: 64 << 20 });
    this.#endpoint = `tcp://127.0.0.1:${hello.port}`;
    this.#sock.connect(this.#endpoint);
  }

  async #checkSpec(): Promise<void> {
    const r = await this.#request({ token: this.#token, op: "spec" }, undefined, true);
    if (!r) throw new GymDriverError(this.#fault);
    const { action, observation } = r.head;
    const id = this.config.env;
    if (!action || !observation) throw new GymDriverError(`gym driver: the server's spec of '${id}' is malformed`);
    const n = this.jointNames.length;
    if (prod(action.shape) !== n) throw new GymDriverError(`environment '${id}' takes ${prod(action.shape)} action values but driver.action.names lists ${n}`);
    const out = this.jointNames.filter((_, i) => this.jointLower[i] < action.low[i] - 1e-9 || this.jointUpper[i] > action.high[i] + 1e-9);
    if (out.length) {
      throw new GymDriverError(`driver.action limits of ${out.join(", ")} lie outside '${id}''s action space [${action.low.map((x) => +x.toFixed(4)).join(", ")}]..[${action.high.map((x) => +x.toFixed(4)).join(", ")}] — narrow driver.action.lower/upper`);
    }
    for (const o of this.config.observation) {
      const s = observation[o.key];
      if (!s) throw new GymDriverError(`driver.observation key '${o.key}' is not in '${id}''s observation (it has: ${Object.keys(observation).map((k) => k || '""').join(", ")})`);
      if (prod(s.shape) !== o.names.length) throw new GymDriverError(`driver.observation key '${o.key}' has shape [${s.shape.join(", ")}] (${prod(s.shape)} values) in '${id}' but lists ${o.names.length} names — list one name per value`);
    }
    for (const [name, key] of Object.entries(this.config.cameras)) {
      const s = observation[key];
      if (!s) throw new GymDriverError(`camera ${name}: driver.cameras maps it to '${key}', which is not in '${id}''s observation (it has: ${Object.keys(observation).join(", ")})`);
      if (s.shape.length !== 3 || s.shape[2] !== 3 || s.dtype !== "uint8") throw new GymDriverError(`camera ${name}: '${key}' in '${id}' is ${s.dtype} of shape [${s.shape.join(", ")}], not an rgb8 image (height × width × 3, uint8)`);
    }
  }

  /**
   * One request/reply, serialised with every other; null when it failed (the fault is latched, or thrown when
   * `raw`). A reply that does not match the mapping latches a fault too.
   */
  #request(head: Record<string, unknown>, body?: Buffer, raw = false): Promise<{ head: ReplyHead; frames: Buffer[] } | null> {
    const run = async () => {
      if (this.#fault && !raw) return null;
      const sock = this.#sock;
      if (!sock || this.#exited !== null) {
        this.#latch(`gym environment '${this.config.env}' process is not running${this.#exited ? ` (exited ${this.#exited})` : ""}`);
        return null;
      }
      let frames: Buffer[];
      try {
        await sock.send(body ? [JSON.stringify(head), body] : [JSON.stringify(head)]);
        frames = await sock.receive();
      } catch (e) {
        const why = this.#exited !== null ? `exited (${this.#exited})${this.#stderrTail() ? `: ${this.#stderrTail()}` : ""}` : (e as { code?: string }).code === "EAGAIN" ? `did not answer ${head.op} within ${this.config.step_timeout_sec} s (driver.step_timeout_sec)` : `failed: ${(e as Error).message}`;
        this.#latch(`gym environment '${this.config.env}' process ${why} — the episode ends here; restart the session`);
        this.#proc?.kill("SIGKILL");
        return null;
      }
      let h: ReplyHead;
      try {
        h = JSON.parse(frames[0].toString("utf8"));
      } catch {
        this.#latch(`gym environment '${this.config.env}': the server's reply is not JSON`);
        return null;
      }
      if (!h.ok) {
        this.#latch(`gym environment '${this.config.env}': ${String(h.error ?? "the server refused the request").split("\n")[0]}`);
        return null;
      }
      if (head.op === "reset" || head.op === "step") {
        const problem = this.#take(h, frames.slice(1));
        if (problem) {
          this.#latch(`gym environment '${this.config.env}': ${problem}`);
          return null;
        }
      }
      return { head: h, frames: frames.slice(1) };
    };
    const p = this.#queue.then(run, run);
    this.#queue = p.catch(() => undefined);
    return p;
  }

  /** Stores an observation reply; returns why it does not fit the mapping, or null. */
  #take(h: ReplyHead, frames: Buffer[]): string | null {
    const want = this.observationNames.length;
    const cams = Object.keys(this.config.cameras);
    if (frames.length !== 1 + cams.length) return `the reply has ${frames.length} frames, expected ${1 + cams.length} (state + one per camera)`;
    if (h.state_len !== want || frames[0].length !== 8 * want) return `the observation has ${frames[0].length / 8} state values but driver.observation names ${want}`;
    const state = new Float64Array(frames[0].buffer.slice(frames[0].byteOffset, frames[0].byteOffset + frames[0].length));
    const images = h.images ?? [];
    const next = new Map<string, CameraFrame>();
    for (let i = 0; i < cams.length; i++) {
      const m = images[i];
      const f = frames[1 + i];
      if (!m || m.name !== cams[i] || !Number.isInteger(m.width) || !Number.isInteger(m.height) || m.width <= 0 || m.height <= 0 || f.length !== m.width * m.height * 3) {
        return `camera ${cams[i]}: the image frame does not match its header (${f.length} bytes for ${m?.width}×${m?.height}×3)`;
      }
      next.set(cams[i], { width: m.width, height: m.height, rgb: new Uint8Array(f.buffer, f.byteOffset, f.length) });
    }
    const nonFinite = this.observationNames.filter((_, i) => !Number.isFinite(state[i]));
    if (nonFinite.length) return `the observation has NaN or infinite values at ${nonFinite.slice(0, 5).join(", ")}`;
    const e = h.expert;
    if (this.config.expert && !(Array.isArray(e) && e.length === this.jointNames.length && e.every((x) => typeof x === "number" && Number.isFinite(x)))) return `the expert's action is missing or malformed`;
    const op = h.operator;
    if (op !== null && op !== undefined && !(this.config.operator && Array.isArray(op) && op.length === this.jointNames.length && op.every((x) => typeof x === "number" && Number.isFinite(x)))) return `the operator's action is malformed`;
    this.#operator = op ?? null;
    this.#obs = Array.from(state);
    this.#expert = this.config.expert ? (e as number[]) : null;
    this.#frames = next;
    return null;
  }

  #latch(msg: string): void {
    if (!this.#fault) this.#fault = msg.replace(/\s*\n\s*/g, " ");
  }

  #stderrTail(): string {
    const lines = this.#stderr.trim().split("\n").filter(Boolean);
    return lines.slice(-1).join(" ").slice(0, 300);
  }
}
