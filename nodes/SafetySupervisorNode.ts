/**
 * safety_supervisor: the only path from an actor to the driver. Applies the pure limits of
 * hardware/safety.ts to every proposed command (NaN/Inf guard, joint limits, step clamp), runs a
 * command watchdog (no fresh command → hold the measured position), a per-tick deadline (the command for the
 * previous observation never came → hold at once and report `deadline_miss`) and publishes every change it makes.
 * A software e-stop (/safety/estop, latched) or a paused episode freezes the arm where it is: proposals are
 * dropped until the e-stop is released and the episode resumed.
 */
import type { NodeHandle, Publisher } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import { safeJointCommand, type JointLimits, type SafetyChange } from "../hardware/safety.ts";
import { limitRates, limitWorkspace, type CommandHistory, type RateLimits, type WorkspaceBox } from "../hardware/motionLimits.ts";
import type { ForwardKinematics } from "../hardware/kinematics.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header, jointState, fromTime, sameTime, type JointStateMsg, type EpisodeEventMsg, type ObservationMsg } from "../contracts/msgs.ts";
import type { Time } from "../runtime/Runtime.ts";

/** Options of the safety supervisor. */
export interface SafetySupervisorOptions {
  limits: JointLimits;
  /** No fresh proposed command for this long → hold. */
  watchdogSec: number;
  /** Where proposed commands come from: the arbiter's output when the stack has one (default: the actor's). */
  inputTopic?: string;
  /** Joint velocity / acceleration limits over the command stream; dt is the control period. */
  rates?: RateLimits & { dt: number };
  /** A box (base frame) the end effector must stay in. */
  workspace?: { fk: ForwardKinematics; box: WorkspaceBox };
  /**
   * Hold the arm while no episode runs (before the first start, and from each episode's end to the next start).
   * On when a person starts episodes: otherwise the policy would keep moving the arm while the robot waits for them.
   */
  holdBetweenEpisodes?: boolean;
}

/** Episode events after which no episode runs. */
const EPISODE_ENDS = new Set(["success", "failure", "timeout", "abort"]);

/** The safety supervisor node. */
export class SafetySupervisorNode extends NodeBase {
  #opts: SafetySupervisorOptions;
  #pubCmd?: Publisher<unknown>;
  #pubEvent?: Publisher<unknown>;
  #measured: number[] | null = null;
  #lastCommandAt = -Infinity;
  #holding = false;
  /** Why the arm is frozen ("estop", "pause"); empty = commands flow. */
  #freeze = new Set<string>();
  /** Stamp of the last observation and whether a command for it arrived (the per-tick deadline). */
  #tick: { stamp: Time; answered: boolean } | null = null;
  #missStreak = 0;
  /** The last command sent and the velocity it implied (for the rate limits). */
  #prev: CommandHistory | null = null;
  /** Counts of each kind of change, for status and tests. */
  readonly counts: Record<string, number> = {};
  /** Kinds already logged this episode: every event is published, the log gets the first of each kind. */
  #logged = new Set<string>();

  constructor(node: NodeHandle, opts: SafetySupervisorOptions) {
    super(node);
    this.#opts = opts;
  }

  override async configure(): Promise<void> {
    this.#pubCmd = this.node.createPublisher(TOPICS.jointCommand.type, TOPICS.jointCommand.topic);
    this.#pubEvent = this.node.createPublisher(TOPICS.safetyEvent.type, TOPICS.safetyEvent.topic);
    this.subscribe<JointStateMsg>(TOPICS.jointStates, (m) => {
      this.#measured = Array.from(m.position);
    });
    this.subscribe<JointStateMsg>({ type: TOPICS.proposedCommand.type, topic: this.#opts.inputTopic ?? TOPICS.proposedCommand.topic }, (m) => this.#onProposed(m));
    this.subscribe<{ data: boolean }>(TOPICS.estop, (m) => (m.data ? this.#hold("estop", "software e-stop") : this.#release("estop")), { durability: "transient_local", depth: 1 });
    this.subscribe<ObservationMsg>(TOPICS.observation, (m) => this.#onTick(m.header.stamp));
    this.subscribe<EpisodeEventMsg>(TOPICS.episodeEvent, (e) => {
      if (e.event === "start") {
        this.#tick = null; // the reset's observation is never acted on
        this.#release("homing"); // the arm held home until the operator started the episode
        this.#release("idle");
      }
      if (this.#opts.holdBetweenEpisodes && EPISODE_ENDS.has(e.event)) this.#hold("idle", `episode ${e.event}: waiting for the operator's start`);
      if (e.event === "pause") this.#hold("pause", `episode paused: ${e.detail}`);
      else if (e.event !== "start") this.#release("pause");
      if (e.event === "reset") {
        this.#tick = null;
        this.#logged.clear();
        this.#lastCommandAt = this.node.clock.now();
        this.#holding = false;
        this.#prev = null;
      }
    });
  }

  override async activate(): Promise<void> {
    if (this.#opts.holdBetweenEpisodes) this.#hold("idle", "no episode running: waiting for the operator's start");
    this.#lastCommandAt = this.node.clock.now();
    // Check the watchdog a few times per deadline.
    this.every(this.#opts.watchdogSec / 4, () => this.#watchdog());
  }

  /** True while the software e-stop is latched. */
  get estopped(): boolean {
    return this.#freeze.has("estop");
  }

  /** True while commands are dropped (e-stop or paused episode). */
  get frozen(): boolean {
    return this.#freeze.size > 0;
  }

  /**
   * Drives the arm along `points` (one per `periodSec`, e.g. homeTrajectory's) through the same checks as the
   * actors' proposals (NaN guard, joint limits, step clamp, rate and workspace limits). The actors' proposals are
   * dropped from now until the next episode starts, so the arm holds the last point while the operator looks.
   */
  async moveThrough(points: readonly (readonly number[])[], periodSec: number, sleep: (sec: number) => Promise<void> = (s) => new Promise((r) => setTimeout(r, s * 1000))): Promise<void> {
    // Right after start-up the first /joint_states may still be on its way.
    for (let k = 0; !this.#measured && k < 50; k++) await sleep(0.02);
    const continuing = this.#freeze.has("homing"); // a settle re-command continues the motion (rate limits keep their state)
    this.#hold("homing", "episode reset: moving to the home pose");
    if (!continuing) {
      this.#prev = null;
      // Start from where the arm is, also when another hold (e.g. waiting for the operator) already froze it.
      if (this.#measured) this.#pubCmd?.publish(jointState(this.node.clock.stamp(), this.#opts.limits.names, this.#measured));
    }
    for (const p of points) {
      if (this.#freeze.has("estop")) return; // an e-stop during the motion wins: hold where it stopped
      const measured = this.#measured;
      if (!measured) throw new Error("safety_supervisor: no joint state yet, cannot move home");
      const r = safeJointCommand([...p], measured, this.#opts.limits);
      if (!r.held) this.#applyMotionLimits(r, measured);
      for (const c of r.changes) this.#report(c, [...p], r.positions);
      this.#pubCmd?.publish(jointState(this.node.clock.stamp(), this.#opts.limits.names, r.positions));
      this.#lastCommandAt = this.node.clock.now();
      await sleep(periodSec);
    }
  }

  #hold(reason: string, detail: string): void {
    const first = this.#freeze.size === 0;
    this.#freeze.add(reason);
    if (!first || !this.#measured) return;
    const at = [...this.#measured];
    this.#report({ kind: reason, detail: `${detail}: holding [${at.map((x) => x.toFixed(3)).join(", ")}], dropping commands`, joints: [...this.#opts.limits.names] }, [], at);
    this.#pubCmd?.publish(jointState(this.node.clock.stamp(), this.#opts.limits.names, at));
  }

  #release(reason: string): void {
    if (!this.#freeze.delete(reason)) return;
    this.#lastCommandAt = this.node.clock.now();
    if (this.#freeze.size === 0) this.#report({ kind: "release", detail: `${reason} released: commands flow again`, joints: [] }, [], []);
  }

  #onProposed(m: JointStateMsg): void {
    if (this.#freeze.size > 0) {
      // The actor answered in time (no deadline miss); the answer is dropped because the arm is frozen.
      if (this.#tick && sameTime(m.header.stamp, this.#tick.stamp)) this.#tick.answered = true;
      this.counts.frozen_drop = (this.counts.frozen_drop ?? 0) + 1;
      return;
    }
    const measured = this.#measured;
    if (!measured) return; // no state yet: nothing safe to compare against, the driver holds.
    const requested = Array.from(m.position);
    const names = m.name.length ? m.name : this.#opts.limits.names;
    const ordered = names.join() === this.#opts.limits.names.join() ? requested : [];
    const r = safeJointCommand(ordered, measured, this.#opts.limits);
    if (names.join() !== this.#opts.limits.names.join()) {
      r.changes[0].detail = `joint names [${names.join(", ")}] do not match the robot's [${this.#opts.limits.names.join(", ")}]; holding`;
    }
    if (!r.held) this.#applyMotionLimits(r, measured);
    for (const c of r.changes) this.#report(c, requested, r.positions);
    this.#lastCommandAt = this.node.clock.now();
    this.#holding = false;
    if (this.#tick && sameTime(m.header.stamp, this.#tick.stamp)) this.#tick.answered = true;
    // Stamp with the proposal's time: the recorded action of tick t carries the observation's stamp.
    this.#pubCmd?.publish(jointState(m.header.stamp, this.#opts.limits.names, r.positions));
  }

  /**
   * A new observation: if the previous one got no command (inference overran its tick), the driver would keep
   * executing a stale target — hold the measured position now, one tick after the miss, and report it.
   */
  #onTick(stamp: Time): void {
    const prev = this.#tick;
    this.#tick = { stamp, answered: false };
    if (prev === null) return;
    if (prev.answered) {
      this.#missStreak = 0;
      return;
    }
    if (!this.#measured || this.#lastCommandAt === -Infinity || this.#freeze.size > 0) return; // frozen: already holding
    this.counts.deadline_miss_ticks = (this.counts.deadline_miss_ticks ?? 0) + 1;
    if (this.#missStreak++ > 0 || this.#holding) return; // one hold and one report per streak
    this.#holding = true;
    this.#report({ kind: "deadline_miss", detail: `no command for the observation at t=${fromTime(prev.stamp).toFixed(3)} within its tick (inference overrun); holding the measured position`, joints: [...this.#opts.limits.names] }, [], this.#measured);
    this.#pubCmd?.publish(jointState(this.node.clock.stamp(), this.#opts.limits.names, this.#measured));
  }

  /** Rate limits, then the workspace box, on top of safeJointCommand's result (in place). */
  #applyMotionLimits(r: { positions: number[]; changes: { kind: string; detail: string; joints: string[] }[] }, measured: number[]): void {
    const { rates, workspace } = this.#opts;
    const prev = this.#prev ?? { position: measured, velocity: measured.map(() => 0) };
    if (rates) {
      const l = limitRates(r.positions, prev, rates.dt, rates);
      r.positions = l.positions;
      r.changes.push(...l.changes);
    }
    if (workspace) {
      const w = limitWorkspace(r.positions, prev.position, workspace.fk, workspace.box, this.#opts.limits.names);
      r.positions = w.positions;
      r.changes.push(...w.changes);
    }
    const dt = rates?.dt ?? 1;
    this.#prev = { position: r.positions, velocity: r.positions.map((q, i) => (q - prev.position[i]) / dt) };
  }

  #watchdog(): void {
    const age = this.node.clock.now() - this.#lastCommandAt;
    if (age <= this.#opts.watchdogSec || this.#holding || !this.#measured || this.#freeze.size > 0) return;
    this.#holding = true;
    this.#prev = null;
    this.#report({ kind: "watchdog" as SafetyChange["kind"], detail: `no command for ${age.toFixed(2)} s (limit ${this.#opts.watchdogSec} s); holding the measured position`, joints: [...this.#opts.limits.names] }, [], this.#measured);
    this.#pubCmd?.publish(jointState(this.node.clock.stamp(), this.#opts.limits.names, this.#measured));
  }

  #report(c: { kind: string; detail: string; joints: string[] }, requested: number[], applied: number[]): void {
    this.counts[c.kind] = (this.counts[c.kind] ?? 0) + 1;
    if (c.kind !== "velocity_clamp" && !this.#logged.has(c.kind)) {
      this.#logged.add(c.kind);
      this.node.logger.warn(`${c.kind}: ${c.detail} (t=${fromTimeNow(this.node)}; further ${c.kind} events this episode go to ${TOPICS.safetyEvent.topic} only)`);
    }
    this.#pubEvent?.publish({ header: header(this.node.clock.stamp()), kind: c.kind, detail: c.detail, joint_names: c.joints, requested, applied });
  }
}

function fromTimeNow(node: NodeHandle): string {
  return fromTime(node.clock.stamp()).toFixed(2);
}
