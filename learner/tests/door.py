"""Test helper: the learner's online door (OnlineServer) alone, on loopback, served from a thread, with the rows it
stores collected. No agent and no torch training: the door's behaviour is what these tests look at."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from rlft_learner.transport.online_server import OnlineServer
from rlft_learner.algorithms.residual_td3.agent import BasePackage
from test_residual import write_base
from test_server import free_port

VERSION = "bc-toy-20261130T000000Z-abcdef"


class Door:
    """An OnlineServer on free loopback ports (`endpoint`), serving until `close()`; `rows` holds what it stored."""

    def __init__(self, tmp_path, heartbeat_sec: float = 2.0, **kw: Any):
        self.base = BasePackage.load(write_base(tmp_path / "base", version=VERSION))
        self.rows: list[dict[str, np.ndarray]] = []
        self.server = OnlineServer(f"tcp://127.0.0.1:{free_port()}", f"tcp://127.0.0.1:{free_port()}", self.base,
                                   on_rows=self.rows.append, status=lambda: {"updates": 0, "online": self.stored, "offline": 0},
                                   heartbeat_sec=heartbeat_sec, **kw)
        self.endpoint = self.server.endpoint
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    @property
    def stored(self) -> int:
        return sum(len(r["seq"]) for r in self.rows)

    def seqs(self, robot_index: int) -> list[int]:
        return [int(s) for r in self.rows for s, i in zip(r["seq"], r["robot"]) if i == robot_index]

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.server.serve(timeout_ms=20)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self.server.close()

    def __enter__(self) -> "Door":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
