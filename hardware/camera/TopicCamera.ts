/**
 * A camera that is already a ROS 2 image topic (realsense2_camera, usb_cam, a gripper camera driver): takes
 * sensor_msgs/Image in rgb8, bgr8 or mono8 from the runtime, keeps the newest frame with its own stamp and
 * counts frames and gaps, so the camera node republishes it at the stack's rate on /camera/front/image.
 */
import type { CameraFrame, CameraSource } from "../../contracts/camera.ts";
import type { NodeHandle, Subscription, Time } from "../../runtime/Runtime.ts";

interface ImageMsg {
  header: { stamp: Time; frame_id: string };
  height: number;
  width: number;
  encoding: string;
  step: number;
  data: Uint8Array | number[];
}

/** ROS image topic → CameraSource. */
export class TopicCamera implements CameraSource {
  readonly topic: string;
  /** The camera this topic feeds (named in error messages). */
  readonly name: string;
  readonly stats = { frames: 0, rejected: 0, lastError: "" };
  #latest: CameraFrame | null = null;
  #sub: Subscription;
  #pendingFault: string | null = null;

  constructor(node: NodeHandle, topic: string, name = "front") {
    this.topic = topic;
    this.name = name;
    this.#sub = node.createSubscription<ImageMsg>("sensor_msgs/msg/Image", topic, (m) => this.#onImage(m), { reliability: "best_effort", depth: 2 });
  }

  capture(): CameraFrame | null {
    return this.#latest;
  }

  /** The last refused frame's reason since the previous call, once. */
  takeFault(): string | null {
    const f = this.#pendingFault;
    this.#pendingFault = null;
    return f;
  }

  /** Stops listening. */
  stop(): void {
    this.#sub.unsubscribe();
  }

  #onImage(m: ImageMsg): void {
    const { width: w, height: h } = m;
    const src = m.data instanceof Uint8Array ? m.data : Uint8Array.from(m.data);
    const channels = m.encoding === "mono8" ? 1 : m.encoding === "rgb8" || m.encoding === "bgr8" ? 3 : 0;
    if (!channels || src.length < m.step * h || m.step < w * channels) {
      this.stats.rejected++;
      this.stats.lastError = !channels
        ? `camera ${this.name}: ${this.topic} sends ${m.encoding} frames, which rlft cannot use (expected rgb8, bgr8 or mono8) — set the camera driver's encoding, e.g. rgb8`
        : `camera ${this.name}: ${this.topic} sent ${src.length} bytes for a ${w}×${h} ${m.encoding} frame with step ${m.step} — the driver's message is malformed`;
      this.#pendingFault = this.stats.lastError;
      return;
    }
    const rgb = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const s = y * m.step + x * channels;
        const d = 3 * (y * w + x);
        if (channels === 1) rgb[d] = rgb[d + 1] = rgb[d + 2] = src[s];
        else if (m.encoding === "bgr8") {
          rgb[d] = src[s + 2];
          rgb[d + 1] = src[s + 1];
          rgb[d + 2] = src[s];
        } else {
          rgb[d] = src[s];
          rgb[d + 1] = src[s + 1];
          rgb[d + 2] = src[s + 2];
        }
      }
    }
    this.stats.frames++;
    this.#latest = { width: w, height: h, rgb, stamp: m.header.stamp };
  }
}
