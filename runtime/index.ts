/** The runtime package: pick a transport with createRuntime; nodes import only Runtime.ts types. */
import type { ParamValue, Runtime } from "./Runtime.ts";
import { EmbeddedRuntime, type EmbeddedRuntimeOptions } from "./embedded/EmbeddedRuntime.ts";

export type * from "./Runtime.ts";
export { EmbeddedRuntime, type EmbeddedRuntimeOptions } from "./embedded/EmbeddedRuntime.ts";
export { SimClock } from "./embedded/SimClock.ts";
export { WallClock } from "./embedded/WallClock.ts";
export { ZmqProxy, type ZmqProxyOptions } from "./embedded/ZmqProxy.ts";
export { ZmqBridge, type ZmqBridgeOptions } from "./embedded/ZmqBridge.ts";
export { TopicTypeMismatchError } from "./embedded/TopicBus.ts";
export { Lifecycle, LifecycleTransitionError, type LifecycleCallbacks } from "./Lifecycle.ts";
export { MessageRegistry, UnknownMessageTypeError } from "./msgs/MessageRegistry.ts";
export type * as msg from "../contracts/msgs.generated.ts";
export { ROS2_MISSING_MESSAGE, Ros2UnavailableError, type Ros2RuntimeOptions } from "./ros2/Ros2Runtime.ts";

/** Options common to both runtimes (the embedded ones are ignored by ros2 and vice versa). */
export type CreateRuntimeOptions = EmbeddedRuntimeOptions & { load?: () => Promise<unknown> };

/** Creates a runtime of the given kind. The ros2 module (and rclnodejs) load only when asked for. */
export async function createRuntime(kind: "embedded" | "ros2", opts: CreateRuntimeOptions = {}): Promise<Runtime> {
  if (kind === "embedded") return EmbeddedRuntime.create(opts);
  if (kind === "ros2") {
    const { Ros2Runtime } = await import("./ros2/Ros2Runtime.ts");
    return Ros2Runtime.create({ clock: opts.clock, registry: opts.registry, load: opts.load });
  }
  throw new Error(`Unknown runtime kind "${String(kind)}": expected "embedded" or "ros2"`);
}

export type { ParamValue };
