/**
 * The subset of rclnodejs (types/*.d.ts of RobotWebTools/rclnodejs, 1.x) that Ros2Runtime calls.
 * rclnodejs cannot be installed without a sourced ROS 2, so the adapter is type-checked against
 * this declaration instead; keep every signature identical to the upstream one.
 */

/** rclnodejs ParameterType (types/parameter.d.ts). */
export const ParameterType = {
  PARAMETER_NOT_SET: 0,
  PARAMETER_BOOL: 1,
  PARAMETER_INTEGER: 2,
  PARAMETER_DOUBLE: 3,
  PARAMETER_STRING: 4,
  PARAMETER_BYTE_ARRAY: 5,
  PARAMETER_BOOL_ARRAY: 6,
  PARAMETER_INTEGER_ARRAY: 7,
  PARAMETER_DOUBLE_ARRAY: 8,
  PARAMETER_STRING_ARRAY: 9,
} as const;
export type ParameterTypeValue = (typeof ParameterType)[keyof typeof ParameterType];

/** rclnodejs QoS policy values (types/qos.d.ts). */
export const QosPolicy = {
  HISTORY_KEEP_LAST: 1,
  RELIABILITY_RELIABLE: 1,
  RELIABILITY_BEST_EFFORT: 2,
  DURABILITY_TRANSIENT_LOCAL: 1,
  DURABILITY_VOLATILE: 2,
} as const;

export interface RclParameter {
  readonly name: string;
  readonly type: ParameterTypeValue;
  value: unknown;
}

export interface RclParameterCtor {
  new (name: string, type: ParameterTypeValue, value?: unknown): RclParameter;
}

export interface RclQoS {
  history: number;
  depth: number;
  durability: number;
}

export interface RclQoSCtor {
  new (history?: number, depth?: number, reliability?: number, durability?: number, avoidRosNameSpaceConventions?: boolean): RclQoS;
}

export interface RclNodeOptions {
  startParameterServices: boolean;
  parameterOverrides: RclParameter[];
  automaticallyDeclareParametersFromOverrides: boolean;
}

export interface RclNodeOptionsCtor {
  new (): RclNodeOptions;
}

/** Options for publishers and subscriptions (types/node.d.ts `Options`). */
export interface RclOptions {
  enableTypedArray?: boolean;
  isRaw?: boolean;
  serializationMode?: "default" | "plain" | "json";
  qos?: RclQoS | string;
}

export interface RclTime {
  readonly nanoseconds: bigint;
  readonly secondsAndNanoseconds: { seconds: bigint; nanoseconds: bigint };
}

export interface RclClock {
  now(): RclTime;
}

export interface RclTimer {
  readonly period: bigint;
  cancel(): void;
  isCanceled(): boolean;
}

export interface RclPublisher {
  readonly topic: string;
  publish(message: object): void;
}

export type RclSubscription = object;

export interface RclLogging {
  debug(message: string): boolean;
  info(message: string): boolean;
  warn(message: string): boolean;
  error(message: string): boolean;
}

export interface RclNode {
  name(): string;
  getLogger(): RclLogging;
  getClock(): RclClock;
  now(): RclTime;
  /** period in nanoseconds. */
  createTimer(period: bigint, callback: () => void, clock?: RclClock): RclTimer;
  createPublisher(typeClass: string, topic: string, options?: RclOptions): RclPublisher;
  createSubscription(typeClass: string, topic: string, options: RclOptions, callback: (msg: object) => void): RclSubscription;
  destroyPublisher(publisher: RclPublisher): void;
  destroySubscription(subscription: RclSubscription): void;
  destroyTimer(timer: RclTimer): void;
  declareParameter(parameter: RclParameter, descriptor?: unknown, ignoreOverride?: boolean): RclParameter;
  hasParameter(name: string): boolean;
  getParameter(name: string): RclParameter;
  destroy(): void;
  spin(timeout?: number): void;
  stop(): void;
}

export interface RclNodeCtor {
  new (nodeName: string, namespace?: string, context?: unknown, options?: RclNodeOptions): RclNode;
}

/** The rclnodejs module as Ros2Runtime uses it (types/index.d.ts). */
export interface RclnodejsModule {
  init(context?: unknown, argv?: string[]): Promise<void>;
  shutdown(context?: unknown): void;
  isShutdown(): boolean;
  Node: RclNodeCtor;
  NodeOptions: RclNodeOptionsCtor;
  Parameter: RclParameterCtor;
  QoS: RclQoSCtor;
}
