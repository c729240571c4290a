"""The learner's side of online RL over `rlft-exp/1` (docs/protocol.md): many robots on one ROUTER, a PUB for packages.

Per robot it keeps `acked_seq` (highest transition seq stored); a resend below it is deduplicated, a batch that starts
after `acked_seq + 1` (a gap) stores nothing and is answered with `acked_seq` so the robot resends from there.
`durable_seq` (highest seq in the last completed checkpoint) is reported with it: the robot deletes only what is durable,
so a learner killed hard and resumed from its checkpoint gets everything after its restored `acked_seq` again.
Malformed messages are counted and answered with `error`; nothing a client sends can stop the server.

Who speaks for a robot (issue 24): a robot id belongs to the connection that said `hello` as it, for as long as that
connection is open and talks (robots heartbeat every `heartbeat_sec`); a second connection claiming it meanwhile is
refused, and transitions for a robot id come only from its connection. With CURVE the id must also be one the
connection's key is admitted for (authorized/<robot_id>.key). Without CURVE this is first come, first served on a
loopback or trusted network; CURVE makes it an identity.

Camera frames (issue 27): a batch may carry `image.<cam>` / `next_image.<cam>` uint8 [N, H, W, 3] per camera. The
cameras and their sizes are the base package's `observation.images` when it has them, else those of the first batch
stored; a batch with other cameras or sizes is refused (counted in `rejected_frames`) with the camera and the fix.
Frames may come zlib-compressed per frame (`encoding: "zlib"`; `welcome.frame_encodings` says this learner takes it):
protocol.decode inflates each within its declared size, and their streams go to replay with the rows (`zlib.<name>`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import zmq

from ..buffers.frames import camera_of
from .protocol import FRAME_ENCODINGS, MAX_ABS_VALUE, ProtocolError, decode, encode, value_problem
from .security import bind_checked
from .server import LEARNER, Peer, RouterEndpoint

#: Largest normalised observation stored: the wire caps raw values at MAX_ABS_VALUE (1e6) and train-bc floors every
#: observation std at 1e-2, so a base package's normalisation gives at most 1e8; squares (1e16) stay finite in float32.
#: A base package with a smaller std, or a reading 1e8 stds from the demos, is refused here rather than stored.
MAX_NORMALISED = 1e8

log = logging.getLogger("rlft_learner.online")


@dataclass
class RobotState:
    """What the learner remembers about one robot; `acked_seq` and `index` are checkpointed. `durable_seq` is the
    `acked_seq` saved in the last completed checkpoint (what survives a SIGKILL); it only moves in `mark_durable`."""

    acked_seq: int = -1
    durable_seq: int = -1
    index: int = 0  # small int stored in replay rows (links n-step chains per robot)
    config_hash: str = ""
    owner: list[bytes] | None = None  # route of the connection that said hello as this robot (None: none since start)
    address: str = "?"  # the owner's IP, for errors
    heard: float = 0.0  # time.monotonic() of the owner's last message


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
                 max_robots: int = 64, **door: Any):
        """`door`: RouterEndpoint's curve / insecure_public_bind / max_message_bytes (server.DoorConfig.door())."""
        super().__init__(bind, flag="experience_bind", **door)
        self.base = base  # residual_td3.BasePackage
        self.on_rows, self.status = on_rows, status
        self.config_hash, self.heartbeat_sec, self.max_robots = config_hash, heartbeat_sec, max_robots
        self.robots: dict[str, RobotState] = {}
        #: Camera -> (H, W) of the frames stored (see the module doc); None until known.
        self.cameras: dict[str, tuple[int, int]] | None = package_cameras(base)
        self.cameras_from = "the base package's observation.images" if self.cameras else ""
        self._owned: dict[bytes, str] = {}  # connection -> the robot id it said hello as
        self.latest: Package | None = None
        self.packages: dict[str, Package] = {}
        self.keep_packages = 5
        self._pub_seq = 0
        self._pub = self._ctx.socket(zmq.PUB)
        self._pub.setsockopt(zmq.LINGER, 1000)
        self._pub.setsockopt(zmq.MAXMSGSIZE, 1 << 16)  # subscribers only send subscriptions upstream
        try:
            # Robots pin the learner's key, so with CURVE nobody else can publish to them.
            self.pub_endpoint = bind_checked(self._pub, pub_bind, "policy_bind", self.curve, door.get("insecure_public_bind", False))
        except Exception:
            self._pub.close(0)
            self.close()
            raise

    @property
    def stale_after_s(self) -> float:
        """A robot's connection that sent nothing for this long has lost its claim: robots heartbeat every heartbeat_sec
        when idle and declare the link down after 3 unanswered ones (bridge/ExperienceBridge.ts)."""
        return 3 * self.heartbeat_sec + 1.0

    def close(self) -> None:
        super().close()
        if hasattr(self, "_pub"):
            self._pub.close()

    # -- state for checkpoints --
    def robot_state(self) -> dict[str, dict]:
        """What a checkpoint keeps per robot: only robots whose transitions it holds (acked_seq >= 0). An id that said
        hello and sent nothing has no state to keep, so ids invented by a peer never reach a checkpoint."""
        return {rid: {"acked_seq": r.acked_seq, "index": r.index, "config_hash": r.config_hash}
                for rid, r in self.robots.items() if r.acked_seq >= 0}

    def restore(self, robots: dict[str, dict]) -> None:
        """State from a checkpoint: everything in it is durable. Entries without transitions (written by learners before
        issue 24) are dropped."""
        self.robots = {rid: RobotState(acked_seq=int(r["acked_seq"]), durable_seq=int(r["acked_seq"]), index=int(r["index"]),
                                       config_hash=str(r["config_hash"]))
                       for rid, r in robots.items() if int(r["acked_seq"]) >= 0}

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
            peer, frames = got
            handled += 1
            self._handle_safely(peer, frames)
        return handled

    def _handle(self, peer: Peer, frames: list[bytes]) -> None:
        owned = self._owned.get(peer.connection)
        if owned is not None and owned in self.robots:
            self.robots[owned].heard = time.monotonic()
        blobs: dict[str, list[bytes]] = {}  # zlib streams of camera frames that came compressed, by tensor name
        try:
            header, tensors = decode(frames, blobs)
        except ProtocolError as exc:
            self._refuse(peer.route, exc)
            return
        seq, msg_type = header["seq"], header["type"]
        if msg_type == "transitions":
            self._transitions(peer, seq, header, tensors, blobs)
            return
        handler = {"hello": self._hello, "transitions": self._transitions, "heartbeat": self._heartbeat,
                   "get_policy": self._get_policy}.get(msg_type)
        if handler is None:
            self._error(peer.route, seq, f"an online robot may send hello, transitions, heartbeat or get_policy; found {msg_type!r}"
                                         + (" (episode/end belong to `train-bc`)" if msg_type in ("episode", "end") else ""))
            return
        handler(peer, seq, header, tensors)

    # -- who speaks for a robot --
    def _owner_problem(self, peer: Peer, rid: str, what: str) -> str | None:
        """Why this connection may not send `what` for robot `rid` (None when it said hello as it)."""
        robot = self.robots.get(rid)
        if robot is not None and robot.owner is not None and robot.owner[0] == peer.connection:
            return None
        if robot is None or robot.owner is None:
            return f"{what} from robot {rid!r} before its hello; send hello first"
        return (f"{what} for robot {rid!r} from a connection that did not say hello as it: robot_id {rid!r} belongs to the "
                f"connection from {robot.address} that said hello first; send hello (robot ids are one per robot)")

    def _claim_problem(self, peer: Peer, rid: str) -> str | None:
        """Why this connection may not take robot id `rid` now: another connection holds it and is still open and talking."""
        robot = self.robots.get(rid)
        if robot is None or robot.owner is None or robot.owner[0] == peer.connection:
            return None
        silent = time.monotonic() - robot.heard
        notice = f"another connection (from {peer.address}) said hello as robot_id {rid!r} and was refused; this connection keeps it"
        if silent <= self.stale_after_s and self._still_connected(robot.owner, notice):
            return (f"robot_id {rid!r} is in use by another connection (from {robot.address}, last message {silent:.1f} s "
                    f"ago): each robot needs its own learner.robot_id. A robot that reconnects is let in once its old "
                    f"connection is closed or has been silent for {self.stale_after_s:g} s")
        log.warning("robot %r: its connection from %s is %s; the connection from %s takes it over", rid, robot.address,
                    f"silent for {silent:.1f} s" if silent > self.stale_after_s else "closed", peer.address)
        return None

    def _still_connected(self, route: list[bytes], notice: str) -> bool:
        """Whether ZeroMQ still has a connection for `route`: with ZMQ_ROUTER_MANDATORY a send to a closed connection
        fails with EHOSTUNREACH instead of being dropped. What is sent is `notice` as an `error` with seq -1, which
        matches none of the robot's requests: it logs it (someone else said hello as it and was refused)."""
        self._sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
        try:
            self._sock.send_multipart(route + encode({"type": "error", "seq": -1, "reason": notice}), flags=zmq.DONTWAIT)
            return True
        except zmq.Again:
            return True  # connected; its queue is full
        except zmq.ZMQError as exc:
            if exc.errno == zmq.EHOSTUNREACH:
                return False
            raise
        finally:
            self._sock.setsockopt(zmq.ROUTER_MANDATORY, 0)

    def _room_for(self, rid: str) -> bool:
        """Whether robot id `rid` fits under max_robots, after forgetting ids that never sent a transition and whose
        connection is silent (they have nothing to keep)."""
        if rid in self.robots or len(self.robots) < self.max_robots:
            return True
        now = time.monotonic()
        for other, r in list(self.robots.items()):
            if r.acked_seq < 0 and (r.owner is None or now - r.heard > self.stale_after_s):
                self._release(other)
        return len(self.robots) < self.max_robots

    def _release(self, rid: str) -> None:
        r = self.robots.pop(rid)
        if r.owner is not None and self._owned.get(r.owner[0]) == rid:
            del self._owned[r.owner[0]]

    def _hello(self, peer: Peer, seq: int, h: dict, _: dict) -> None:
        route = peer.route
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
        rid = h["robot_id"]
        if not problems:
            problem = self._key_problem(peer, rid) or self._claim_problem(peer, rid)
            if problem is None and not self._room_for(rid):
                problem = (f"this learner already serves max_robots = {self.max_robots} robot ids (ids holding transitions, "
                           f"and ids whose connection still talks); raise max_robots, or reuse a robot id")
            problems += [problem] if problem else []
        if problems:
            self._error(route, seq, "hello rejected: " + "; ".join(problems), malformed=False)
            return
        previous = self._owned.get(peer.connection)
        if previous is not None and previous != rid and previous in self.robots:
            self.robots[previous].owner = None  # a connection speaks for one robot: its last hello
        robot = self.robots.get(rid)
        if robot is None:
            robot = self.robots[rid] = RobotState(index=max((r.index for r in self.robots.values()), default=-1) + 1)
        if robot.config_hash and robot.config_hash != h["config_hash"]:
            log.warning("robot %r changed config_hash %s -> %s", rid, robot.config_hash, h["config_hash"])
        if robot.owner is not None and self._owned.get(robot.owner[0]) == rid:
            del self._owned[robot.owner[0]]
        robot.config_hash = h["config_hash"]
        robot.owner, robot.address, robot.heard = list(peer.route), peer.address, time.monotonic()
        self._owned[peer.connection] = rid
        log.info("hello from robot %r (task %r), acked_seq %d", rid, h["task"], robot.acked_seq)
        latest = {"version": self.latest.version, "kind": self.latest.kind} if self.latest else None
        self._reply(route, {"type": "welcome", "seq": seq, "learner": LEARNER, "acked_seq": robot.acked_seq,
                            "durable_seq": robot.durable_seq, "latest_policy": latest, "heartbeat_sec": self.heartbeat_sec,
                            "frame_encodings": list(FRAME_ENCODINGS)})

    def _transitions(self, peer: Peer, seq: int, h: dict, t: dict, blobs: dict[str, list[bytes]] | None = None) -> None:
        route, rid = peer.route, h["robot_id"]
        problem = self._owner_problem(peer, rid, "transitions")
        if problem is not None:
            self._error(route, seq, problem)
            return
        robot = self.robots[rid]
        obs_dim, act_dim = len(self.base.obs_names), len(self.base.action_names)
        if any(t[k].shape[1] != obs_dim for k in ("obs", "next_obs")) or t["action"].shape[1] != act_dim:
            self._error(route, seq, f"transitions obs/action widths {t['obs'].shape[1]}/{t['action'].shape[1]}; the base "
                                    f"package has {obs_dim} observations and {act_dim} actions")
            return
        problem = self._frame_problem(t)
        if problem is not None:
            self._error(route, seq, problem, frames=True)
            return
        first, n = h["first_seq"], h["count"]
        if first > robot.acked_seq + 1:  # a gap: store nothing, tell the robot where to resend from
            log.info("robot %r sent seq %d.. but acked_seq is %d: asking for a resend", rid, first, robot.acked_seq)
        elif first + n - 1 > robot.acked_seq:
            keep = slice(robot.acked_seq + 1 - first, n)  # drop what is already stored (a resend)
            seqs = np.arange(first, first + n, dtype=np.int64)[keep]
            obs, next_obs = self.base.norm_obs(t["obs"][keep]), self.base.norm_obs(t["next_obs"][keep])
            problem = value_problem("normalised obs", obs, MAX_NORMALISED) or value_problem("normalised next_obs", next_obs, MAX_NORMALISED)
            if problem is not None:
                self._error(route, seq, f"{problem} (raw values are within ±{MAX_ABS_VALUE:g}, but the base package's "
                                        f"observation std is {float(self.base.obs_std.min()):.3g} at its smallest)", values=True)
                return
            rows = {"obs": obs, "next_obs": next_obs,
                    **{k: np.clip(t[k][keep], -1, 1) for k in ("base_action", "action", "next_base_action")},
                    **{k: t[k][keep] for k in ("reward", "terminated", "truncated", "intervention")},
                    "robot": np.full(len(seqs), robot.index, np.int64), "seq": seqs,
                    "step": np.asarray(h["step"], np.int64)[keep], "episode": np.asarray(h["episode"], np.int64)[keep],
                    **{k: v[keep] for k, v in t.items() if v.dtype == np.uint8},
                    **{f"zlib.{k}": _objects(v)[keep] for k, v in (blobs or {}).items()}}
            self.on_rows(rows)
            if self.cameras is None and any(camera_of(k) for k in t):
                self.cameras = {camera_of(k): v.shape[1:3] for k, v in t.items() if camera_of(k)}
                self.cameras_from = f"robot {rid!r}'s first frames"
            robot.acked_seq = int(seqs[-1])  # only after the rows are stored
        self._reply(route, {"type": "ack", "seq": seq, "acked_seq": robot.acked_seq, "durable_seq": robot.durable_seq})

    def _frame_problem(self, t: dict[str, np.ndarray]) -> str | None:
        """Why a batch's camera frames cannot be stored next to the frames this learner holds (one sentence), or None."""
        sent = {c: t[k].shape[1:3] for k in t if (c := camera_of(k)) is not None}
        want = self.cameras
        if want is None:
            return None
        lacking, extra = sorted(set(want) - set(sent)), sorted(set(sent) - set(want))
        names = ", ".join(sorted(want))
        if lacking:
            return (f"transitions carry no frames of camera(s) {', '.join(lacking)}; this learner stores cameras [{names}] "
                    f"({self.cameras_from}): set learner.cameras: [{names}] in the robot's launch file")
        if extra:
            return (f"transitions carry frames of camera(s) {', '.join(extra)} that this learner does not store (it stores "
                    f"[{names}], {self.cameras_from}): set learner.cameras: [{names}] in the robot's launch file")
        for cam, (h, w) in want.items():
            if tuple(sent[cam]) != (h, w):
                got = f"{sent[cam][0]}x{sent[cam][1]}"
                return (f"camera {cam!r} frames are {got}; this learner stores {cam} at {h}x{w} ({self.cameras_from}): "
                        f"render or capture {cam} at {w}x{h} (its intrinsics' width and height) so every robot sends one size")
        return None

    def _heartbeat(self, peer: Peer, seq: int, h: dict, _: dict) -> None:
        route, rid = peer.route, h.get("robot_id")
        if not isinstance(rid, str):
            self._error(route, seq, "heartbeat lacks robot_id (string)")
            return
        problem = self._owner_problem(peer, rid, "heartbeat")
        if problem is not None:
            self._error(route, seq, problem)
            return
        robot = self.robots[rid]
        s = self.status()
        self._reply(route, {"type": "heartbeat", "seq": seq, "acked_seq": robot.acked_seq,
                            "durable_seq": robot.durable_seq,
                            "policy_version": self.latest.version if self.latest else None, "updates": s["updates"],
                            "online_transitions": s["online"], "offline_transitions": s["offline"]})

    def _get_policy(self, peer: Peer, seq: int, h: dict, _: dict) -> None:
        route, version = peer.route, h.get("version")
        if version is not None and not isinstance(version, str):
            self._error(route, seq, f"get_policy.version must be a string (or absent for the latest); found {type(version).__name__}")
            return
        pkg = self.packages.get(version) if version else self.latest
        if pkg is None:
            why = f"package {version!r} is not kept (latest is {self.latest.version if self.latest else None!r})" if version \
                else "no residual package yet; the learner publishes one once the actor has trained"
            self._error(route, seq, f"get_policy: {why}", malformed=False)
            return
        msg = pkg.message(seq)
        self._sock.send_multipart(route + msg)


def _objects(items: list[bytes]) -> np.ndarray:
    """`items` as a 1-d object array (indexable like the row arrays beside it)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def package_cameras(base) -> dict[str, tuple[int, int]] | None:
    """Camera -> (H, W) of a pixel base package (policy.json observation.images, export/package.py); None for a state policy."""
    images = (getattr(base, "policy", None) or {}).get("observation", {}).get("images") or []
    return {str(e["camera"]): (int(e["height"]), int(e["width"])) for e in images} or None
