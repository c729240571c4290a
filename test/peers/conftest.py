"""Fixtures for the interop tests: rlft's simulators as child processes, driven by the vendors' own clients.

Each simulator is the `rlft` CLI (`node bin/rlft.js servo-sim` / `ur-sim`), so the clients meet exactly what a
user gets: the servo bus behind a fresh socat pty pair, the UR controller on loopback TCP. Faults are injected
with the simulators' stdin commands. ur_rtde's RTDE interfaces always connect to port 30004, so each UR
simulator listens on its own random 127.x.y.z address (still loopback) instead of a free port.
"""
from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import queue
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class SimProcess:
    """A simulator child process: its first lines, and one command → one answer line over stdin/stdout."""

    proc: subprocess.Popen
    banner: list[str] = field(default_factory=list)
    lines: "queue.Queue[str]" = field(default_factory=queue.Queue)

    def command(self, cmd: str, timeout: float = 10.0) -> str:
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.lines.get(timeout=timeout)
            if line.startswith(("ok", "{", "error", "unknown")) or re.fullmatch(r"-?\d+", line.strip()):
                return line.strip()

    def stats(self) -> dict:
        return json.loads(self.command("stats"))

    def stop(self) -> None:
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait(timeout=10)


def start_sim(args: list[str], ready: str, banner_lines: int) -> SimProcess:
    """Starts `node bin/rlft.js <args>` and waits until a line matching `ready` was printed."""
    proc = subprocess.Popen(
        [shutil.which("node") or "node", "bin/rlft.js", *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=sys.stderr,
        text=True,
        bufsize=1,
    )
    sim = SimProcess(proc)

    def pump() -> None:
        for line in proc.stdout:
            sim.lines.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    waited = 0.0
    while len(sim.banner) < banner_lines:
        try:
            sim.banner.append(sim.lines.get(timeout=0.5))
        except queue.Empty:
            waited += 0.5
            if proc.poll() is not None or waited > 60:
                proc.kill()
                raise RuntimeError(f"rlft {' '.join(args)} did not start (exit {proc.poll()}), printed {sim.banner}")
    if not any(re.search(ready, b) for b in sim.banner):
        proc.kill()
        raise RuntimeError(f"rlft {' '.join(args)}: unexpected start lines {sim.banner}")
    return sim


def _servo_sims():
    if not shutil.which("socat"):
        pytest.skip("socat is not installed (apt-get install socat)")
    started: list[SimProcess] = []

    def make(bus: str, ids: str = "1-3") -> tuple[SimProcess, str]:
        sim = start_sim(["servo-sim", "--bus", bus, "--ids", ids, "--speed", "20000"], r"connect to: /dev/", 3)
        started.append(sim)
        port = next(b.split("connect to: ")[1] for b in sim.banner if "connect to: " in b)
        return sim, port

    return make, started


@pytest.fixture(scope="module")
def servo_sim_module():
    """servo_sim_module("dynamixel" | "feetech", ids="1-3") → (SimProcess, pty path for the vendor SDK); one per module."""
    make, started = _servo_sims()
    yield make
    for s in started:
        s.stop()


@dataclass
class UrSim:
    sim: SimProcess
    host: str
    primary: int
    secondary: int
    dashboard: int


@pytest.fixture
def ur_sim():
    """A UR controller simulator on a random loopback address (RTDE on 30004 there, other ports free ones)."""
    started: list[SimProcess] = []

    def make(*extra: str) -> UrSim:
        for _ in range(5):
            host = f"127.{random.randint(1, 254)}.{random.randint(0, 254)}.{random.randint(1, 254)}"
            try:
                sim = start_sim(["ur-sim", "--host", host, "--primary-port", "0", "--secondary-port", "0", "--dashboard-port", "0", *extra], r"RTDE on ", 2)
            except RuntimeError:
                continue  # that address's 30004 was taken (another test run): try another
            started.append(sim)
            ports = dict(re.findall(r"(\w+) on [\d.]+:(\d+)", sim.banner[0]))
            return UrSim(sim, host, int(ports["primary"]), int(ports["secondary"]), int(ports["dashboard"]))
        raise RuntimeError("no free loopback address for the UR simulator")

    yield make
    for s in started:
        s.stop()
