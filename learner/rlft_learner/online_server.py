"""The learner's side of online RL over `rlft-exp/1` (docs/protocol.md): many robots on one ROUTER, a PUB for packages.

Per robot it keeps `acked_seq` (highest transition seq stored); a resend below it is deduplicated, a batch that starts
after `acked_seq + 1` (a gap) stores nothing and is answered with `acked_seq` so the robot resends from there.
`durable_seq` (highest seq in the last completed checkpoint) is reported with it: the robot deletes only what is durable,
so a learner killed hard and resumed from its checkpoint gets everything after its restored `acked_seq` again.
Malformed messages are counted and answered with `error`; nothing a client sends can stop the server.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import zmq

from .protocol import ProtocolError, decode, encode
from .security import Authenticator, CurveServer, make_curve_server
from .server import LEARNER, RouterEndpoint

log = logging.getLogger("rlft_learner.online")


@dataclass
class RobotState:
    """What the learner remembers about one robot; `acked_seq` and `index` are checkpointed. `durable_seq` is the
    `acked_seq` saved in the last completed checkpoint (what survives a SIGKILL); it only moves in `mark_durable`."""

    acked_seq: int = -1
    durable_seq: int = -1
    index: int = 0  # small int stored in replay rows (links n-step chains per robot)
    config_hash: str = ""
    hello: bool = False  # saw a hello since this learner process started


@dataclass
class Package:
    """A published package held in memory for get_policy and PUB."""

    version: str
    kind: str
    base_version: str
    files: dict[str, bytes]

    @staticmethod
    def read(path: str, policy: dict) -> "Package":
        names = ["policy.json"] + sorted(n for n in os.listdir(path) if n != "policy.json")
        files = {n: open(os.path.join(path, n), "rb").read() for n in names}
        return Package(policy["version"], policy["kind"], policy["base"]["version"], files)

    def message(self, seq: int) -> list[bytes]:
        specs = [{"name": n, "sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)} for n, b in self.files.items()]
        header = {"type": "policy", "seq": seq, "version": self.version, "kind": self.kind, "base_version": self.base_version,
                  "files": specs}
        return encode(header) + list(self.files.values())


class OnlineServer(RouterEndpoint):
    """Serves hello / transitions / heartbeat / get_policy. `on_rows(rows)` receives each batch of new transitions as
    replay rows (normalised obs, see replay.FIELDS); `status()` gives the counters a heartbeat reports."""

    def __init__(self, bind: str, pub_bind: str, base, on_rows: Callable[[dict[str, np.ndarray]], None],
                 status: Callable[[], dict[str, Any]], config_hash: str = "", heartbeat_sec: float = 2.0,
                 curve: CurveServer | None = None):
        # ZAP must run before the first CURVE handshake; it admits only robots in curve.authorized_dir.
        self._auth = Authenticator(zmq.Context.instance(), curve.authorized_dir) if curve is not None else None
        try:
            super().__init__(bind, flag="experience_bind", curve=curve)
        except Exception:
            self._stop_auth()
            raise
        self.base = base  # residual_td3.BasePackage
        self.on_rows, self.status = on_rows, status
        self.config_hash, self.heartbeat_sec = config_hash, heartbeat_sec
        self.robots: dict[str, RobotState] = {}
        self.latest: Package | None = None
        self.packages: dict[str, Package] = {}
        self.keep_packages = 5
        self._pub_seq = 0
        self._pub = self._ctx.socket(zmq.PUB)
        self._pub.setsockopt(zmq.LINGER, 1000)
        if curve is not None:
            make_curve_server(self._pub, curve)  # robots pin the learner's key: nobody else can publish to them
        try:
            self._pub.bind(pub_bind)
        except zmq.ZMQError as exc:
            self._pub.close(0)
            self.close()
            raise RuntimeError(f"Cannot bind the learner's PUB socket to {pub_bind}: {exc} — pick a free port with policy_bind") from None
        self.pub_endpoint = self._pub.getsockopt_string(zmq.LAST_ENDPOINT)

    def close(self) -> None:
        super().close()
        if hasattr(self, "_pub"):
            self._pub.close()
        self._stop_auth()

    def _stop_auth(self) -> None:
        if self._auth is not None:
            self._auth.stop()
            self._auth = None

    # -- state for checkpoints --
    def robot_state(self) -> dict[str, dict]:
        return {rid: {"acked_seq": r.acked_seq, "index": r.index, "config_hash": r.config_hash} for rid, r in self.robots.items()}

    def restore(self, robots: dict[str, dict]) -> None:
        """State from a checkpoint: everything in it is durable."""
        self.robots = {rid: RobotState(acked_seq=int(r["acked_seq"]), durable_seq=int(r["acked_seq"]), index=int(r["index"]),
                                       config_hash=str(r["config_hash"]))
                       for rid, r in robots.items()}

    def mark_durable(self, robots: dict[str, dict]) -> None:
        """A checkpoint holding `robots` (a `robot_state()` snapshot) completed: their acked_seqs are now durable."""
        for rid, r in robots.items():
            robot = self.robots.get(rid)
            if robot is not None:
                robot.durable_seq = max(robot.durable_seq, int(r["acked_seq"]))

    # -- packages --
    def publish(self, path: str, policy: dict) -> None:
        """Make the package at `path` the latest, answer get_policy with it and send it on the PUB socket."""
        pkg = Package.read(path, policy)
        self.latest = self.packages[pkg.version] = pkg
        while len(self.packages) > self.keep_packages:
            self.packages.pop(next(iter(self.packages)))
        self._pub.send_multipart([b"policy"] + pkg.message(self._pub_seq))
        self._pub_seq += 1

    def set_latest(self, path: str, policy: dict) -> None:
        """Serve an existing package (after a resume) without publishing it again."""
        pkg = Package.read(path, policy)
        self.latest = self.packages[pkg.version] = pkg

    # -- serving --
    def serve(self, timeout_ms: int = 0, max_messages: int = 64) -> int:
        """Handle waiting messages (waiting up to `timeout_ms` for the first); returns how many were handled."""
        handled = 0
        while handled < max_messages:
            got = self._recv(timeout_ms if handled == 0 else 0)
            if got is None:
                break
            route, frames = got
            handled += 1
            try:
                self._handle(route, frames)
            except Exception as exc:  # never let one message take the learner down
                log.exception("internal error while handling a message")
                self._error(route, None, f"learner failed to handle the message: {exc}")
        return handled

    def _handle(self, route: list[bytes], frames: list[bytes]) -> None:
        try:
            header, tensors = decode(frames)
        except ProtocolError as exc:
            self._error(route, exc.seq, str(exc))
            return
        seq, msg_type = header["seq"], header["type"]
        handler = {"hello": self._hello, "transitions": self._transitions, "heartbeat": self._heartbeat,
                   "get_policy": self._get_policy}.get(msg_type)
        if handler is None:
            self._error(route, seq, f"an online robot may send hello, transitions, heartbeat or get_policy; found {msg_type!r}"
                                    + (" (episode/end belong to `train-bc`)" if msg_type in ("episode", "end") else ""))
            return
        handler(route, seq, header, tensors)

    def _hello(self, route: list[bytes], seq: int, h: dict, _: dict) -> None:
        base = self.base
        problems = []
        if h.get("mode") != "online":
            problems.append(f"mode must be 'online' for this learner; found {h.get('mode')!r}")
        if h.get("base_policy_version") != base.version:
            problems.append(f"base_policy_version {h.get('base_policy_version')!r} differs from the learner's base package "
                            f"{base.version!r}")
        if self.config_hash and h["config_hash"] != self.config_hash:
            problems.append(f"config_hash {h['config_hash']!r} differs from the learner's {self.config_hash!r}")
        if h["obs_names"] != base.obs_names or h["action_names"] != base.action_names:
            problems.append(f"obs_names/action_names {h['obs_names']}/{h['action_names']} differ from the base package's "
                            f"{base.obs_names}/{base.action_names}")
        if problems:
            self._error(route, seq, "hello rejected: " + "; ".join(problems), malformed=False)
            return
        rid = h["robot_id"]
        robot = self.robots.get(rid)
        if robot is None:
            robot = self.robots[rid] = RobotState(index=len(self.robots))
        if robot.config_hash and robot.config_hash != h["config_hash"]:
            log.warning("robot %r changed config_hash %s -> %s", rid, robot.config_hash, h["config_hash"])
        robot.config_hash, robot.hello = h["config_hash"], True
        log.info("hello from robot %r (task %r), acked_seq %d", rid, h["task"], robot.acked_seq)
        latest = {"version": self.latest.version, "kind": self.latest.kind} if self.latest else None
        self._reply(route, {"type": "welcome", "seq": seq, "learner": LEARNER, "acked_seq": robot.acked_seq,
                            "durable_seq": robot.durable_seq, "latest_policy": latest, "heartbeat_sec": self.heartbeat_sec})

    def _transitions(self, route: list[bytes], seq: int, h: dict, t: dict) -> None:
        rid = h["robot_id"]
        robot = self.robots.get(rid)
        if robot is None or not robot.hello:
            self._error(route, seq, f"transitions from robot {rid!r} before its hello; send hello first")
            return
        obs_dim, act_dim = len(self.base.obs_names), len(self.base.action_names)
        if t["obs"].shape[1] != obs_dim or t["action"].shape[1] != act_dim:
            self._error(route, seq, f"transitions obs/action widths {t['obs'].shape[1]}/{t['action'].shape[1]}; the base "
                                    f"package has {obs_dim} observations and {act_dim} actions")
            return
        first, n = h["first_seq"], h["count"]
        if first > robot.acked_seq + 1:  # a gap: store nothing, tell the robot where to resend from
            log.info("robot %r sent seq %d.. but acked_seq is %d: asking for a resend", rid, first, robot.acked_seq)
        elif first + n - 1 > robot.acked_seq:
            keep = slice(robot.acked_seq + 1 - first, n)  # drop what is already stored (a resend)
            seqs = np.arange(first, first + n, dtype=np.int64)[keep]
            rows = {"obs": self.base.norm_obs(t["obs"][keep]), "next_obs": self.base.norm_obs(t["next_obs"][keep]),
                    **{k: np.clip(t[k][keep], -1, 1) for k in ("base_action", "action", "next_base_action")},
                    **{k: t[k][keep] for k in ("reward", "terminated", "truncated", "intervention")},
                    "robot": np.full(len(seqs), robot.index, np.int64), "seq": seqs,
                    "step": np.asarray(h["step"], np.int64)[keep]}
            self.on_rows(rows)
            robot.acked_seq = int(seqs[-1])  # only after the rows are stored
        self._reply(route, {"type": "ack", "seq": seq, "acked_seq": robot.acked_seq, "durable_seq": robot.durable_seq})

    def _heartbeat(self, route: list[bytes], seq: int, h: dict, _: dict) -> None:
        rid = h.get("robot_id")
        if not isinstance(rid, str):
            self._error(route, seq, "heartbeat lacks robot_id (string)")
            return
        robot = self.robots.get(rid)
        s = self.status()
        self._reply(route, {"type": "heartbeat", "seq": seq, "acked_seq": robot.acked_seq if robot else -1,
                            "durable_seq": robot.durable_seq if robot else -1,
                            "policy_version": self.latest.version if self.latest else None, "updates": s["updates"],
                            "online_transitions": s["online"], "offline_transitions": s["offline"]})

    def _get_policy(self, route: list[bytes], seq: int, h: dict, _: dict) -> None:
        version = h.get("version")
        pkg = self.packages.get(version) if version else self.latest
        if pkg is None:
            why = f"package {version!r} is not kept (latest is {self.latest.version if self.latest else None!r})" if version \
                else "no residual package yet; the learner publishes one once the actor has trained"
            self._error(route, seq, f"get_policy: {why}", malformed=False)
            return
        msg = pkg.message(seq)
        self._sock.send_multipart(route + msg)

