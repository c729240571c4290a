/**
 * Builds and runs the whole stack described by a launch file: runtime, arm driver, camera, actor
 * (policy or expert), safety supervisor, episode manager and recorder, then runs episodes.
 * `rlft launch`, `rlft collect` and `rlft eval` are all this with different overrides.
 */
import type { LaunchConfig } from "./LaunchConfig.ts";
import type { Runtime } from "../runtime/Runtime.ts";
import { createRuntime } from "../runtime/index.ts";
import { SimArmDriver } from "../hardware/sim/SimArmDriver.ts";
import { GymArmDriver } from "../hardware/gym/GymArmDriver.ts";
import type { ArmDriver } from "../hardware/ArmDriver.ts";
import { driverOwnsJointStates } from "../hardware/registry.ts";
import { motionLimits } from "./safetyLimits.ts";
import { jointObservationNames } from "../nodes/JointObservationNode.ts";
import type { ActorNode } from "../nodes/ActorNode.ts";
import type { Actor } from "../policies/actors/Actor.ts";
import { PolicyActor } from "../policies/actors/PolicyActor.ts";
import { VlaActor } from "../policies/actors/VlaActor.ts";
import { GymExpertActor } from "../policies/actors/GymExpertActor.ts";
import { policyKind } from "../policies/vla/VlaPackage.ts";
import type { SafetySupervisorNode } from "../nodes/SafetySupervisorNode.ts";
import type { EpisodeManagerNode, EpisodeResult } from "../nodes/EpisodeManagerNode.ts";
import type { RecorderNode } from "../nodes/RecorderNode.ts";
import { ExperienceNode, type TransitionSink } from "../nodes/ExperienceNode.ts";
import type { InterventionArbiterNode } from "../nodes/InterventionArbiterNode.ts";
import { RECORDED, TOPICS } from "../contracts/topics.ts";
import { cameraTopics } from "../nodes/CameraNode.ts";
import { normaliseAction } from "../contracts/normalise.ts";
import { NodeFactory, nodeLogger, recorderMetadata } from "./nodeFactory.ts";
import { OperatorStation } from "./OperatorStation.ts";
import { createCameraNodes, type CameraSet } from "./cameraNodes.ts";
import { cameraPlans } from "../hardware/camera/CameraConfig.ts";
import { loadIntrinsics } from "../calibration/CalibrationFiles.ts";
import type { KeyInput } from "../hardware/teleop/KeyboardTeleop.ts";
import type { JointPositionSource } from "../hardware/teleop/JointPositionSource.ts";
import { GymOperatorNode } from "../nodes/GymOperatorNode.ts";
import { SuccessClassifierNode } from "../nodes/SuccessClassifierNode.ts";
import { homeTrajectory } from "../hardware/homeTrajectory.ts";
import { simOnlySignals, type SimRobotName } from "../sim/tasks.ts";

/** Lifecycle surface every node class here has. */
interface ManagedNode {
  configure(): Promise<void>;
  activate(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Options that override or complete the launch file. */
export interface StackOptions {
  /** Where MCAP episodes go (overrides recorder.out). */
  recordTo?: string;
  /** Extra episode metadata. */
  metadata?: Record<string, string>;
  /** Log level of the nodes. */
  quiet?: boolean;
  /** Online learning: transitions of every tick go here (needs a policy actor). */
  experience?: TransitionSink;
  /** Exploration noise on the residual (online RL). */
  training?: boolean;
  /** Each episode waits for the operator's start (UI, MQTT, keys); default: when a person operates. */
  operatorGate?: boolean;
  /** Terminal input for --operator keyboard (default process.stdin). */
  keyInput?: KeyInput;
  /** The leader arm's servo bus for --operator leader. */
  leaderSource?: JointPositionSource;
  /** Aborting it (Ctrl-C) ends the running episode as "abort" and runs no further ones. */
  signal?: AbortSignal;
}

/** The running stack. */
export class Stack {
  readonly config: LaunchConfig;
  readonly runtime: Runtime;
  readonly manager: EpisodeManagerNode;
  readonly actor: ActorNode;
  readonly safety: SafetySupervisorNode;
  readonly recorder: RecorderNode | null;
  readonly driver: ArmDriver;
  /** The simulator when driver.kind is sim, else null. */
  readonly world: SimArmDriver | null;
  readonly arbiter: InterventionArbiterNode;
  /** Console, teleop, web UI and MQTT, when the launch file has a person in the loop. */
  readonly station: OperatorStation | null;
  #nodes: ManagedNode[];
  #gate: boolean;
  #waiting: ((go: boolean) => void) | null = null;
  #nextSeed = 0;
  #cameras: CameraSet | null = null;
  #signal: AbortSignal | undefined;

  private constructor(parts: {
    config: LaunchConfig;
    runtime: Runtime;
    manager: EpisodeManagerNode;
    actor: ActorNode;
    safety: SafetySupervisorNode;
    recorder: RecorderNode | null;
    driver: ArmDriver;
    world: SimArmDriver | null;
    arbiter: InterventionArbiterNode;
    nodes: ManagedNode[];
    station: OperatorStation | null;
    gate: boolean;
  }) {
    this.config = parts.config;
    this.runtime = parts.runtime;
    this.manager = parts.manager;
    this.actor = parts.actor;
    this.safety = parts.safety;
    this.recorder = parts.recorder;
    this.driver = parts.driver;
    this.world = parts.world;
    this.arbiter = parts.arbiter;
    this.#nodes = parts.nodes;
    this.station = parts.station;
    this.#gate = parts.gate;
  }

  /** Creates, configures and activates every node of `config`. */
  static async create(config: LaunchConfig, opts: StackOptions = {}): Promise<Stack> {
    if (config.runtime !== "embedded" && config.clock === "sim") {
      throw new Error("clock: sim needs runtime: embedded (ROS 2 sim time comes from /clock, which the sim driver does not publish yet)");
    }
    const runtime = await createRuntime(config.runtime, { clock: config.clock, logLevel: opts.quiet ? "error" : "info" });
    const hz = config.control_hz;
    const dc = config.driver;
    // A Gymnasium environment is stepped by the stack like the sim: either clock works.
    if (dc.kind !== "sim" && dc.kind !== "gym" && config.clock === "sim") throw new Error(`driver.kind ${dc.kind} drives a real arm: set clock: wall in the launch file`);
    if (dc.kind !== "sim" && dc.kind !== "gym" && config.actor.kind === "expert") throw new Error(`actor.kind expert is the simulator's scripted expert: it needs driver.kind sim (use a policy package on a real arm)`);
    // driver.kind sim: `robot` names the simulated model (parseLaunch checked it has the task).
    const simRobot = dc.kind === "sim" ? (config.robot as SimRobotName) : undefined;
    const log = nodeLogger(opts.quiet);
    const make = new NodeFactory(runtime, log);
    const driver = await make.driver(dc, { robot: config.robot, task: config.task, controlHz: hz, instruction: config.instruction, armCalibration: config.calibration.arm });
    const world = driver instanceof SimArmDriver ? driver : null;
    // A Gymnasium environment: a world the stack steps, whose observation names the launch file maps.
    const gym = driver instanceof GymArmDriver ? driver : null;
    const names = driver.jointNames;
    const observationNames = world ? world.sim.observation().names : gym ? gym.observationNames : jointObservationNames(names);
    const maxStep = typeof config.safety.max_step === "number" ? names.map(() => config.safety.max_step as number) : config.safety.max_step;
    if (maxStep.length !== names.length) throw new Error(`safety.max_step: expected ${names.length} values (${names.join(", ")}), got ${maxStep.length}`);

    let actor: Actor;
    let policyVersion = "none";
    let policyActor: PolicyActor | null = null;
    if (config.actor.kind === "expert" && gym) {
      actor = new GymExpertActor(gym);
      policyVersion = `gym_expert@${gym.config.expert}`;
    } else if (config.actor.kind === "expert") {
      actor = make.expert({ robot: simRobot, task: config.task, quality: config.actor.expert_quality, jointNames: names, controlHz: hz });
      policyVersion = `scripted_expert@${config.actor.expert_quality}`;
    } else if (!config.actor.package) {
      throw new Error("actor.package: a policy package directory is required when actor.kind is policy (or pass --policy DIR)");
    } else if ((await policyKind(config.actor.package)) === "vla") {
      const v = await VlaActor.create(config.actor.package, {
        jointNames: names,
        observationNames,
        cameras: cameraNames(config),
        maxImageAgeSec: config.actor.max_image_age_sec,
        instruction: config.instruction,
        providers: config.actor.providers,
        threads: config.actor.threads,
        noiseScale: config.actor.noise_scale,
        logger: log,
      });
      actor = v;
      policyVersion = v.version;
    } else {
      const p = await PolicyActor.create(config.actor.package, {
        jointNames: names,
        observationNames,
        cameras: cameraNames(config),
        cameraSizes: cameraSizes(config),
        maxImageAgeSec: config.actor.max_image_age_sec,
        simOnlySignals: config.driver.kind === "sim" || gym ? undefined : simOnlySignals(),
        providers: config.actor.providers,
        mode: config.actor.sampler,
        threads: config.actor.threads,
        indicator: config.actor.indicator,
        cfgBeta: config.actor.cfg_beta,
        noiseScale: config.actor.noise_scale,
        bestOf: { n: config.actor.best_of, select: config.actor.best_of_select, pessimism: config.actor.best_of_pessimism, explore: config.actor.best_of_explore },
        training: opts.training ?? false,
        residual: config.actor.residual,
        logger: log,
      });
      actor = p;
      policyActor = p;
      policyVersion = p.version;
    }

    const nodes: ManagedNode[] = [];
    const manager = make.episodeManager({ simulated: world !== null, robot: config.robot, task: config.task, controlHz: hz, maxSteps: config.episodes.max_steps });
    // Cameras (sim renders, V4L2, ROS topics) start first: their calibration and a real camera's clock offset go into
    // every episode's metadata; a camera that cannot be set up stops the stack here with its name and the fix.
    let cameras: CameraSet;
    try {
      cameras = createCameraNodes(runtime, config, world?.sim ?? null, log, gym);
      await cameras.start();
    } catch (e) {
      await policyActor?.close().catch(() => undefined);
      world?.sim.close();
      await driver.close?.().catch(() => undefined);
      await runtime.shutdown();
      throw e;
    }
    const metadata = cameras.metadata;
    let recorder: RecorderNode | null = null;
    if (config.recorder.enabled) {
      recorder = make.recorder({
        outDir: opts.recordTo ?? config.recorder.out,
        // Every camera's topics too (TOPICS names only /camera/front/*).
        topics: [...RECORDED, ...cameras.names.flatMap((n) => Object.values(cameraTopics(n)).map((topic) => ({ topic, type: TOPICS.image.type })))].filter((t, i, all) => all.findIndex((u) => u.topic === t.topic) === i),
        chunkBytes: config.recorder.chunk_bytes,
        maxBytes: config.recorder.max_mb === undefined ? undefined : config.recorder.max_mb * 1e6,
        metadata: Object.assign(metadata, recorderMetadata({ robot: config.robot, policyVersion, runtime: config.runtime, calibration: config.calibration }), {
          control_hz: String(hz),
          driver: config.driver.kind,
          // What exact replay needs (docs/data.md): physics settings, and how the policy's noise was seeded.
          ...(dc.kind === "sim" && world ? { randomize_physics: String(dc.randomize_physics), physics_dt: String(world.sim.model.opt.timestep) } : {}),
          ...(dc.kind === "gym" ? { gym_env: dc.env, gym_kwargs: JSON.stringify(dc.kwargs), gym_modules: dc.modules.join(",") } : {}),
          ...(policyActor ? { policy_package: config.actor.package ?? "", sampler: config.actor.sampler, policy_seed: "episode_seed", residual_package: config.actor.residual ?? "" } : {}),
          ...opts.metadata,
        }),
      });
    }
    // Creation order is tick order on the sim clock: driver publishes the observation of tick t,
    // the actor answers it, safety forwards the command, the manager counts the tick.
    const armNode = make.armDriver(driver, {
      controlHz: hz,
      world: world ?? gym ?? undefined,
      groundTruthReward: config.reward.sim_ground_truth,
      publishJointStates: !driverOwnsJointStates(dc),
      // A latched driver fault (servo overload, protective stop, program stopped) ends the episode as aborted; the
      // recorder closes its file, so nothing recorded is lost.
      onFault: (f) => manager.abort(`arm fault: ${f}`),
    });
    const actorNode = make.actor(actor, { expert: config.actor.kind === "expert", controlHz: hz });
    // The operator always wins; with no operator the arbiter forwards the policy's commands unchanged.
    const op = config.operator;
    const operator = op.enabled && op.kind === "scripted"
      ? gym
        ? new GymOperatorNode(runtime.createNode("operator"), gym, { controlHz: hz })
        : make.operator({ robot: simRobot, task: config.task, controlHz: hz, patienceSec: op.patience_sec, correctionSec: op.correction_sec })
      : null;
    const arbiter = make.arbiter({ withOperator: op.enabled, blendSec: op.blend_sec, controlHz: hz, jointNames: names });
    const human = op.enabled && op.kind !== "scripted";
    // A person starts each episode: until then (and between episodes) the arm holds instead of following the policy.
    const gated = opts.operatorGate ?? human;
    const safety = make.safety({
      limits: { names, lower: driver.jointLower, upper: driver.jointUpper, maxStep },
      watchdogSec: config.safety.watchdog_sec,
      inputTopic: TOPICS.arbiterCommand.topic,
      holdBetweenEpisodes: gated,
      ...motionLimits(config.safety, names, hz),
    });
    let stack: Stack | null = null;
    const station =
      human || config.ui.enabled || config.mqtt.enabled
        ? new OperatorStation(runtime, config, {
            manager,
            control: { start: () => (stack ? stack.releaseGate() : "the stack is starting"), reset: () => (stack ? stack.resetWorld() : "the stack is starting") },
            policyVersion: () => (policyActor ? policyActor.version : policyVersion),
            jointNames: names,
            jointLower: driver.jointLower,
            jointUpper: driver.jointUpper,
            keyInput: opts.keyInput,
            leaderSource: opts.leaderSource,
          })
        : null;
    if (recorder) nodes.push(recorder);
    if (!world && !gym) nodes.push(make.jointObservation(names));
    // The camera ticks right after the driver: a frame shows the state the actor is about to answer.
    nodes.push(armNode);
    nodes.push(...cameras.nodes);
    // The teleop node answers each observation like the actor does, so it sits beside it in tick order.
    nodes.push(actorNode, ...(operator ? [operator] : []), ...(station?.nodes ?? []), arbiter, safety, manager);
    if (config.reward.classifier) {
      const c = config.reward.classifier;
      nodes.push(await SuccessClassifierNode.create(runtime.createNode("success_classifier"), { modelDir: c.model, threshold: c.threshold, consecutive: c.consecutive }));
    }
    let experience: ExperienceNode | null = null;
    if (opts.experience) {
      if (!policyActor) throw new Error("online experience needs actor.kind: policy (transitions carry the base policy's actions)");
      const spec = policyActor.policy.package.json.action;
      const sent = config.learner.cameras;
      const unknown = sent.filter((c) => !cameras.names.includes(c));
      if (unknown.length > 0) throw new Error(`learner.cameras names ${unknown.join(", ")} but this launch file's cameras are [${cameras.names.join(", ")}]: list cameras from camera.cameras (or leave learner.cameras empty to send none)`);
      const observationNames = policyActor.policy.package.json.observation.names;  // the learner reads the base's observation
      experience = new ExperienceNode(runtime.createNode("experience_bridge"), opts.experience, { normaliseAction: (raw) => normaliseAction(spec, raw), cameras: sent, observationNames });
      nodes.push(experience);
    }
    // A recording that cannot be written (disk full, quota) ends the episode: nothing unrecorded is run.
    recorder?.onFailure((e) => manager.abort(`recording failed: ${e.message}`));
    try {
      for (const n of nodes) await n.configure();
      for (const n of nodes) await n.activate();
      await station?.startServers();
    } catch (e) {
      // A real arm that cannot be opened (wrong port, no permission, silent servo): release what was opened.
      for (const n of [...nodes].reverse()) await n.shutdown().catch(() => undefined);
      await station?.close().catch(() => undefined);
      await policyActor?.close().catch(() => undefined);
      cameras.stop();
      world?.sim.close();
      await driver.close?.().catch(() => undefined);
      await runtime.shutdown();
      throw e;
    }
    stack = new Stack({ config, runtime, manager, actor: actorNode, safety, recorder, driver, world, arbiter, nodes, station, gate: gated });
    stack.#cameras = cameras;
    stack.#signal = opts.signal;
    return stack;
  }

  /** Operator start: lets a waiting `runEpisodes` begin the next episode; returns why not otherwise. */
  releaseGate(): string | null {
    if (!this.#waiting) return this.#gate ? "the session is not ready for a new episode yet" : "episodes start on their own in this session (no operator gate)";
    const w = this.#waiting;
    this.#waiting = null;
    w(true);
    return null;
  }

  /** Operator reset while idle: the world goes to the next episode's start state (sim), a real arm goes home; then it waits. */
  resetWorld(): string | null {
    if (!this.manager.reset(this.#nextSeed)) return "an episode is running";
    if (!this.world && this.config.reset.home) void this.goHome().catch((e: Error) => console.warn(`going home failed: ${e.message}`));
    return null;
  }

  /**
   * Real arm, `reset.home` set: drives home at `reset.max_speed` through the safety supervisor and waits until the
   * arm is there (or `settle_sec` passed: a warning names the joints that are not). The arm then holds home until
   * the next episode starts. Returns the points commanded (none when there is no home or the arm is already there).
   */
  async goHome(): Promise<number[][]> {
    const rc = this.config.reset;
    if (this.world || !rc.home) return [];
    const names = this.driver.jointNames;
    if (rc.home.length !== names.length) throw new Error(`reset.home: expected ${names.length} values (${names.join(", ")}), got ${rc.home.length}`);
    const perJoint = (v: number | number[] | undefined, key: string): number[] => {
      const a = v === undefined ? names.map(() => Infinity) : typeof v === "number" ? names.map(() => v) : v;
      if (a.length !== names.length) throw new Error(`${key}: expected 1 or ${names.length} values (${names.join(", ")}), got ${a.length}`);
      return a;
    };
    const dt = 1 / this.config.control_hz;
    // Never faster than the safety limits allow, so no point of the way home gets clamped.
    const maxStep = perJoint(this.config.safety.max_step, "safety.max_step");
    const maxVel = perJoint(this.config.safety.max_velocity, "safety.max_velocity");
    const speed = perJoint(rc.max_speed, "reset.max_speed").map((v, i) => Math.min(v, maxStep[i] / dt, maxVel[i]));
    const out = rc.home.map((h, i) => (h < this.driver.jointLower[i] || h > this.driver.jointUpper[i] ? names[i] : "")).filter(Boolean);
    if (out.length) throw new Error(`reset.home is outside the joint limits for ${out.join(", ")} (limits come from driver.joints / calibration.arm): fix the home pose`);
    const r = this.driver.read(0);
    if (!r.status.ok || !r.reading) throw new Error(`cannot go home: no joint reading (${r.status.ok ? "none yet" : r.status.error})`);
    const points = homeTrajectory(r.reading.position, rc.home, speed, dt);
    await this.safety.moveThrough(points, dt);
    const end = Date.now() + rc.settle_sec * 1000;
    let off: string[] = [];
    for (;;) {
      const q = this.driver.read(0).reading?.position ?? [];
      off = names.filter((_, i) => !(Math.abs((q[i] ?? NaN) - rc.home![i]) <= rc.tolerance));
      if (!off.length || Date.now() >= end) break;
      await this.safety.moveThrough([rc.home], dt); // the arm lags: keep commanding home (still step-clamped)
    }
    if (off.length) console.warn(`home pose not reached within ${rc.settle_sec} s (tolerance ${rc.tolerance} rad): ${off.join(", ")} — check for an obstacle, the joint limits and safety.max_step`);
    return points;
  }

  /** Ends a wait for the operator's start (Ctrl-C): runEpisodes returns what it has. */
  cancelWait(): void {
    const w = this.#waiting;
    this.#waiting = null;
    w?.(false);
  }

  /**
   * Runs `count` episodes with seeds seed, seed+1, ...; calls `onEpisode` after each. Episode numbers start at
   * `firstEpisode`, by default after the last episode already in the recorder's directory (a resumed run).
   * On the sim clock time is stepped as fast as the nodes allow; on the wall clock it runs in real time. On every clock
   * each episode's file and the index are complete on disk before the next episode begins (and before `onEpisode`),
   * so a crash (kill -9, power) loses at most the episode that was running.
   */
  async runEpisodes(opts: { count: number; seed: number; firstEpisode?: number; onEpisode?: (r: EpisodeResult) => void; tolerateRecorderFailure?: boolean }): Promise<EpisodeResult[]> {
    const results: EpisodeResult[] = [];
    const dt = 1 / this.config.control_hz;
    const clock = this.runtime.clock as unknown as { advance?: (dt: number) => Promise<void> };
    const signal = this.#signal;
    const first = opts.firstEpisode ?? this.recorder?.nextEpisode ?? 0;
    const onAbort = () => this.manager.abort("stopped by the operator (Ctrl-C)");
    signal?.addEventListener("abort", onAbort);
    const flush = async () => {
      if (!this.recorder) return;
      // The end event reaches the recorder through the runtime; on ROS 2 that may take a spin.
      for (let waited = 0; this.recorder.recording && waited < 5000; waited += 10) await new Promise((r) => setTimeout(r, 10));
      await this.recorder.flush().catch((e: Error) => {
        if (!opts.tolerateRecorderFailure) throw e;
      });
    };
    try {
      for (let i = 0; i < opts.count && !signal?.aborted; i++) {
        this.#nextSeed = opts.seed + i;
        if (!this.world && this.config.reset.home) await this.goHome();
        if (this.#gate && !(await new Promise<boolean>((r) => (this.#waiting = r)))) break;
        const ended = new Promise<EpisodeResult>((resolve) => {
          const off = this.manager.onEnd((r) => {
            off();
            resolve(r);
          });
        });
        this.manager.begin(first + i, opts.seed + i);
        if (clock.advance) {
          // The stepped clock never waits on I/O by itself: every second of sim time the recorder's queued writes get
          // a turn, so closed chunks reach the file during the episode and not only at its end (issue 24 item 6).
          const yieldEvery = Math.max(1, Math.round(this.config.control_hz));
          for (let tick = 1; this.manager.running; tick++) {
            await clock.advance(dt);
            if (this.recorder && tick % yieldEvery === 0) await new Promise((r) => setImmediate(r));
          }
        }
        const r = await ended;
        await flush();
        results.push(r);
        opts.onEpisode?.(r);
        // A faulted arm runs no further episode: the operator clears the cause and starts a new session.
        if (this.driver.fault) break;
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
    await flush();
    return results;
  }

  /** Stops every node (recorder last, so nothing is lost) and the runtime. */
  async shutdown(): Promise<void> {
    this.cancelWait();
    await this.station?.close();
    for (const n of [...this.#nodes].reverse()) await n.shutdown();
    const a = this.actor.actor as Partial<{ close(): Promise<void> }>;
    await a.close?.();
    this.#cameras?.stop();
    this.world?.sim.close();
    await this.driver.close?.();
    await this.runtime.shutdown();
  }
}

/**
 * The frame size of each camera whose size the launch file fixes: width/height on its entry, or (a sim camera) its
 * intrinsics file's. A file that cannot be read is left out here: setting up the camera names it.
 */
export function cameraSizes(config: LaunchConfig): Record<string, { width: number; height: number }> {
  const out: Record<string, { width: number; height: number }> = {};
  for (const p of cameraPlans(config.camera)) {
    if (p.sizeGiven && p.width !== undefined && p.height !== undefined) out[p.name] = { width: p.width, height: p.height };
    else if (p.kind === "sim" && p.intrinsics) {
      try {
        const m = loadIntrinsics(p.intrinsics).model;
        out[p.name] = { width: m.width, height: m.height };
      } catch {
        // createCameraNodes reports the unreadable file with the camera's name and the fix.
      }
    }
  }
  return out;
}

/** The camera names a launch file gives the robot (/camera/<name>/image), without building anything. */
export function cameraNames(config: LaunchConfig): string[] {
  return cameraPlans(config.camera)
    .filter((p) => p.kind !== "sim" || config.driver.kind === "sim")
    .map((p) => p.name)
    .concat(config.driver.kind === "gym" && config.camera.enabled ? Object.keys(config.driver.cameras) : []);
}
