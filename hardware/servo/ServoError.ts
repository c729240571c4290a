/** Servo-bus failures with a stable `code`; messages name the servo, what was expected, what was found and the fix. */

/** Stable codes. */
export type ServoErrorCode = "NO_REPLY" | "CHECKSUM" | "SERVO_ERROR" | "MODEL_MISMATCH" | "BAD_REPLY";

/** A servo-bus failure. */
export class ServoError extends Error {
  readonly code: ServoErrorCode;
  /** The servo ids concerned. */
  readonly ids: number[];
  constructor(code: ServoErrorCode, ids: number[], message: string) {
    super(message);
    this.name = "ServoError";
    this.code = code;
    this.ids = ids;
  }
}
