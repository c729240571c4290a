/**
 * Linux joystick API (`/dev/input/js*`), per the kernel's Documentation/input/joydev/joystick-api.rst:
 * every read returns whole 8-byte events
 *
 *   struct js_event { __u32 time (ms); __s16 value; __u8 type; __u8 number; };
 *
 * in the host's byte order (little-endian on x86-64 and arm64). type is JS_EVENT_BUTTON (0x01) or
 * JS_EVENT_AXIS (0x02), or'ed with JS_EVENT_INIT (0x80) for the synthetic events the driver sends on open
 * to report the initial state. Axis values span -32767..+32767; buttons are 0 or 1.
 */

/** Event size and type bits, joystick-api.rst §"Event Reading". */
export const JS_EVENT = { SIZE: 8, BUTTON: 0x01, AXIS: 0x02, INIT: 0x80, AXIS_MAX: 32767 } as const;

/** One decoded js_event. */
export interface JsEvent {
  timeMs: number;
  kind: "button" | "axis";
  number: number;
  value: number;
  /** True for the initial-state events sent on open. */
  init: boolean;
}

/** Joystick state: axes normalised to [-1, 1], buttons as booleans. */
export interface JoystickState {
  axes: number[];
  buttons: boolean[];
}

/** Incremental js_event decoder: reads may split events, so it keeps the partial tail. */
export class JoystickParser {
  #tail = new Uint8Array(0);
  /** Events with an unknown type byte (counted, skipped). */
  unknown = 0;
  readonly state: JoystickState = { axes: [], buttons: [] };

  /** Decodes every complete event in `chunk` (plus the tail of the previous one) and updates `state`. */
  feed(chunk: Uint8Array): JsEvent[] {
    const buf = new Uint8Array(this.#tail.length + chunk.length);
    buf.set(this.#tail);
    buf.set(chunk, this.#tail.length);
    const n = Math.floor(buf.length / JS_EVENT.SIZE);
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const events: JsEvent[] = [];
    for (let k = 0; k < n; k++) {
      const o = k * JS_EVENT.SIZE;
      const type = view.getUint8(o + 6);
      const base = type & ~JS_EVENT.INIT;
      const number = view.getUint8(o + 7);
      const value = view.getInt16(o + 4, true);
      if (base !== JS_EVENT.BUTTON && base !== JS_EVENT.AXIS) {
        this.unknown++;
        continue;
      }
      const e: JsEvent = { timeMs: view.getUint32(o, true), kind: base === JS_EVENT.AXIS ? "axis" : "button", number, value, init: (type & JS_EVENT.INIT) !== 0 };
      if (e.kind === "axis") this.state.axes[number] = Math.max(-1, Math.min(1, value / JS_EVENT.AXIS_MAX));
      else this.state.buttons[number] = value !== 0;
      events.push(e);
    }
    this.#tail = buf.slice(n * JS_EVENT.SIZE);
    return events;
  }
}

/** Encodes one js_event (for recorded test streams and the protocol simulator). */
export function encodeJsEvent(e: { timeMs: number; kind: "button" | "axis"; number: number; value: number; init?: boolean }): Uint8Array {
  const b = new Uint8Array(JS_EVENT.SIZE);
  const v = new DataView(b.buffer);
  v.setUint32(0, e.timeMs >>> 0, true);
  v.setInt16(4, e.value, true);
  v.setUint8(6, (e.kind === "axis" ? JS_EVENT.AXIS : JS_EVENT.BUTTON) | (e.init ? JS_EVENT.INIT : 0));
  v.setUint8(7, e.number);
  return b;
}
