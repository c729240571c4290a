"""Who may talk to the learner and how robots know a package is ours (docs/security.md).

- ZeroMQ CURVE (RFC 26/CurveZMQ): the learner's ROUTER and PUB are CURVE servers with the learner's secret key; a ZAP
  handler (pyzmq's ThreadAuthenticator, RFC 27/ZAP) admits only robots whose public certificate is in the authorized
  directory. Certificates are pyzmq `zmq.auth` files (`<name>.key` public, `<name>.key_secret` secret, Z85 keys), the
  format `rlft keys` writes.
- Policy packages are signed with ed25519 over the exact bytes of policy.json (which lists the sha256 of every other
  file): `policy.sig` = {"alg": "ed25519", "key_id", "signature"}. Keys are PEM (PKCS#8 private, SPKI public), read by
  python3-cryptography here and by node:crypto on the robot.
- A bind to anything but loopback needs CURVE, or `insecure_public_bind: true`: nothing listens on the network open.
  Every learner socket binds through `bind_checked` (serve, train-bc, recap), so no command can skip the check.
- A robot key speaks for the robot its file names: `authorized/<robot_id>.key` admits that key as `robot_id` only
  (`rlft keys --robot sim-0` writes authorized/sim-0.key); the same key copied under several names speaks for each.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import logging
import os
from dataclasses import dataclass, field
from typing import Any

import zmq

log = logging.getLogger("rlft_learner.security")

SIGNATURE_FILE = "policy.sig"


@dataclass
class CurveServer:
    """The learner's CURVE identity and who it admits: `robots` maps each admitted public key (Z85, as ZAP reports it
    in a message's User-Id) to the robot ids it may speak for, from the file names in `authorized_dir`."""

    public_key: bytes
    secret_key: bytes
    authorized_dir: str
    robots: dict[str, frozenset[str]] = field(default_factory=dict)


def authorized_robots(authorized_dir: str) -> dict[str, frozenset[str]]:
    """{Z85 public key: robot ids} from `<robot_id>.key` files (the files pyzmq's ZAP handler admits)."""
    import zmq.auth

    out: dict[str, set[str]] = {}
    for name in sorted(os.listdir(authorized_dir)):
        if name.endswith(".key"):
            try:
                public, _ = zmq.auth.load_certificate(os.path.join(authorized_dir, name))
            except (OSError, ValueError) as exc:
                raise ValueError(f"curve_authorized {authorized_dir}/{name}: {exc} — it must be a public certificate "
                                 "written by `rlft keys`") from None
            out.setdefault(public.decode("ascii"), set()).add(name[: -len(".key")])
    return {k: frozenset(v) for k, v in out.items()}


def load_curve_server(secret_path: str, authorized_dir: str) -> CurveServer:
    """Read the learner's secret certificate and check the authorized directory; errors name the file and the fix."""
    import zmq.auth

    if not zmq.has("curve"):
        raise RuntimeError("this libzmq has no CURVE support — install Debian's python3-zmq (built with libsodium)")
    try:
        public, secret = zmq.auth.load_certificate(secret_path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"curve_secret {secret_path!r}: {exc} — generate keys with `rlft keys --dir keys`") from None
    if not secret:
        raise ValueError(f"curve_secret {secret_path!r} holds only a public key; pass the .key_secret file `rlft keys` wrote")
    if not authorized_dir or not os.path.isdir(authorized_dir):
        raise ValueError(f"curve_authorized {authorized_dir!r} is not a directory — it must hold the robots' public .key files "
                         "(`rlft keys` writes keys/authorized/)")
    robots = authorized_robots(authorized_dir)
    if not robots:
        log.warning("curve_authorized %s holds no .key files: no robot can connect", authorized_dir)
    return CurveServer(public, secret, authorized_dir, robots)


class Authenticator:
    """ZAP handler on the given context admitting the robots in `authorized_dir` (CURVE) and nobody else."""

    def __init__(self, ctx: zmq.Context, authorized_dir: str):
        from zmq.auth.thread import ThreadAuthenticator

        self._auth = ThreadAuthenticator(ctx, log=logging.getLogger("rlft_learner.zap"))
        self._auth.start()
        self._auth.configure_curve(domain="*", location=authorized_dir)

    def stop(self) -> None:
        self._auth.stop()


def make_curve_server(sock: zmq.Socket, server: CurveServer) -> None:
    """Turn a socket into a CURVE server (set before bind)."""
    sock.curve_secretkey = server.secret_key
    sock.curve_publickey = server.public_key
    sock.curve_server = True


def is_loopback_endpoint(endpoint: str) -> bool:
    """tcp://127.x / [::1] / localhost, ipc:// and inproc:// stay on this machine; `*`, 0.0.0.0 and real interfaces do not."""
    if endpoint.startswith(("ipc://", "inproc://")):
        return True
    if not endpoint.startswith("tcp://"):
        return False
    host = endpoint[len("tcp://"):].rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # `*`, an interface name or a hostname


def check_bind(endpoint: str, flag: str, secured: bool, insecure_public_bind: bool) -> None:
    """Refuse a non-loopback bind without CURVE unless the user said so explicitly."""
    if secured or is_loopback_endpoint(endpoint):
        return
    if not insecure_public_bind:
        raise ValueError(f"{flag} {endpoint!r} listens beyond this machine without CURVE: anyone on the network could send "
                         "experience or receive policies. Set curve_secret and curve_authorized (keys from `rlft keys`), or "
                         "bind tcp://127.0.0.1:PORT, or set insecure_public_bind: true (--insecure-public-bind) on a network "
                         "you trust")
    log.warning("%s %s listens beyond this machine WITHOUT authentication (insecure_public_bind)", flag, endpoint)


def bind_checked(sock: zmq.Socket, endpoint: str, flag: str, curve: CurveServer | None, insecure_public_bind: bool) -> str:
    """The one way a learner socket binds: `check_bind`, CURVE server keys when given, then bind; returns the bound
    endpoint. A failed bind raises RuntimeError naming `flag` (the caller closes the socket)."""
    check_bind(endpoint, flag, secured=curve is not None, insecure_public_bind=insecure_public_bind)
    if curve is not None:
        make_curve_server(sock, curve)
    try:
        sock.bind(endpoint)
    except zmq.ZMQError as exc:
        raise RuntimeError(f"Cannot bind {flag} {endpoint}: {exc} — pick a free port (or a valid address) with {flag}") from None
    return sock.getsockopt_string(zmq.LAST_ENDPOINT)


# --- package signatures ---------------------------------------------------------------------------------------------

def key_id(public_raw: bytes) -> str:
    """Short fingerprint of a raw 32-byte ed25519 public key (first 16 hex digits of its sha256)."""
    return hashlib.sha256(public_raw).hexdigest()[:16]


def load_signing_key(path: str):
    """An ed25519 private key from a PKCS#8 PEM file (what `rlft keys` writes as <name>.sign.pem)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        with open(path, "rb") as f:
            key = serialization.load_pem_private_key(f.read(), password=None)
    except (OSError, ValueError) as exc:
        raise ValueError(f"sign_key {path!r}: {exc} — generate one with `rlft keys --dir keys`") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"sign_key {path!r} is a {type(key).__name__}, expected an ed25519 private key")
    return key


def sign_package(package_dir: str, key: Any) -> dict:
    """Write `policy.sig` next to policy.json: ed25519 over policy.json's bytes (which hold every file's sha256)."""
    from cryptography.hazmat.primitives import serialization

    with open(os.path.join(package_dir, "policy.json"), "rb") as f:
        payload = f.read()
    public_raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    sig = {"alg": "ed25519", "key_id": key_id(public_raw), "signature": base64.b64encode(key.sign(payload)).decode()}
    with open(os.path.join(package_dir, SIGNATURE_FILE), "w") as f:
        json.dump(sig, f)
    return sig
