/**
 * Who is in control, from a device's raw takeover input, as a small state machine:
 *  - hold: a deadman — in control exactly while the trigger/button is held (gamepad).
 *  - toggle: each press of the takeover button switches control.
 *  - motion: moving the device takes over; a takeover press hands back at once; after `releaseSec` without
 *    motion control returns to the policy (SpaceMouse, leader arm, keyboard). releaseSec 0 = only the press hands back.
 */

/** Options of {@link TakeoverGesture}. */
export interface TakeoverGestureOptions {
  mode: "hold" | "toggle" | "motion";
  /** motion mode: seconds without motion before handing back (0: never automatically). */
  releaseSec: number;
}

/** The takeover state machine. */
export class TakeoverGesture {
  readonly #o: TakeoverGestureOptions;
  #inControl = false;
  #lastPressed = false;
  #idleSec = 0;

  constructor(opts: TakeoverGestureOptions) {
    if (!(opts.releaseSec >= 0)) throw new Error(`TakeoverGesture: releaseSec must be ≥ 0, got ${opts.releaseSec}`);
    this.#o = opts;
  }

  /** True while the operator has control. */
  get inControl(): boolean {
    return this.#inControl;
  }

  /** Drops control (device fault, episode reset). */
  release(): void {
    this.#inControl = false;
    this.#idleSec = 0;
  }

  /** Advances by one period; returns whether the operator is in control now. */
  update(input: { takeover: boolean; moving: boolean }, dtSec: number): boolean {
    const pressed = input.takeover && !this.#lastPressed;
    this.#lastPressed = input.takeover;
    switch (this.#o.mode) {
      case "hold":
        this.#inControl = input.takeover;
        break;
      case "toggle":
        if (pressed) this.#inControl = !this.#inControl;
        break;
      case "motion":
        if (pressed) {
          this.#inControl = !this.#inControl;
          this.#idleSec = 0;
        } else if (input.moving) {
          this.#inControl = true;
          this.#idleSec = 0;
        } else if (this.#inControl && this.#o.releaseSec > 0) {
          this.#idleSec += dtSec;
          if (this.#idleSec >= this.#o.releaseSec) this.release();
        }
        break;
    }
    return this.#inControl;
  }
}
