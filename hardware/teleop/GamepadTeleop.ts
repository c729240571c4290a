/**
 * Gamepad teleop over the Linux joystick API (`/dev/input/js*`, see JoystickParser.ts). The deadman
 * button must be held for the operator to have control (hold mode): let go and the policy gets the arm
 * back through the arbiter's blend. Sticks drive the tool at `linear_speed` × deflection.
 */
import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import { JoystickParser } from "./JoystickParser.ts";
import { mapAxes, shapeTwist } from "./shaping.ts";
import { deviceErrorMessage, idleSample, TeleopDeviceError, type TeleopDevice, type TeleopSample } from "./TeleopDevice.ts";
import type { OperatorCommand } from "../../contracts/operator.ts";
import type { TeleopConfig } from "./TeleopConfig.ts";

/** Options of {@link GamepadTeleop}. */
export interface GamepadTeleopOptions {
  config: TeleopConfig;
  /** Opens the device's byte stream (default: fs.createReadStream). Tests inject a recorded stream. */
  openStream?: (path: string) => Readable;
}

const UDEV = `echo 'KERNEL=="js[0-9]*", MODE="0660", GROUP="input"' | sudo tee /etc/udev/rules.d/60-rlft-joystick.rules && sudo udevadm trigger`;

/** The gamepad device. */
export class GamepadTeleop implements TeleopDevice {
  readonly source = "gamepad";
  readonly path: string;
  readonly takeoverMode = "hold" as const;
  readonly #o: GamepadTeleopOptions;
  readonly parser = new JoystickParser();
  #stream: Readable | null = null;
  #error: string | null = null;
  #commands: OperatorCommand[] = [];
  #gripperOpen = true;
  #gripperChanged = false;

  constructor(opts: GamepadTeleopOptions) {
    this.#o = opts;
    this.path = opts.config.gamepad.path;
  }

  get error(): string | null {
    return this.#error;
  }

  /** Opens the device; resolves once it is readable, rejects with the path and the fix. */
  async open(): Promise<void> {
    const s = (this.#o.openStream ?? ((p) => createReadStream(p)))(this.path);
    this.#stream = s;
    await new Promise<void>((resolve, reject) => {
      const onErr = (e: NodeJS.ErrnoException) => reject(new TeleopDeviceError(this.path, deviceErrorMessage("gamepad", this.path, e, { group: "input", udevHint: UDEV })));
      s.once("error", onErr);
      const ready = () => {
        s.off("error", onErr);
        resolve();
      };
      if ((s as { pending?: boolean }).pending === false || !("pending" in s)) queueMicrotask(ready);
      else s.once("ready", ready);
    });
    s.on("data", (chunk: Buffer) => this.feed(chunk));
    s.on("error", (e: NodeJS.ErrnoException) => (this.#error = deviceErrorMessage("gamepad", this.path, e, { group: "input", udevHint: UDEV })));
    s.on("end", () => (this.#error ??= `gamepad at ${this.path} was unplugged (end of stream); plug it back in and restart the session`));
  }

  async close(): Promise<void> {
    this.#stream?.destroy();
    this.#stream = null;
  }

  /** Raw js_event bytes (what the stream delivers; public for recorded-stream tests). */
  feed(chunk: Uint8Array): void {
    const b = this.#o.config.gamepad.buttons;
    for (const e of this.parser.feed(chunk)) {
      if (e.kind !== "button" || e.init || e.value === 0) continue; // presses only, not the initial state
      if (e.number === b.gripper) {
        this.#gripperOpen = !this.#gripperOpen;
        this.#gripperChanged = true;
      } else if (e.number === b.success) this.#commands.push("success");
      else if (e.number === b.failure) this.#commands.push("failure");
      else if (e.number === b.start) this.#commands.push("start");
      else if (e.number === b.pause) this.#commands.push("pause");
    }
  }

  poll(dtSec: number): TeleopSample {
    const c = this.#o.config;
    const s = idleSample();
    const axes = mapAxes(this.parser.state.axes, c.gamepad.axis_map, c.gamepad.axis_gain);
    const t = shapeTwist(axes, dtSec, { deadzone: c.deadzone, linearSpeed: c.linear_speed, angularSpeed: c.angular_speed, axisGain: [1, 1, 1, 1, 1, 1] });
    s.linear = t.linear;
    s.angular = t.angular;
    s.moving = t.moving || this.#gripperChanged;
    s.takeover = this.parser.state.buttons[c.gamepad.buttons.deadman] === true;
    s.gripper = this.#gripperChanged ? (this.#gripperOpen ? 1 : 0) : null;
    s.commands = this.#commands;
    this.#commands = [];
    this.#gripperChanged = false;
    return s;
  }
}
