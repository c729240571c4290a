/**
 * The one check every listening address of rlft's TypeScript side goes through (docs/security.md §3): the operator UI,
 * the in-process MQTT broker, the embedded runtime's ZeroMQ proxy, the UR controller simulator. Loopback, `ipc://` and
 * `inproc://` stay on this machine and are always allowed; any other address (`*`, `0.0.0.0`, `::`, a real interface,
 * a host name) needs the listener's authentication, or an explicit `insecure_public_bind: true` where the listener
 * offers one. The learner applies the same rule in Python (`rlft_learner.transport.security.check_bind`), with the same opt-in
 * name and the same wording.
 */
import { isIP } from "node:net";

/** What {@link checkListenAddress} needs to know about one listener. */
export interface ListenRequest {
  /** The setting that chose the address, as the user writes it (`ui.host`, `mqtt.embedded_host`). */
  setting: string;
  /** A host (`127.0.0.1`, `0.0.0.0`, `::1`) or a ZeroMQ endpoint (`tcp://*:5555`, `ipc:///tmp/x`). */
  address: string;
  /** True when the listener authenticates its clients (a UI token, broker credentials, CURVE). */
  authenticated: boolean;
  /** What an unauthenticated public listener would let anyone on the network do ("press the robot's buttons"). */
  risk: string;
  /** How to turn its authentication on ("set ui.token (or ui.token_file)"); absent when it has none. */
  authFix?: string;
  /**
   * The listener's explicit opt-in to listen publicly without authentication: `true` when the user set it. Leave it
   * `undefined` for a listener that offers no opt-in (the operator UI: a token is cheap and the UI moves the arm).
   */
  insecurePublicBind?: boolean;
  /** Where the opt-in's warning goes (default console.warn). */
  warn?: (msg: string) => void;
}

/** A refused listening address; the message names the setting, the address, the risk and the fixes. */
export class ListenAddressError extends Error {
  readonly code = "PUBLIC_BIND_REFUSED";
}

/** The host part of a host or endpoint: `tcp://[::1]:5555` → `::1`; `ipc://…`/`inproc://…` → null (never on a network). */
export function listenHost(address: string): string | null {
  if (/^(ipc|inproc):\/\//.test(address)) return null;
  const m = /^[a-z][a-z0-9+.-]*:\/\/(.*)$/i.exec(address);
  if (!m) return address.replace(/^\[|\]$/g, "");
  const rest = m[1].replace(/\/.*$/, "");
  const bracketed = /^\[([^\]]*)\](?::.*)?$/.exec(rest);
  if (bracketed) return bracketed[1];
  // A bare IPv6 address has several colons; host:port has one.
  return (rest.match(/:/g) ?? []).length > 1 ? rest : rest.replace(/:[^:]*$/, "");
}

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1, ::ffff:127.x, `localhost`, ipc://, inproc://. */
export function isLoopbackAddress(address: string): boolean {
  const host = listenHost(address);
  if (host === null) return true;
  const h = host.toLowerCase();
  if (h === "localhost") return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || /^(0:){7}1$/.test(h) || /^::ffff:127\./.test(h);
  return false; // `*`, an interface name or a host name may well be public
}

/**
 * Throws {@link ListenAddressError} when `r.address` reaches beyond this machine without authentication and without the
 * explicit opt-in; warns when the opt-in lets it through. Call it before every listen/bind.
 */
export function checkListenAddress(r: ListenRequest): void {
  if (r.authenticated || isLoopbackAddress(r.address)) return;
  const optIn = r.insecurePublicBind !== undefined;
  if (r.insecurePublicBind) {
    (r.warn ?? console.warn)(`${r.setting} ${r.address} listens beyond this machine WITHOUT authentication (insecure_public_bind): anyone on that network could ${r.risk}`);
    return;
  }
  const fixes = [r.authFix, `keep ${r.setting} on 127.0.0.1 and reach it through an SSH tunnel`, optIn ? "set insecure_public_bind: true on a network you trust" : undefined].filter(Boolean);
  throw new ListenAddressError(`${r.setting} ${r.address} listens beyond this machine without authentication: anyone on the network could ${r.risk}. ${capitalise(fixes.join(", or "))}`);
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
