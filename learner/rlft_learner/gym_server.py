"""A Gymnasium environment served to the rlft stack as a robot (`driver.kind: gym`, hardware/gym/ in the stack).

The stack starts `python -m rlft_learner.gym_server`, writes one JSON line on its stdin (the pairing token and the
launch file's `driver:` block) and reads one JSON line from its stdout: `{"port": N}` once the environment is made and
a ZeroMQ REP socket is bound to 127.0.0.1 on a random port, or `{"error": "..."}` (one sentence naming the thing and
the fix) and a non-zero exit.

Each request is a multipart message: frame 0 a small JSON header `{"token": ..., "op": ...}`, then raw frames. Replies
are the same: a JSON header, then the observation's state vector (float64, little-endian) and one frame of raw uint8
bytes per mapped camera (height x width x 3, row-major). Images never travel as JSON or base64.

  op "spec":  the action space (shape, low, high), the observation space's keys and shapes, max_episode_steps.
  op "reset": {"seed": int} -> the first observation.
  op "step":  frame 1 = the action (float64 x action size) -> observation, reward, terminated, truncated, success.
  op "close": replies, then the process exits.

A request without the token, malformed, or with an action of the wrong length or with NaN/inf is answered
`{"ok": false, "error": ...}` and does nothing to the environment. Only the stack, which holds the token, can drive it.
"""

from __future__ import annotations

import hmac
import importlib
import json
import sys
from typing import Any

import numpy as np

# A request is a header and one action vector: nothing legitimate is larger.
MAX_REQUEST_BYTES = 1 << 20


class ConfigError(Exception):
    """The launch file's mapping does not fit the environment."""


def _fail(msg: str) -> None:
    print(json.dumps({"error": msg}), flush=True)
    sys.exit(2)


def _lookup(obs: Any, key: str) -> Any:
    """`key` of a (nested) dict observation, `a/b` for nested dicts; "" is the whole (Box) observation."""
    if key == "":
        return obs
    cur = obs
    for part in key.split("/"):
        if not isinstance(cur, dict) or part not in cur:
            have = ", ".join(sorted(cur.keys())) if isinstance(cur, dict) else 'no keys: it is one array, use key: ""'
            raise ConfigError(f"the observation has no key '{key}' (it has: {have}) — fix driver.observation / driver.cameras in the launch file")
        cur = cur[part]
    return cur


def _space_layout(space: Any, prefix: str = "") -> dict[str, dict[str, Any]]:
    """Keys and shapes of an observation space (nested Dicts flattened as `a/b`; a Box is the key "")."""
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        out: dict[str, dict[str, Any]] = {}
        for k, sub in space.spaces.items():
            out.update(_space_layout(sub, f"{prefix}/{k}" if prefix else k))
        return out
    return {prefix: {"shape": list(getattr(space, "shape", None) or []), "dtype": str(getattr(space, "dtype", ""))}}


def _load(spec: str, what: str) -> Any:
    """`module:attribute` -> the attribute."""
    mod, _, attr = spec.partition(":")
    try:
        return getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"{what} '{spec}' cannot be loaded ({e}) — give module:attribute of an importable module") from e


class GymServer:
    """One environment behind one REP socket."""

    def __init__(self, cfg: dict[str, Any]):
        self.token: str = cfg["token"]
        d = cfg["driver"]
        self.state_keys: list[tuple[str, int]] = [(o.get("key", ""), len(o["names"])) for o in d.get("observation", [])]
        self.cameras: list[tuple[str, str]] = list((d.get("cameras") or {}).items())
        self.success: dict[str, Any] = d.get("success") or {"terminated": True}
        self.action_size = len(d["action"]["names"])
        for m in d.get("modules") or []:
            try:
                importlib.import_module(m)
            except ImportError as e:
                raise ConfigError(f"driver.modules names '{m}', which does not import ({e}) — pip install the package that provides it into the Python the stack runs (RLFT_PYTHON)") from e
        import gymnasium

        env_id = d["env"]
        if env_id not in gymnasium.registry:
            mods = ", ".join(d.get("modules") or []) or "none"
            raise ConfigError(
                f"Gymnasium environment '{env_id}' is not registered (modules imported first: {mods}) — pip install the package"
                " that provides it and list its module under driver.modules so it registers (e.g. modules: [gym_hil]),"
                " or register your own with gymnasium.register"
            )
        self.env = gymnasium.make(env_id, **(d.get("kwargs") or {}))
        space = self.env.action_space
        shape = tuple(getattr(space, "shape", None) or ())
        if len(shape) != 1:
            raise ConfigError(f"environment '{env_id}' has a {type(space).__name__} action space of shape {shape}: driver.kind gym needs a 1-D Box (one number per joint)")
        if shape[0] != self.action_size:
            raise ConfigError(f"environment '{env_id}' takes {shape[0]} action values but driver.action.names lists {self.action_size} — list one name per action value")
        self.layout = _space_layout(self.env.observation_space)
        self.max_episode_steps = getattr(self.env.spec, "max_episode_steps", None)
        # A scripted expert (driver.expert "module:factory"): factory(env.unwrapped) -> an object with act(obs) -> action
        # and optionally reset(seed). It may read the env's privileged state; its action for each observation rides
        # along with that observation, so the stack's expert actor answers without a round trip.
        self.expert = None
        if d.get("expert"):
            self.expert = _load(d["expert"], "driver.expert")(self.env.unwrapped, **(d.get("expert_kwargs") or {}))
        # A scripted operator (driver.operator "module:factory"): factory(env.unwrapped) -> observe(obs) -> the action
        # while it has the robot, else None; and optionally reset(seed).
        self.operator = None
        if d.get("operator"):
            self.operator = _load(d["operator"], "driver.operator")(self.env.unwrapped, **(d.get("operator_kwargs") or {}))

    def _operator_action(self, obs: Any) -> list[float] | None:
        if self.operator is None:
            return None
        a = self.operator.observe(obs)
        if a is None:
            return None
        a = np.asarray(a, dtype=np.float64).reshape(-1)
        if a.size != self.action_size or not np.all(np.isfinite(a)):
            raise ConfigError(f"the operator returned {a.size} action values (expected {self.action_size}, all finite)")
        return a.tolist()

    def _expert_action(self, obs: Any) -> list[float] | None:
        if self.expert is None:
            return None
        a = np.asarray(self.expert.act(obs), dtype=np.float64).reshape(-1)
        if a.size != self.action_size or not np.all(np.isfinite(a)):
            raise ConfigError(f"the expert returned {a.size} action values (expected {self.action_size}, all finite)")
        return a.tolist()

    # -- observation -----------------------------------------------------------------------------------------------
    def _pack(self, obs: Any) -> tuple[dict[str, Any], list[bytes]]:
        parts = []
        for key, n in self.state_keys:
            a = np.asarray(_lookup(obs, key), dtype=np.float64).reshape(-1)
            if a.size != n:
                raise ConfigError(f"observation key '{key or '(whole observation)'}' has {a.size} values but driver.observation lists {n} names for it — list one name per value")
            parts.append(a)
        state = np.concatenate(parts) if parts else np.zeros(0)
        frames = [np.ascontiguousarray(state, dtype="<f8").tobytes()]
        images = []
        for name, key in self.cameras:
            img = np.asarray(_lookup(obs, key))
            if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
                raise ConfigError(f"camera {name}: observation key '{key}' is a {img.dtype} array of shape {tuple(img.shape)}, not an rgb8 image (height x width x 3, uint8) — map an image key to the camera")
            frames.append(np.ascontiguousarray(img).tobytes())
            images.append({"name": name, "height": int(img.shape[0]), "width": int(img.shape[1])})
        return {"state_len": int(state.size), "images": images}, frames

    def _success(self, terminated: bool, info: dict[str, Any]) -> bool:
        key = self.success.get("info")
        if key:
            return bool(info.get(key, False))
        return bool(terminated)

    # -- requests --------------------------------------------------------------------------------------------------
    def handle(self, frames: list[bytes]) -> tuple[list[bytes], bool]:
        """The reply to one request, and whether to exit after sending it."""
        if not frames or len(frames[0]) > 4096:
            return self._error("malformed request: frame 0 must be a JSON header"), False
        try:
            head = json.loads(frames[0].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return self._error("malformed request: frame 0 is not JSON"), False
        if not isinstance(head, dict) or not isinstance(head.get("token"), str) or not hmac.compare_digest(head["token"].encode(), self.token.encode()):
            return self._error("unauthorized: this environment is driven only by the stack that started it"), False
        op = head.get("op")
        try:
            if op == "spec":
                space = self.env.action_space
                return self._reply({"action": {"shape": list(space.shape), "low": np.asarray(space.low, dtype=float).tolist(), "high": np.asarray(space.high, dtype=float).tolist()}, "observation": self.layout, "max_episode_steps": self.max_episode_steps}, []), False
            if op == "reset":
                seed = head.get("seed")
                if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0 or seed >= 2**63:
                    return self._error("reset needs an integer seed >= 0"), False
                # Some environments draw from NumPy's global generator (gym-hil's random block position): seed it too, so
                # that an episode's seed alone reproduces it.
                np.random.seed(seed % 2**32)
                obs, info = self.env.reset(seed=seed)
                for script in (self.expert, self.operator):
                    if script is not None and hasattr(script, "reset"):
                        script.reset(seed)
                meta, out = self._pack(obs)
                return self._reply({**meta, "expert": self._expert_action(obs), "operator": self._operator_action(obs), "reward": 0.0, "terminated": False, "truncated": False, "success": False}, out), False
            if op == "step":
                if len(frames) != 2 or len(frames[1]) != 8 * self.action_size:
                    got = len(frames[1]) / 8 if len(frames) == 2 else 0
                    return self._error(f"step needs one frame of {self.action_size} float64 action values, got {got:g}"), False
                action = np.frombuffer(frames[1], dtype="<f8")
                if not np.all(np.isfinite(action)):
                    return self._error("step refused: the action has NaN or infinite values"), False
                obs, reward, terminated, truncated, info = self.env.step(action.astype(self.env.action_space.dtype))
                meta, out = self._pack(obs)
                r = float(reward)
                return self._reply({**meta, "expert": self._expert_action(obs), "operator": self._operator_action(obs), "reward": r if np.isfinite(r) else 0.0, "terminated": bool(terminated), "truncated": bool(truncated), "success": self._success(bool(terminated), info)}, out), False
            if op == "close":
                return self._reply({}, []), True
        except ConfigError as e:
            return self._error(str(e)), False
        return self._error(f"unknown op {op!r} (spec, reset, step, close)"), False

    @staticmethod
    def _reply(head: dict[str, Any], frames: list[bytes]) -> list[bytes]:
        return [json.dumps({"ok": True, **head}).encode(), *frames]

    @staticmethod
    def _error(msg: str) -> list[bytes]:
        return [json.dumps({"ok": False, "error": msg}).encode()]


def main() -> None:
    line = sys.stdin.readline()
    try:
        cfg = json.loads(line)
        assert isinstance(cfg, dict) and isinstance(cfg.get("token"), str) and len(cfg["token"]) >= 16 and isinstance(cfg.get("driver"), dict)
    except (json.JSONDecodeError, AssertionError):
        _fail("gym_server: expected one JSON line on stdin with a token and the driver block (the stack writes it)")
    try:
        import gymnasium  # noqa: F401
    except ImportError:
        _fail(f"gymnasium is not installed in {sys.executable} — pip install 'rlft-learner[gym]' (or pip install gymnasium) into the Python the stack runs (RLFT_PYTHON)")
    try:
        import zmq
    except ImportError:
        _fail(f"pyzmq is not installed in {sys.executable} — pip install pyzmq")
    try:
        server = GymServer(cfg)
    except ConfigError as e:
        _fail(str(e))
    except Exception as e:  # the environment's own constructor failed
        _fail(f"making Gymnasium environment '{cfg['driver'].get('env')}' failed: {type(e).__name__}: {e}".replace("\n", " "))
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.MAXMSGSIZE, MAX_REQUEST_BYTES)
    sock.setsockopt(zmq.LINGER, 0)
    port = sock.bind_to_random_port("tcp://127.0.0.1")
    print(json.dumps({"port": port, "max_episode_steps": server.max_episode_steps}), flush=True)
    # The stack closing our stdin (it exited, or was killed) ends us too: poll stdin next to the socket.
    poller = zmq.Poller()
    poller.register(sock, zmq.POLLIN)
    poller.register(sys.stdin, zmq.POLLIN)
    while True:
        ready = dict(poller.poll())
        if sys.stdin.fileno() in ready or sys.stdin in ready:
            if not sys.stdin.readline():
                break
        if sock in ready:
            frames = sock.recv_multipart()
            try:
                reply, done = server.handle(frames)
            except Exception as e:  # the environment itself raised: report it, keep serving
                reply, done = GymServer._error(f"the environment raised {type(e).__name__}: {e}".replace("\n", " ")), False
            sock.send_multipart(reply)
            if done:
                break
    try:
        server.env.close()
    finally:
        sock.close(0)
        ctx.term()


if __name__ == "__main__":
    main()
