/**
 * camera: publishes colour (rgb8) and depth (32FC1, metres) images at a fixed rate on the node's clock.
 * The source is any CameraSource; in simulation that is the MuJoCo ray-cast camera.
 */
import type { NodeHandle, Publisher } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header } from "../contracts/msgs.ts";
import type { CameraSource } from "../contracts/camera.ts";

/** Options of the camera node. */
export interface CameraNodeOptions {
  rateHz: number;
  frameId?: string;
}

/** The camera node. */
export class CameraNode extends NodeBase {
  #source: CameraSource;
  #opts: CameraNodeOptions;
  #pubImage?: Publisher<unknown>;
  #pubDepth?: Publisher<unknown>;

  constructor(node: NodeHandle, source: CameraSource, opts: CameraNodeOptions) {
    super(node);
    this.#source = source;
    this.#opts = opts;
  }

  override async configure(): Promise<void> {
    this.#pubImage = this.node.createPublisher(TOPICS.image.type, TOPICS.image.topic, { reliability: "best_effort", depth: 2 });
    this.#pubDepth = this.node.createPublisher(TOPICS.depth.type, TOPICS.depth.topic, { reliability: "best_effort", depth: 2 });
  }

  override async activate(): Promise<void> {
    this.every(1 / this.#opts.rateHz, () => this.capture());
  }

  /** Captures and publishes one frame. */
  capture(): void {
    const f = this.#source.capture();
    if (!f) return;
    const h = header(f.stamp ?? this.node.clock.stamp(), this.#opts.frameId ?? "camera_front");
    this.#pubImage?.publish({ header: h, height: f.height, width: f.width, encoding: "rgb8", is_bigendian: 0, step: f.width * 3, data: f.rgb });
    if (f.depth) {
      const bytes = new Uint8Array(f.depth.buffer, f.depth.byteOffset, f.depth.byteLength);
      this.#pubDepth?.publish({ header: h, height: f.height, width: f.width, encoding: "32FC1", is_bigendian: 0, step: f.width * 4, data: bytes });
    }
  }
}
