/**
 * 3Dconnexion SpaceMouse teleop through `node-hid` (an optional dependency, loaded only when this device is
 * used). Reports are parsed per model (SpaceMouseParser.ts); moving the cap takes over (motion mode), the
 * takeover button hands back, the gripper button toggles the gripper.
 */
import { SpaceMouseParser } from "./SpaceMouseParser.ts";
import { findSpaceMouseModel, SPACEMOUSE_MODELS, type SpaceMouseModel } from "./spaceMouseDevices.ts";
import { mapAxes, shapeTwist } from "./shaping.ts";
import { deviceErrorMessage, idleSample, TeleopDeviceError, type TeleopDevice, type TeleopSample } from "./TeleopDevice.ts";
import type { TeleopConfig } from "./TeleopConfig.ts";

/** The part of node-hid's HID object this device uses (tests inject a recorded report source). */
export interface HidReportSource {
  on(event: "data", cb: (report: Buffer) => void): unknown;
  on(event: "error", cb: (err: Error) => void): unknown;
  close(): void;
}

/** What a HID enumeration entry provides. */
export interface HidDeviceInfo {
  vendorId: number;
  productId: number;
  path?: string;
  product?: string;
}

/** Opens a device: the node-hid binding by default. */
export type HidOpener = (path: string | undefined) => Promise<{ source: HidReportSource; info: HidDeviceInfo }>;

const UDEV = `echo 'KERNEL=="hidraw*", ATTRS{idVendor}=="256f", MODE="0660", GROUP="plugdev"' | sudo tee /etc/udev/rules.d/60-rlft-spacemouse.rules (and the same with 046d for older models); sudo udevadm trigger`;

/** node-hid, loaded lazily: a missing optional dependency becomes a message with the install line. */
async function nodeHidOpener(path: string | undefined): Promise<{ source: HidReportSource; info: HidDeviceInfo }> {
  let hid: { devices(): HidDeviceInfo[]; HID: new (path: string) => HidReportSource };
  try {
    const name = "node-hid";
    hid = (await import(name)) as typeof hid;
  } catch (e) {
    throw new TeleopDeviceError(path ?? "hid", `--operator spacemouse needs the optional package node-hid, which is not installed here (${(e as Error).message.split("\n")[0]}): npm install node-hid`);
  }
  const all = hid.devices();
  const info = path ? all.find((d) => d.path === path) : all.find((d) => findSpaceMouseModel(d.vendorId, d.productId));
  if (!info?.path) {
    const known = SPACEMOUSE_MODELS.map((m) => `${m.vendorId.toString(16).padStart(4, "0")}:${m.productId.toString(16)}`).join(", ");
    throw new TeleopDeviceError(path ?? "hid", path ? `No HID device at ${path}: is the SpaceMouse plugged in? (ls /dev/hidraw*)` : `No SpaceMouse found among ${all.length} HID devices (known vendor:product ids ${known}); is it plugged in? Check with lsusb.`);
  }
  try {
    return { source: new hid.HID(info.path), info };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const code = /permission|denied|cannot open/i.test(err.message) ? "EACCES" : err.code;
    throw new TeleopDeviceError(info.path, deviceErrorMessage("SpaceMouse", info.path, { ...err, code, message: err.message }, { group: "plugdev", udevHint: UDEV }));
  }
}

/** Options of {@link SpaceMouseTeleop}. */
export interface SpaceMouseTeleopOptions {
  config: TeleopConfig;
  /** Default: node-hid. */
  open?: HidOpener;
}

/** The SpaceMouse device. */
export class SpaceMouseTeleop implements TeleopDevice {
  readonly source = "spacemouse";
  readonly takeoverMode = "motion" as const;
  path: string;
  readonly #o: SpaceMouseTeleopOptions;
  parser: SpaceMouseParser | null = null;
  #source: HidReportSource | null = null;
  #error: string | null = null;
  #lastButtons = 0;
  #gripperOpen = true;
  #gripperChanged = false;
  #takeoverHeld = false;

  constructor(opts: SpaceMouseTeleopOptions) {
    this.#o = opts;
    this.path = opts.config.spacemouse.path ?? "first SpaceMouse";
  }

  get error(): string | null {
    return this.#error;
  }

  async open(): Promise<void> {
    const { source, info } = await (this.#o.open ?? nodeHidOpener)(this.#o.config.spacemouse.path);
    const model: SpaceMouseModel | undefined = findSpaceMouseModel(info.vendorId, info.productId);
    if (!model) {
      source.close();
      throw new TeleopDeviceError(info.path ?? this.path, `HID device ${info.vendorId.toString(16)}:${info.productId.toString(16)} (${info.product ?? "unknown"}) is not a known SpaceMouse model; add it to hardware/teleop/spaceMouseDevices.ts`);
    }
    this.path = info.path ?? this.path;
    this.parser = new SpaceMouseParser(model);
    this.#source = source;
    source.on("data", (r: Buffer) => this.feed(r));
    source.on("error", (e: Error) => (this.#error = `SpaceMouse at ${this.path} stopped: ${e.message} — was it unplugged? Plug it back in and restart the session.`));
  }

  async close(): Promise<void> {
    this.#source?.close();
    this.#source = null;
  }

  /** One input report (public for recorded-stream tests). */
  feed(report: Uint8Array): void {
    const p = this.parser;
    if (!p || !p.feed(report)) return;
    const roles = p.model.buttons;
    for (const [bit, role] of Object.entries(roles)) {
      const b = Number(bit);
      const down = p.pressed(b);
      const was = ((this.#lastButtons >>> b) & 1) === 1;
      if (role === "gripper" && down && !was) {
        this.#gripperOpen = !this.#gripperOpen;
        this.#gripperChanged = true;
      }
      if (role === "takeover") this.#takeoverHeld = down;
    }
    this.#lastButtons = p.state.buttons;
  }

  poll(dtSec: number): TeleopSample {
    const s = idleSample();
    const p = this.parser;
    if (!p) return s;
    const c = this.#o.config;
    const axes = mapAxes(p.state.axes, c.spacemouse.axis_map, c.spacemouse.axis_gain);
    const t = shapeTwist(axes, dtSec, { deadzone: c.deadzone, linearSpeed: c.linear_speed, angularSpeed: c.angular_speed, axisGain: [1, 1, 1, 1, 1, 1] });
    s.linear = t.linear;
    s.angular = t.angular;
    s.moving = t.moving || this.#gripperChanged;
    s.takeover = this.#takeoverHeld;
    s.gripper = this.#gripperChanged ? (this.#gripperOpen ? 1 : 0) : null;
    this.#gripperChanged = false;
    return s;
  }
}
