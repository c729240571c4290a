/**
 * operator_console: the one place operator commands arrive (web UI, MQTT, keyboard, gamepad buttons) and
 * the operator's status is assembled (episode, timer, who is in control, policy version, rolling success
 * and intervention rates, learner status, joint state, camera). Commands are validated here: a command for
 * another robot is ignored and counted, a command that does not fit the episode's state is refused with the
 * reason. Success/failure become terminal /reward messages (source = where they came from), e-stop is the
 * latched /safety/estop, start/reset go to the session through `EpisodeControl`.
 */
import type { NodeHandle, Publisher } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import type { Intervention } from "../contracts/msgs.generated.ts";
import type { EpisodeManagerNode } from "./EpisodeManagerNode.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header, type EpisodeEventMsg, type JointStateMsg } from "../contracts/msgs.ts";
import { OPERATOR_COMMANDS, type CommandRequest, type CommandResult, type ConsoleEpisode, type OperatorCommand, type OperatorStatus } from "../contracts/operator.ts";

/** What the session does on start/reset (the console cannot begin episodes by itself: the session owns seeds). */
export interface EpisodeControl {
  /** Starts the next episode; returns a reason when it cannot. */
  start(): string | null;
  /** Resets the world for the next episode (sim: reset; real robot: drive home), or a reason. */
  reset(): string | null;
}

/** Options of the console. */
export interface OperatorConsoleOptions {
  robot: string;
  task: string;
  controlHz: number;
  manager: EpisodeManagerNode;
  control: EpisodeControl;
  policyVersion: () => string;
  teleopDevice?: string;
  /** Episodes the rolling rates cover. */
  window?: number;
  /** History kept for the charts (bounded). */
  historyLimit?: number;
}

/** The console node. */
export class OperatorConsoleNode extends NodeBase {
  #o: OperatorConsoleOptions;
  #pubReward?: Publisher<unknown>;
  #pubEstop?: Publisher<{ data: boolean }>;
  #estop = false;
  #inControl = "policy";
  #interventionSteps = 0;
  #joints: { names: string[]; position: number[] } = { names: [], position: [] };
  #history: ConsoleEpisode[] = [];
  #last = { outcome: "", detail: "" };
  #message = "";
  #learner: Record<string, string | number> = {};
  #teleopError: string | null = null;
  #listeners = new Set<(s: OperatorStatus) => void>();
  #frameListeners = new Set<(f: { width: number; height: number; encoding: string; data: Uint8Array }) => void>();
  readonly rejected = { malformed: 0, otherRobot: 0, refused: 0 };

  constructor(node: NodeHandle, opts: OperatorConsoleOptions) {
    super(node);
    this.#o = opts;
  }

  override async configure(): Promise<void> {
    this.#pubReward = this.node.createPublisher(TOPICS.reward.type, TOPICS.reward.topic);
    this.#pubEstop = this.node.createPublisher<{ data: boolean }>(TOPICS.estop.type, TOPICS.estop.topic, { durability: "transient_local", depth: 1 });
    this.subscribe<JointStateMsg>(TOPICS.jointStates, (m) => (this.#joints = { names: [...m.name], position: Array.from(m.position) }));
    this.subscribe<Intervention>(TOPICS.arbiterIntervention, (m) => {
      this.#inControl = m.active ? m.source : "policy";
      if (m.active && this.#o.manager.running) this.#interventionSteps++;
    });
    this.subscribe<EpisodeEventMsg>(TOPICS.episodeEvent, (e) => this.#onEvent(e));
    this.subscribe<{ width: number; height: number; encoding: string; data: Uint8Array }>(TOPICS.image, (m) => {
      for (const cb of this.#frameListeners) cb(m);
    });
  }

  override async activate(): Promise<void> {
    // Status at 5 Hz: enough for a timer and charts, cheap for a phone on Wi-Fi.
    this.every(0.2, () => this.#emit());
  }

  /** Calls `cb` with the status (5 Hz and on every change); returns the function that removes it. */
  onStatus(cb: (s: OperatorStatus) => void): () => void {
    this.#listeners.add(cb);
    return () => this.#listeners.delete(cb);
  }

  /** Calls `cb` with each camera frame. */
  onFrame(cb: (f: { width: number; height: number; encoding: string; data: Uint8Array }) => void): () => void {
    this.#frameListeners.add(cb);
    return () => this.#frameListeners.delete(cb);
  }

  /** Learner numbers shown in the UI (updates, acked transitions, ...), set by the session. */
  setLearner(l: Record<string, string | number>): void {
    this.#learner = l;
  }

  /** A teleop device failed: show it and pause the episode (the arm holds). */
  deviceFault(message: string): void {
    this.#teleopError = message;
    this.#o.manager.pause(`teleop device failed: ${message}`);
    this.#say(message);
  }

  /** A payload that could not be parsed (MQTT, WebSocket): counted, never acted on. */
  malformed(from: string, detail: string): void {
    this.rejected.malformed++;
    this.#say(`rejected a malformed command from ${from}: ${detail}`);
  }

  /** Applies one command; see the file comment. */
  command(req: CommandRequest): CommandResult {
    if (req.robot !== undefined && req.robot !== this.#o.robot) {
      this.rejected.otherRobot++;
      return { ok: false, ignored: true, error: `command for robot '${req.robot}' ignored: this is '${this.#o.robot}'` };
    }
    if (!(OPERATOR_COMMANDS as readonly string[]).includes(req.cmd)) {
      this.rejected.malformed++;
      return { ok: false, error: `unknown command '${req.cmd}' (expected one of ${OPERATOR_COMMANDS.join(", ")})` };
    }
    const err = this.#apply(req.cmd as OperatorCommand, req.from);
    if (err) {
      this.rejected.refused++;
      this.#say(`${req.cmd} from ${req.from} refused: ${err}`);
      this.#emit();
      return { ok: false, error: err };
    }
    this.node.logger.info(`${req.cmd} from ${req.from}`);
    this.#emit();
    return { ok: true };
  }

  #apply(cmd: OperatorCommand, from: string): string | null {
    const m = this.#o.manager;
    switch (cmd) {
      case "start":
        if (this.#estop) return "the e-stop is latched: release it first";
        if (m.running) return "an episode is already running";
        return this.#o.control.start();
      case "pause":
        if (!m.running) return "no episode is running";
        if (m.paused) return this.#estop ? "the e-stop is latched: release it first" : (m.resume(`resumed by ${from}`), null);
        m.pause(`paused by ${from}`);
        return null;
      case "resume":
        if (this.#estop) return "the e-stop is latched: release it first";
        return m.resume(`resumed by ${from}`) ? null : "no paused episode";
      case "success":
      case "failure":
        if (!m.running) return "no episode is running";
        this.#pubReward?.publish({ header: header(this.node.clock.stamp()), reward: cmd === "success" ? 1 : 0, terminal: true, source: from });
        return null;
      case "abort":
        if (!m.running) return "no episode is running";
        m.abort(`aborted by ${from}`);
        return null;
      case "reset":
        if (m.running) m.abort(`reset by ${from}`);
        return this.#o.control.reset();
      case "estop":
        this.#estop = true;
        this.#pubEstop?.publish({ data: true });
        m.pause(`e-stop from ${from}`);
        this.#say(`E-STOP from ${from}: the arm holds; release the e-stop, then resume, abort or mark the episode`);
        return null;
      case "release_estop":
        if (!this.#estop) return "the e-stop is not latched";
        this.#estop = false;
        this.#pubEstop?.publish({ data: false });
        this.#say(`e-stop released by ${from}; the episode stays paused until resumed`);
        return null;
    }
  }

  #onEvent(e: EpisodeEventMsg): void {
    if (e.event === "start") {
      this.#interventionSteps = 0;
      this.#message = "";
    } else if (e.event === "success" || e.event === "failure" || e.event === "timeout" || e.event === "abort") {
      const cur = this.#o.manager.result;
      this.#last = { outcome: e.event, detail: e.detail };
      this.#history.push({ episode: e.episode, outcome: e.event, steps: cur?.steps ?? 0, interventionSteps: this.#interventionSteps, durationSec: cur?.durationSec ?? 0 });
      if (this.#history.length > (this.#o.historyLimit ?? 500)) this.#history.shift();
    }
    this.#emit();
  }

  #say(msg: string): void {
    this.#message = msg;
  }

  /** The current status. */
  status(): OperatorStatus {
    const m = this.#o.manager;
    const w = this.#o.window ?? 20;
    const recent = this.#history.slice(-w);
    const steps = recent.reduce((a, e) => a + e.steps, 0);
    const cur = m.current;
    return {
      robot: this.#o.robot,
      task: this.#o.task,
      online: true,
      state: m.running ? (m.paused ? "paused" : "running") : "idle",
      estop: this.#estop,
      episode: cur.episode,
      seed: cur.seed,
      step: cur.steps,
      maxSteps: cur.maxSteps,
      elapsedSec: cur.elapsedSec,
      controlHz: this.#o.controlHz,
      policyVersion: this.#o.policyVersion(),
      inControl: this.#estop ? "nobody (e-stop)" : m.paused ? "nobody (paused)" : m.running ? this.#inControl : "nobody",
      joints: this.#joints,
      lastOutcome: this.#last.outcome,
      lastDetail: this.#last.detail,
      history: this.#history.slice(-100),
      rollingSuccess: recent.length ? recent.filter((e) => e.outcome === "success").length / recent.length : 0,
      rollingIntervention: steps ? recent.reduce((a, e) => a + e.interventionSteps, 0) / steps : 0,
      window: w,
      learner: this.#learner,
      teleop: { device: this.#o.teleopDevice ?? "none", error: this.#teleopError },
      rejected: { ...this.rejected },
      message: this.#message,
    };
  }

  #emit(): void {
    if (this.#listeners.size === 0) return;
    const s = this.status();
    for (const cb of this.#listeners) cb(s);
  }
}
