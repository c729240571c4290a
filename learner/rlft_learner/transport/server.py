"""ROUTER server for the `rlft-exp/1` dataset stream: hello -> episodes -> end (docs/contracts.md).

A malformed message is counted, logged and answered with `error {seq, reason}`; the server keeps going.
`seq` in an error reply is -1 when the offending header could not be read.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import zmq

from .. import __version__
from ..data import Dataset, Episode
from ..options import allow, help_meta as _h
from .protocol import PROTOCOL, FrameError, ProtocolError, ValueRangeError, decode, encode
from .security import Authenticator, CurveServer, bind_checked, load_curve_server

log = logging.getLogger("rlft_learner.server")
LEARNER = f"rlft_learner {__version__}"


@dataclass
class ServerStats:
    """What the learner's door refused, by kind (shown in `done`, progress and the server's log)."""

    messages: int = 0
    malformed: int = 0  # refused as not rlft-exp/1 (ProtocolError), including the next counter
    rejected_values: int = 0  # refused for non-finite values or |x| > MAX_ABS_VALUE (protocol.ValueRangeError)
    rejected_frames: int = 0  # camera frames in the wrong encoding or size (protocol.FrameError, the online door's cameras)
    refused: int = 0  # well-formed requests that cannot be served (wrong base version, robot_id held by another peer, ...)
    internal_errors: int = 0  # messages that reached the catch-all: a learner bug (the fuzz tests assert none)
    errors: list[str] = field(default_factory=list)


@dataclass
class Peer:
    """Who sent a message: its ROUTER route (routing id first: one per connection, never reused by this socket), the
    CURVE public key ZAP admitted it with (Z85, None without CURVE) and its IP address (for logs and errors)."""

    route: list[bytes]
    key: str | None = None
    address: str = "?"

    @property
    def connection(self) -> bytes:
        return self.route[0]


#: Default cap on one message (ZMQ_MAXMSGSIZE). The largest legitimate messages today are train-bc/recap episodes
#: (T x (obs + action + reward) float32: 2000 steps x 100 values is 0.8 MB) and policy packages the learner sends; 64 MiB
#: leaves room for the coming camera frames (a 224x224 RGB uint8 frame is 150 kB) while a hostile peer can no longer make
#: the learner buffer 2 GiB messages. A bigger message closes the sender's connection (ZeroMQ sends no reply; the robot
#: sees a timeout): raise `max_message_mb` for pixel datasets.
MAX_MESSAGE_MB = 64.0
#: Messages ZeroMQ queues per connection before it stops reading from it (TCP backpressure, nothing is dropped). Robots
#: have one request in flight at a time; 16 bounds what one connection can make the learner hold at 16 x the size cap.
RECV_QUEUE = 16


@dataclass
class DoorConfig:
    """Who may talk to a learner socket and how much (docs/security.md); shared by serve, train-bc and recap."""

    curve_secret: str = field(default="", metadata=_h("the learner's CURVE secret certificate (keys/learner.key_secret from `rlft keys`); empty = no CURVE"))
    curve_authorized: str = field(default="", metadata=_h("directory of robots' public .key certificates admitted over CURVE (keys/authorized); authorized/<robot_id>.key admits that key as robot_id only; required with curve_secret"))
    insecure_public_bind: bool = field(default=False, metadata=_h("allow binding a non-loopback address without CURVE (anyone on that network can send experience)"))
    max_message_mb: float = field(default=MAX_MESSAGE_MB, metadata=_h("largest message accepted, in MiB (ZMQ_MAXMSGSIZE); a bigger one closes the sender's connection. Raise it for camera-frame datasets"))

    def door(self) -> dict[str, Any]:
        """RouterEndpoint keyword arguments: the CURVE server (loaded; None without it), the public-bind opt-in and the
        message cap."""
        curve = None
        if self.curve_secret or self.curve_authorized:
            if not (self.curve_secret and self.curve_authorized):
                raise ValueError("config: curve_secret and curve_authorized go together (the learner's secret certificate and "
                                 "the directory of robots it admits)")
            curve = load_curve_server(self.curve_secret, self.curve_authorized)
        return {"curve": curve, "insecure_public_bind": self.insecure_public_bind,
                "max_message_bytes": int(self.max_message_mb * (1 << 20))}


allow(DoorConfig, {"max_message_mb": "(0, 4096]"})


class RouterEndpoint:
    """A bound ROUTER socket with rlft-exp/1 replies and error accounting; shared by the dataset and online servers.
    It binds through security.bind_checked (loopback, or CURVE, or the explicit insecure opt-in) and, with CURVE, runs
    the ZAP handler that admits only the keys in `curve.authorized_dir`."""

    def __init__(self, bind: str, flag: str = "--bind", curve: CurveServer | None = None, insecure_public_bind: bool = False,
                 max_message_bytes: int = int(MAX_MESSAGE_MB * (1 << 20))):
        self.stats = ServerStats()
        self.curve = curve
        self._ctx = zmq.Context.instance()
        # ZAP must run before the first CURVE handshake; it admits only robots in curve.authorized_dir.
        self._auth = Authenticator(self._ctx, curve.authorized_dir) if curve is not None else None
        self._sock = self._ctx.socket(zmq.ROUTER)
        self._sock.setsockopt(zmq.LINGER, 1000)
        self._sock.setsockopt(zmq.MAXMSGSIZE, max_message_bytes)
        self._sock.setsockopt(zmq.RCVHWM, RECV_QUEUE)
        try:
            self.endpoint = bind_checked(self._sock, bind, flag, curve, insecure_public_bind)
        except Exception:
            self._sock.close(0)
            self._stop_auth()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._sock.close()
        self._stop_auth()

    def _stop_auth(self) -> None:
        if self._auth is not None:
            self._auth.stop()
            self._auth = None

    def _reply(self, route: list[bytes], header: dict[str, Any], tensors: dict[str, np.ndarray] | None = None,
               extra: list[bytes] | None = None) -> None:
        self._sock.send_multipart(route + encode(header, tensors) + (extra or []))

    def _error(self, route: list[bytes], seq: int | None, reason: str, malformed: bool = True, values: bool = False,
               frames: bool = False) -> None:
        """Answer `error {seq, reason}`; `malformed=False` for well-formed requests that cannot be served, `values` for
        messages refused for their values (counted apart: that is what poisoning looks like)."""
        self.stats.malformed += int(malformed)
        self.stats.refused += int(not malformed)
        self.stats.rejected_values += int(values)
        self.stats.rejected_frames += int(frames)
        self.stats.errors.append(reason)
        del self.stats.errors[:-100]  # keep the last 100 only
        n = self.stats.malformed + self.stats.refused
        if n <= 20 or n % 100 == 0:  # a flood of bad messages must not flood the log (or fill its disk)
            log.warning("rejected message (seq %s; %d refused so far%s): %s", seq, n,
                        ", logging every 100th" if n >= 20 else "", reason[:2000])
        self._reply(route, {"type": "error", "seq": -1 if seq is None else seq, "reason": reason})

    def _refuse(self, route: list[bytes], exc: ProtocolError) -> None:
        """Answer a message `decode` refused."""
        self._error(route, exc.seq, str(exc), values=isinstance(exc, ValueRangeError), frames=isinstance(exc, FrameError))

    def _recv(self, timeout_ms: int) -> tuple[Peer, list[bytes]] | None:
        """Next message as (peer, frames), or None after `timeout_ms` without one."""
        if not self._sock.poll(timeout_ms, zmq.POLLIN):
            return None
        parts = self._sock.recv_multipart(copy=False)
        self.stats.messages += 1
        last = parts[-1]
        peer = Peer(route=[], key=_frame_property(last, "User-Id") if self.curve is not None else None,
                    address=_frame_property(last, "Peer-Address") or "?")
        msg = [p.bytes for p in parts]
        # ROUTER prepends the identity; a REQ-style client also adds an empty delimiter, which we echo back.
        if len(msg) > 2 and msg[1] == b"":
            peer.route = msg[:2]
            return peer, msg[2:]
        peer.route = msg[:1]
        return peer, msg[1:]

    def _handle(self, peer: Peer, frames: list[bytes]) -> Any:
        raise NotImplementedError

    def _handle_safely(self, peer: Peer, frames: list[bytes]) -> Any:
        """`_handle`, except that nothing a client sends can take the learner down: an unexpected exception is a bug,
        logged with its traceback, counted in `internal_errors` and answered with `error`."""
        try:
            return self._handle(peer, frames)
        except Exception as exc:
            self.stats.internal_errors += 1
            log.exception("internal error while handling a message")
            self._error(peer.route, None, f"learner failed to handle the message: {type(exc).__name__}: {exc}"[:500])
            return None

    def _key_problem(self, peer: Peer, robot_id: str) -> str | None:
        """With CURVE, why this peer's key may not speak for `robot_id` (None when it may, or without CURVE)."""
        if self.curve is None:
            return None
        names = self.curve.robots.get(peer.key or "", frozenset())
        if robot_id in names:
            return None
        held = ", ".join(sorted(names)) or "no robot id"
        return (f"robot_id {robot_id!r} is not admitted for this connection's CURVE key (it is admitted as {held}): "
                f"a key speaks for the robot its file names, {self.curve.authorized_dir}/<robot_id>.key — set the robot's "
                f"learner.robot_id to match, or add its public key as {robot_id}.key and restart the learner")


def _frame_property(frame: zmq.Frame, name: str) -> str | None:
    """A ZeroMQ message property (zmq_msg_gets: User-Id from ZAP, Peer-Address), None where the transport has none."""
    try:
        return frame.get(name)
    except zmq.ZMQError:
        return None


#: Connections one dataset server greets (one upload at a time; a bound, so hellos cannot grow its memory).
MAX_UPLOADERS = 64


class ExperienceServer(RouterEndpoint):
    """Binds a ROUTER socket and collects one dataset. Use as a context manager; `collect()` returns after `end`."""

    def __init__(self, bind: str, timeout_s: float = 300.0, max_episodes: int = 100_000, max_steps: int = 20_000_000,
                 max_image_gb: float = 16.0, **door: Any):
        """`door`: RouterEndpoint's curve / insecure_public_bind / max_message_bytes (DoorConfig.door())."""
        super().__init__(bind, **door)
        self.bind = bind
        self.timeout_s = timeout_s
        self.max_episodes = max_episodes  # bounded: a runaway client cannot exhaust memory
        self.max_steps = max_steps
        self._hello: dict[bytes, dict[str, Any]] = {}
        self._episodes: list[Episode] = []
        self._steps = 0
        # Camera frames are the bulk of a pixel dataset (100 demos x 150 steps x two 84x84 cameras = 635 MB); bounded too.
        self.max_image_bytes = int(max_image_gb * 2**30)
        self._image_bytes = 0

    def _image_problem(self, images: dict[str, np.ndarray]) -> str | None:
        """Why an episode's camera frames cannot join the dataset (other cameras or sizes than the first episode's,
        or the frame budget spent), or None."""
        shapes = {cam: tuple(v.shape[1:]) for cam, v in images.items()}
        if self._episodes:
            first = {cam: tuple(v.shape[1:]) for cam, v in self._episodes[0].images.items()}
            if shapes != first:
                def names(d: dict) -> str:
                    return ", ".join(f"{c} {s[1]}x{s[0]}" for c, s in sorted(d.items())) or "none"
                return f"episode cameras [{names(shapes)}] differ from the first episode's [{names(first)}]; record every episode with the same cameras"
        if self._image_bytes + sum(v.nbytes for v in images.values()) > self.max_image_bytes:
            return (f"dataset limit reached: camera frames would exceed {self.max_image_bytes / 2**30:.1f} GiB; "
                    f"send fewer episodes or raise max_image_gb")
        return None

    def _handle(self, peer: Peer, frames: list[bytes]) -> Dataset | None:
        """Handle one message; returns the dataset when the client sent `end`."""
        route, identity = peer.route, peer.connection
        try:
            header, tensors = decode(frames)
        except ProtocolError as exc:
            self._refuse(route, exc)
            return None
        seq, msg_type = header["seq"], header["type"]
        hello = self._hello.get(identity)
        if msg_type == "hello":
            problem = self._key_problem(peer, header["robot_id"])
            if problem is None and identity not in self._hello and len(self._hello) >= MAX_UPLOADERS:
                problem = f"this learner already greeted {MAX_UPLOADERS} connections; one dataset upload at a time"
            if problem is not None:
                self._error(route, seq, "hello rejected: " + problem, malformed=False)
                return None
            self._hello[identity] = header
            log.info("hello from robot %r (task %r, %d obs, %d actions)", header["robot_id"], header["task"],
                     len(header["obs_names"]), len(header["action_names"]))
            self._reply(route, {"type": "welcome", "seq": seq, "learner": LEARNER})
            return None
        if msg_type not in ("episode", "end"):
            self._error(route, seq, f"a client may send hello, episode or end; found {msg_type!r}")
            return None
        if hello is None:
            self._error(route, seq, f"{msg_type} before hello; send hello first")
            return None
        if msg_type == "episode":
            obs_dim, act_dim = len(hello["obs_names"]), len(hello["action_names"])
            if tensors["obs"].shape[1] != obs_dim or tensors["action"].shape[1] != act_dim:
                self._error(route, seq, f"episode obs/action widths {tensors['obs'].shape[1]}/{tensors['action'].shape[1]} "
                                        f"do not match hello's {obs_dim} obs_names / {act_dim} action_names")
                return None
            if len(self._episodes) >= self.max_episodes or self._steps + header["length"] > self.max_steps:
                self._error(route, seq, f"dataset limit reached ({self.max_episodes} episodes / {self.max_steps} steps)")
                return None
            images = {k[len("image."):]: v for k, v in tensors.items() if k.startswith("image.")}
            problem = self._image_problem(images)
            if problem is not None:
                self._error(route, seq, problem)
                return None
            self._episodes.append(Episode(obs=tensors["obs"], action=tensors["action"], reward=tensors["reward"],
                                          success=header["success"], episode_id=str(header["episode_id"]),
                                          seed=header["seed"], task=header["task"], intervention=tensors.get("intervention"),
                                          source=str(header.get("source", "")), images=images))
            self._steps += header["length"]
            self._image_bytes += sum(v.nbytes for v in images.values())
            self._reply(route, {"type": "ack", "seq": seq})
            return None
        # end
        if header["episodes"] != len(self._episodes):
            log.warning("client says it sent %d episodes; %d arrived", header["episodes"], len(self._episodes))
        self._reply(route, {"type": "ack", "seq": seq})
        return Dataset(episodes=list(self._episodes), obs_names=list(hello["obs_names"]),
                       action_names=list(hello["action_names"]), task=hello["task"],
                       robot_id=hello["robot_id"], config_hash=hello["config_hash"])

    def collect(self) -> Dataset:
        """Serve until a client sends `end`; raises TimeoutError when nothing arrives for `timeout_s` seconds."""
        log.info("learner listening on %s (protocol %s)", self.endpoint, PROTOCOL)
        deadline = time.monotonic() + self.timeout_s
        while True:
            left_ms = int(max(0.0, deadline - time.monotonic()) * 1000)
            got = self._recv(left_ms)
            if got is None:
                if not self._hello:
                    raise TimeoutError(f"no client connected to {self.endpoint} within {self.timeout_s:g} s — start the "
                                       f"robot side's dataset upload to this address, or raise --timeout")
                raise TimeoutError(f"client went quiet: no message for {self.timeout_s:g} s after "
                                   f"{len(self._episodes)} episodes and no `end` — raise --timeout or resend")
            peer, frames = got
            deadline = time.monotonic() + self.timeout_s
            dataset = self._handle_safely(peer, frames)
            if dataset is not None:
                return dataset
