/**
 * Keyboard teleop. Two inputs feed the same key map:
 *  - a terminal in raw mode (`--operator keyboard`): terminals send no key-up, so each press jogs the tool a
 *    fixed step (auto-repeat keeps it moving while held);
 *  - the web UI (`--operator ui`): the browser sends key-down/up, so held keys move at `linear_speed`.
 * Motion keys take over; `t` hands back (or takes over without moving); episode keys become commands.
 * Ctrl-C in raw mode arrives as a byte, not a signal, so it is turned back into SIGINT.
 */
import { KeyboardParser } from "./KeyboardParser.ts";
import { idleSample, type TeleopDevice, type TeleopSample } from "./TeleopDevice.ts";
import type { OperatorCommand } from "../../contracts/operator.ts";
import type { TeleopConfig } from "./TeleopConfig.ts";

/** Motion keys → (robot axis 0–5, direction). Arrows move in the table plane, PgUp/PgDn up/down, `,`/`.` pitch. */
export const MOTION_KEYS: Record<string, [number, 1 | -1]> = {
  up: [0, 1],
  down: [0, -1],
  left: [1, 1],
  right: [1, -1],
  pageup: [2, 1],
  pagedown: [2, -1],
  ".": [4, 1],
  ",": [4, -1],
};

/** Episode keys, the same in the terminal and the web UI. */
export const COMMAND_KEYS: Record<string, OperatorCommand> = {
  n: "start",
  p: "pause",
  s: "success",
  f: "failure",
  a: "abort",
  r: "reset",
  space: "estop",
};

/** The terminal side, injected (process.stdin by default). */
export interface KeyInput {
  on(event: "data", cb: (chunk: Buffer) => void): unknown;
  off?(event: "data", cb: (chunk: Buffer) => void): unknown;
  setRawMode?(raw: boolean): unknown;
  resume?(): unknown;
  pause?(): unknown;
  isTTY?: boolean;
}

/** Options of {@link KeyboardTeleop}. */
export interface KeyboardTeleopOptions {
  config: TeleopConfig;
  /** Raw terminal input; omit for a web-UI-only keyboard. */
  input?: KeyInput;
  /** Called on Ctrl-C in raw mode (default: raise SIGINT, so Ctrl-C still stops the session). */
  onInterrupt?: () => void;
  /** Intervention source name (default "keyboard"). */
  source?: string;
}

/** The keyboard device. */
export class KeyboardTeleop implements TeleopDevice {
  readonly source: string;
  readonly path: string;
  readonly takeoverMode = "motion" as const;
  readonly error: string | null = null;
  readonly #o: KeyboardTeleopOptions;
  readonly #parser = new KeyboardParser();
  #jog = [0, 0, 0, 0, 0, 0];
  #held = new Set<string>();
  #commands: OperatorCommand[] = [];
  #takeoverPress = false;
  #gripperOpen = true;
  #gripperChanged = false;
  #onData = (chunk: Buffer) => this.#keys(this.#parser.feed(chunk));
  #flushTimer: NodeJS.Timeout | null = null;
  /**
   * Called the moment the e-stop key arrives (the operator station sets it): the e-stop does not wait for the next
   * control tick's poll, so no command of the policy can leave the safety supervisor after the key. Unset, the e-stop
   * is queued with the other commands.
   */
  onEstop: (() => void) | null = null;

  constructor(opts: KeyboardTeleopOptions) {
    this.#o = opts;
    this.source = opts.source ?? "keyboard";
    this.path = opts.input ? "terminal" : "web UI";
  }

  async open(): Promise<void> {
    const inp = this.#o.input;
    if (!inp) return;
    if (inp.setRawMode) {
      if (inp.isTTY === false) throw new Error("--operator keyboard needs an interactive terminal (stdin is not a TTY); use --operator ui instead");
      inp.setRawMode(true);
    }
    inp.on("data", this.#onData);
    inp.resume?.();
  }

  async close(): Promise<void> {
    const inp = this.#o.input;
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    if (!inp) return;
    inp.off?.("data", this.#onData);
    inp.setRawMode?.(false);
    inp.pause?.();
  }

  /** Raw bytes from a terminal (what `input` delivers; public for recorded-stream tests). */
  feed(chunk: Uint8Array): void {
    this.#keys(this.#parser.feed(chunk));
    // A lone ESC is only known to be the Escape key once nothing follows it.
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = setTimeout(() => this.#keys(this.#parser.flush()), 50);
    this.#flushTimer.unref();
  }

  /** A key went down in the web UI (key names as in KeyboardParser: "up", "s", "space", ...). */
  keyDown(key: string): void {
    if (MOTION_KEYS[key]) this.#held.add(key);
    else this.#press(key);
  }

  /** A key went up in the web UI. */
  keyUp(key: string): void {
    this.#held.delete(key);
  }

  #keys(keys: string[]): void {
    for (const k of keys) {
      const m = MOTION_KEYS[k];
      if (m) {
        const step = m[0] >= 3 ? this.#o.config.keyboard.jog_angle : this.#o.config.keyboard.jog_step;
        this.#jog[m[0]] += m[1] * step;
      } else this.#press(k);
    }
  }

  #press(k: string): void {
    if (k === "ctrl-c") (this.#o.onInterrupt ?? (() => process.kill(process.pid, "SIGINT")))();
    else if (k === "t") this.#takeoverPress = true;
    else if (k === "g") {
      this.#gripperOpen = !this.#gripperOpen;
      this.#gripperChanged = true;
    } else if (COMMAND_KEYS[k] === "estop" && this.onEstop) this.onEstop();
    else if (COMMAND_KEYS[k]) this.#commands.push(COMMAND_KEYS[k]);
  }

  poll(dtSec: number): TeleopSample {
    const s = idleSample();
    const c = this.#o.config;
    const v = [...this.#jog];
    for (const k of this.#held) {
      const [axis, dir] = MOTION_KEYS[k];
      v[axis] += dir * (axis >= 3 ? c.angular_speed : c.linear_speed) * dtSec;
    }
    s.linear = [v[0], v[1], v[2]];
    s.angular = [v[3], v[4], v[5]];
    s.moving = v.some((x) => x !== 0) || this.#gripperChanged;
    s.takeover = this.#takeoverPress;
    s.gripper = this.#gripperChanged ? (this.#gripperOpen ? 1 : 0) : null;
    s.commands = this.#commands;
    this.#jog = [0, 0, 0, 0, 0, 0];
    this.#commands = [];
    this.#takeoverPress = false;
    this.#gripperChanged = false;
    return s;
  }
}
