/** One camera frame of a transition: rgb8 bytes, row-major height × width × 3 (rlft-exp/1 `image.<camera>`). */
export interface TransitionFrame {
  width: number;
  height: number;
  rgb: Uint8Array;
}

/** One step of online experience, as the robot records it (docs/protocol.md § transitions). */
export interface Transition {
  episode: number;
  step: number;
  /** Raw units, obs_dim values. */
  obs: readonly number[];
  nextObs: readonly number[];
  /** All actions normalised to [-1, 1] with the base package's action min/max; A values each. */
  baseAction: readonly number[];
  residualAction: readonly number[];
  /** What was executed: the policy's action, or the operator's during an intervention. */
  action: readonly number[];
  nextBaseAction: readonly number[];
  reward: number;
  terminated: boolean;
  truncated: boolean;
  intervention: boolean;
  /** Who intervened (`scripted_operator`, `keyboard`, `spacemouse`, ...); "" when nobody did. */
  interventionSource: string;
  /** Version of the policy package that produced `action`. */
  policyVersion: string;
  /**
   * Camera frames of `obs` and of `nextObs` by camera name (the latest frame at or before each tick), when the session
   * sends cameras (`learner.cameras`); absent otherwise, and then nothing of them goes on the wire.
   */
  images?: Readonly<Record<string, TransitionFrame>>;
  nextImages?: Readonly<Record<string, TransitionFrame>>;
}
