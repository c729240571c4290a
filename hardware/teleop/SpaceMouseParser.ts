/**
 * SpaceMouse HID input reports → six normalised axes and buttons, per the model's layout
 * (spaceMouseDevices.ts). Reports arrive with the report id as their first byte (hidapi / node-hid
 * convention for devices with numbered reports).
 */
import { SPACEMOUSE_TO_ROBOT, type SpaceMouseModel } from "./spaceMouseDevices.ts";

/** Axes in the robot frame, normalised to [-1, 1]; buttons as a bitmap. */
export interface SpaceMouseState {
  axes: [number, number, number, number, number, number];
  buttons: number;
}

/** Parses reports of one model. */
export class SpaceMouseParser {
  readonly model: SpaceMouseModel;
  readonly state: SpaceMouseState = { axes: [0, 0, 0, 0, 0, 0], buttons: 0 };
  /** Reports that were too short or had an unknown id (counted, skipped). */
  rejected = 0;

  constructor(model: SpaceMouseModel) {
    this.model = model;
  }

  /** Applies one input report; returns false when it was rejected. */
  feed(report: Uint8Array): boolean {
    const id = report[0];
    const view = new DataView(report.buffer, report.byteOffset, report.byteLength);
    const axis = (k: number) => view.getInt16(1 + 2 * k, true);
    const set = (first: number, count: number) => {
      for (let k = 0; k < count; k++) {
        const v = Math.max(-1, Math.min(1, axis(k) / this.model.fullScale));
        this.state.axes[first + k] = v * SPACEMOUSE_TO_ROBOT[first + k] + 0; // + 0 turns -0 into 0
      }
    };
    if (id === 1 && this.model.layout === "combined" && report.length >= 13) set(0, 6);
    else if (id === 1 && this.model.layout === "split" && report.length >= 7) set(0, 3);
    else if (id === 2 && this.model.layout === "split" && report.length >= 7) set(3, 3);
    else if (id === 3 && report.length >= 2) {
      let bits = 0;
      for (let k = 1; k < Math.min(report.length, 5); k++) bits |= report[k] << (8 * (k - 1));
      this.state.buttons = bits >>> 0;
    } else {
      this.rejected++;
      return false;
    }
    return true;
  }

  /** True when button `bit` is down. */
  pressed(bit: number): boolean {
    return ((this.state.buttons >>> bit) & 1) === 1;
  }
}
