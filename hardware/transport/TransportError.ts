/**
 * Errors opening or using a byte transport, with a stable `code` and a message that names the device,
 * what went wrong and the fix.
 */

/** Stable codes for callers and tests. */
export type TransportErrorCode = "PORT_NOT_FOUND" | "PORT_PERMISSION" | "PORT_BUSY" | "PORT_OPEN_FAILED" | "CONNECT_FAILED" | "DISCONNECTED";

/** A transport failure. */
export class TransportError extends Error {
  readonly code: TransportErrorCode;
  constructor(code: TransportErrorCode, message: string, opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = "TransportError";
    this.code = code;
  }
}

/** Maps an OS error from opening a serial port to a TransportError that says the fix. */
export function serialOpenError(path: string, err: Error & { code?: string; errno?: number }): TransportError {
  const m = err.message ?? "";
  if (err.code === "ENOENT" || /ENOENT|No such file/i.test(m)) {
    return new TransportError("PORT_NOT_FOUND", `Cannot open ${path}: no such device — check the cable and power, and the port name (ls /dev/ttyACM* /dev/ttyUSB* /dev/serial/by-id/)`, { cause: err });
  }
  if (err.code === "EACCES" || /EACCES|Permission denied/i.test(m)) {
    return new TransportError("PORT_PERMISSION", `Cannot open ${path}: permission denied — add your user to the dialout group (sudo usermod -aG dialout $USER, then log out and in)`, { cause: err });
  }
  if (err.code === "EBUSY" || /EBUSY|Cannot lock port|Resource temporarily unavailable|busy/i.test(m)) {
    return new TransportError("PORT_BUSY", `Cannot open ${path}: the port is in use by another program — close it (find it with: fuser -v ${path}); ModemManager also grabs new ttyACM ports (sudo systemctl stop ModemManager)`, { cause: err });
  }
  return new TransportError("PORT_OPEN_FAILED", `Cannot open ${path}: ${m} — check the port name and that the device is plugged in`, { cause: err });
}
