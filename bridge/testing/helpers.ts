/** Test helpers for the bridge: transitions with recognisable values, polling for a condition. */
import type { Transition } from "../Transition.ts";

/** A transition whose values encode (episode, step), for obs_dim 3 and action_dim 2. */
export function makeTransition(episode: number, step: number): Transition {
  const k = episode * 1000 + step;
  return {
    episode, step,
    obs: [k, 1, 2], nextObs: [k + 1, 1, 2],
    baseAction: [0.5, -0.5], residualAction: [0.01, 0], action: [0.51, -0.5], nextBaseAction: [0.25, 0.25],
    reward: step % 7 === 0 ? 1 : 0, terminated: false, truncated: step === 99,
    intervention: step % 5 === 0, interventionSource: step % 5 === 0 ? "scripted_operator" : "", policyVersion: "res-test-u1",
  };
}

/** Resolves once `cond()` holds; rejects with `what` after `timeoutMs` (a hang guard, not a timing assertion). */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A logger that keeps warnings for assertions. */
export function recordingLogger(): { warn(msg: string): void; info(msg: string): void; warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, warn: (m: string) => void warnings.push(m), info: () => {} };
}
