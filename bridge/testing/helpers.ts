/** Test helpers for the bridge: transitions with recognisable values, polling for a condition. */
import type { Transition } from "../../contracts/Transition.ts";

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

/** A transition of any width whose values encode (episode, step): obs in raw units, actions in [-1, 1]. */
export function makeTransitionOf(episode: number, step: number, obsDim: number, actionDim: number): Transition {
  const k = episode * 1000 + step;
  const obs = Array.from({ length: obsDim }, (_, i) => ((k + i) % 97) / 97);
  const act = (o: number) => Array.from({ length: actionDim }, (_, i) => Math.sin(k + i + o) * 0.5);
  return {
    episode, step, obs, nextObs: obs.map((v) => v + 0.01),
    baseAction: act(0), residualAction: act(0).map(() => 0.01), action: act(0).map((v) => v + 0.01), nextBaseAction: act(1),
    reward: step % 50 === 49 ? 1 : 0, terminated: step % 50 === 49, truncated: false,
    intervention: step % 10 === 0, interventionSource: step % 10 === 0 ? "scripted_operator" : "", policyVersion: "bc-test",
  };
}
