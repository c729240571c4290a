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

from . import __version__
from .protocol import PROTOCOL, ProtocolError, decode, encode
from .security import CurveServer, make_curve_server

log = logging.getLogger("rlft_learner.server")
LEARNER = f"rlft_learner {__version__}"


@dataclass
class Episode:
    """One episode as received: obs (T, obs_dim), action (T, action_dim), reward (T,); `intervention` (T,) 0/1 when the
    client sent who acted (1 = operator), `source` where it came from (e.g. scripted_expert, recap_collect)."""

    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    success: bool = False
    episode_id: str = ""
    seed: int = 0
    task: str = ""
    intervention: np.ndarray | None = None
    source: str = ""
    # camera name -> (T, H, W, 3) uint8 frames, frame t the latest at or before tick t (docs/data.md); empty for
    # state-only data. Kept as uint8 and indexed per batch, never copied per epoch.
    images: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass
class Dataset:
    """What a client sent: its hello and the episodes, in arrival order."""

    episodes: list[Episode]
    obs_names: list[str]
    action_names: list[str]
    task: str
    robot_id: str = ""
    config_hash: str = ""

    @property
    def cameras(self) -> list[str]:
        """Camera names every episode has frames for (sorted), [] for state-only data."""
        if not self.episodes:
            return []
        names = set(self.episodes[0].images)
        for ep in self.episodes[1:]:
            if set(ep.images) != names:
                raise ValueError(f"episode {ep.episode_id} has cameras {sorted(ep.images)}, the first episode {sorted(names)}; "
                                 f"record every episode with the same cameras")
        return sorted(names)


@dataclass
class ServerStats:
    messages: int = 0
    malformed: int = 0
    errors: list[str] = field(default_factory=list)


class RouterEndpoint:
    """A bound ROUTER socket with rlft-exp/1 replies and error accounting; shared by the dataset and online servers."""

    def __init__(self, bind: str, flag: str = "--bind", curve: CurveServer | None = None):
        self.stats = ServerStats()
        self._ctx = zmq.Context.instance()
        self._sock = self._ctx.socket(zmq.ROUTER)
        self._sock.setsockopt(zmq.LINGER, 1000)
        self._sock.setsockopt(zmq.MAXMSGSIZE, 1 << 31)
        if curve is not None:
            make_curve_server(self._sock, curve)
        try:
            self._sock.bind(bind)
        except zmq.ZMQError as exc:
            self._sock.close(0)
            raise RuntimeError(f"Cannot bind the learner's ROUTER socket to {bind}: {exc} — pick a free port with {flag}") from None
        self.endpoint = self._sock.getsockopt_string(zmq.LAST_ENDPOINT)

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._sock.close()

    def _reply(self, route: list[bytes], header: dict[str, Any], tensors: dict[str, np.ndarray] | None = None,
               extra: list[bytes] | None = None) -> None:
        self._sock.send_multipart(route + encode(header, tensors) + (extra or []))

    def _error(self, route: list[bytes], seq: int | None, reason: str, malformed: bool = True) -> None:
        """Answer `error {seq, reason}`; `malformed=False` for well-formed requests that cannot be served."""
        self.stats.malformed += int(malformed)
        self.stats.errors.append(reason)
        del self.stats.errors[:-100]  # keep the last 100 only
        log.warning("rejected message (seq %s): %s", seq, reason)
        self._reply(route, {"type": "error", "seq": -1 if seq is None else seq, "reason": reason})

    def _recv(self, timeout_ms: int) -> tuple[list[bytes], list[bytes]] | None:
        """Next message as (route, frames), or None after `timeout_ms` without one."""
        if not self._sock.poll(timeout_ms, zmq.POLLIN):
            return None
        msg = self._sock.recv_multipart()
        self.stats.messages += 1
        # ROUTER prepends the identity; a REQ-style client also adds an empty delimiter, which we echo back.
        if len(msg) > 2 and msg[1] == b"":
            return msg[:2], msg[2:]
        return msg[:1], msg[1:]


class ExperienceServer(RouterEndpoint):
    """Binds a ROUTER socket and collects one dataset. Use as a context manager; `collect()` returns after `end`."""

    def __init__(self, bind: str, timeout_s: float = 300.0, max_episodes: int = 100_000, max_steps: int = 20_000_000):
        super().__init__(bind)
        self.bind = bind
        self.timeout_s = timeout_s
        self.max_episodes = max_episodes  # bounded: a runaway client cannot exhaust memory
        self.max_steps = max_steps
        self._hello: dict[bytes, dict[str, Any]] = {}
        self._episodes: list[Episode] = []
        self._steps = 0

    def _handle(self, route: list[bytes], frames: list[bytes]) -> Dataset | None:
        """Handle one message; returns the dataset when the client sent `end`."""
        identity = route[0]
        try:
            header, tensors = decode(frames)
        except ProtocolError as exc:
            self._error(route, exc.seq, str(exc))
            return None
        seq, msg_type = header["seq"], header["type"]
        hello = self._hello.get(identity)
        if msg_type == "hello":
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
            self._episodes.append(Episode(obs=tensors["obs"], action=tensors["action"], reward=tensors["reward"],
                                          success=header["success"], episode_id=str(header["episode_id"]),
                                          seed=header["seed"], task=header["task"], intervention=tensors.get("intervention"),
                                          source=str(header.get("source", ""))))
            self._steps += header["length"]
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
            route, frames = got
            deadline = time.monotonic() + self.timeout_s
            try:
                dataset = self._handle(route, frames)
            except Exception as exc:  # never let one message take the learner down
                log.exception("internal error while handling a message")
                self._error(route, None, f"learner failed to handle the message: {exc}")
                continue
            if dataset is not None:
                return dataset
