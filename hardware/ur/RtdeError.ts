/** RTDE failures with a stable `code`; messages name the controller, what happened and the fix. */

/** Stable codes. */
export type RtdeErrorCode = "VERSION_REJECTED" | "RECIPE_REJECTED" | "START_REJECTED" | "TIMEOUT" | "PROTECTIVE_STOP" | "NOT_READY" | "DISCONNECTED" | "PROTOCOL";

/** An RTDE failure. */
export class RtdeError extends Error {
  readonly code: RtdeErrorCode;
  constructor(code: RtdeErrorCode, message: string) {
    super(message);
    this.name = "RtdeError";
    this.code = code;
  }
}
