/**
 * camera: publishes one camera's colour (rgb8) and depth (32FC1, metres) images at a fixed rate on the node's clock,
 * on /camera/<name>/image and /camera/<name>/depth. The source is any CameraSource: the sim's rendered camera, a
 * V4L2 reader, a ROS image topic.
 *
 * Bad input never reaches the topic: a frame of the wrong size, a source that reports an unusable frame (wrong
 * encoding) or a camera that stops delivering is reported in one sentence naming the camera and the fix — logged
 * once and published on /safety/events (kind "camera", so the episode's MCAP keeps it) — and nothing is published
 * for it. A policy that reads the camera then holds the arm on its stale-frame check.
 */
import type { NodeHandle, Publisher } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header, type EpisodeEventMsg } from "../contracts/msgs.ts";
import type { CameraFrame, CameraSource } from "../contracts/camera.ts";

/** Options of the camera node. */
export interface CameraNodeOptions {
  rateHz: number;
  /** Camera name: topics /camera/<name>/image and /camera/<name>/depth (default "front"). */
  name?: string;
  frameId?: string;
  /** The frame size the launch file promises; frames of another size are refused. */
  width?: number;
  height?: number;
  /** Publish the depth image when the source has one (default true). */
  depth?: boolean;
  /** No frame for this long after the first capture attempt → reported as missing (default max(1 s, 5 periods)). */
  missingAfterSec?: number;
}

/** Image topics of camera `name`. */
export function cameraTopics(name: string): { image: string; depth: string } {
  return { image: `/camera/${name}/image`, depth: `/camera/${name}/depth` };
}

/** The camera node. */
export class CameraNode extends NodeBase {
  readonly name: string;
  /** Frames published and refused (for status and tests). */
  readonly stats = { published: 0, refused: 0, faults: [] as string[] };
  #source: CameraSource;
  #opts: CameraNodeOptions;
  #pubImage?: Publisher<unknown>;
  #pubDepth?: Publisher<unknown>;
  #pubEvent?: Publisher<unknown>;
  #since: number | null = null;
  #lastFault = "";

  constructor(node: NodeHandle, source: CameraSource, opts: CameraNodeOptions) {
    super(node);
    this.#source = source;
    this.#opts = opts;
    this.name = opts.name ?? "front";
  }

  override async configure(): Promise<void> {
    const t = cameraTopics(this.name);
    this.#pubImage = this.node.createPublisher(TOPICS.image.type, t.image, { reliability: "best_effort", depth: 2 });
    this.#pubDepth = this.node.createPublisher(TOPICS.depth.type, t.depth, { reliability: "best_effort", depth: 2 });
    this.#pubEvent = this.node.createPublisher(TOPICS.safetyEvent.type, TOPICS.safetyEvent.topic);
    if (this.#source.reset) {
      this.subscribe<EpisodeEventMsg>(TOPICS.episodeEvent, (e) => e.event === "reset" && this.#source.reset?.(Number(e.seed)), { durability: "transient_local", depth: 1 });
    }
  }

  override async activate(): Promise<void> {
    this.every(1 / this.#opts.rateHz, () => this.capture());
  }

  /** Captures and publishes one frame (or reports why not). */
  capture(): void {
    const fault = this.#source.takeFault?.();
    if (fault) this.#fault(fault);
    const f = this.#source.capture();
    const now = this.node.clock.now();
    if (!f) {
      this.#since ??= now;
      const limit = this.#opts.missingAfterSec ?? Math.max(1, 5 / this.#opts.rateHz);
      if (now - this.#since >= limit) this.#fault(`camera ${this.name} has sent no frame for ${limit.toFixed(1)} s — check that it is connected and its driver is running (camera.cameras / camera.device / camera.topic in the launch file)`);
      return;
    }
    this.#since = now;
    const problem = this.#check(f);
    if (problem) {
      this.stats.refused++;
      this.#fault(problem);
      return;
    }
    this.#lastFault = "";
    const h = header(f.stamp ?? this.node.clock.stamp(), this.#opts.frameId ?? `camera_${this.name}`);
    this.#pubImage?.publish({ header: h, height: f.height, width: f.width, encoding: "rgb8", is_bigendian: 0, step: f.width * 3, data: f.rgb });
    this.stats.published++;
    if (f.depth && this.#opts.depth !== false) {
      const bytes = new Uint8Array(f.depth.buffer, f.depth.byteOffset, f.depth.byteLength);
      this.#pubDepth?.publish({ header: h, height: f.height, width: f.width, encoding: "32FC1", is_bigendian: 0, step: f.width * 4, data: bytes });
    }
  }

  /** Why `f` cannot be published, or null. */
  #check(f: CameraFrame): string | null {
    const { width: w, height: h } = this.#opts;
    if (w !== undefined && h !== undefined && (f.width !== w || f.height !== h)) {
      return `camera ${this.name} sent a ${f.width}×${f.height} frame but the launch file says ${w}×${h} — set camera ${this.name}'s width/height to ${f.width}×${f.height} or make the camera send ${w}×${h}`;
    }
    if (f.rgb.length !== f.width * f.height * 3) {
      return `camera ${this.name} sent ${f.rgb.length} bytes for a ${f.width}×${f.height} rgb8 frame (expected ${f.width * f.height * 3}) — the camera driver must deliver packed rgb8`;
    }
    if (f.depth && f.depth.length !== f.width * f.height) return `camera ${this.name} sent a depth image of ${f.depth.length} pixels for a ${f.width}×${f.height} frame`;
    return null;
  }

  /** Reports a problem once (until the camera recovers or the problem changes). */
  #fault(detail: string): void {
    if (detail === this.#lastFault) return;
    this.#lastFault = detail;
    this.stats.faults.push(detail);
    this.node.logger.error(detail);
    this.#pubEvent?.publish({ header: header(this.node.clock.stamp()), kind: "camera", detail, joint_names: [], requested: [], applied: [] });
  }
}
