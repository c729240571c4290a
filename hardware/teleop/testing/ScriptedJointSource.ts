/** A JointPositionSource test double: replays recorded leader positions, one per read, then holds the last. */
import type { JointPositionSource } from "../JointPositionSource.ts";

/** Replays `frames`; `failAt` (a read index) makes that read and every later one reject, as an unplugged bus does. */
export class ScriptedJointSource implements JointPositionSource {
  readonly jointNames: readonly string[];
  readonly path = "scripted-leader";
  readonly #frames: number[][];
  readonly #failAt: number;
  #i = 0;
  closed = false;

  constructor(jointNames: readonly string[], frames: number[][], opts: { failAt?: number } = {}) {
    this.jointNames = jointNames;
    this.#frames = frames;
    this.#failAt = opts.failAt ?? Infinity;
  }

  async read(): Promise<number[]> {
    if (this.#i >= this.#failAt) throw new Error("no status packet from servo 3 within 20 ms (bus timeout)");
    const f = this.#frames[Math.min(this.#i, this.#frames.length - 1)];
    this.#i++;
    return [...f];
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
