"""The Gymnasium server of `driver.kind: gym` (rlft_learner/gym_server.py) at its doors: the startup line, the token,
malformed and hostile requests, actions of the wrong length or with NaN, observations that do not fit the mapping,
and what the scripts it hosts (expert, operator) may return. Driven with pyzmq as the stack's side is not: an
independent client of the same protocol."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
zmq = pytest.importorskip("zmq")

TOKEN = "t" * 48
DRIVER = {
    "env": "rlft/PointReach-v0",
    "modules": ["rlft_learner.gym_testenv"],
    "action": {"names": ["x", "y"]},
    "observation": [{"key": "agent_pos", "names": ["px", "py"]}, {"key": "goal", "names": ["gx", "gy"]}],
    "cameras": {"front": "pixels/front"},
    "success": {"info": "is_success"},
}


def start(driver=None, token=TOKEN):
    p = subprocess.Popen([sys.executable, "-m", "rlft_learner.gym_server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdin.write(json.dumps({"token": token, "driver": driver or DRIVER}) + "\n")
    p.stdin.flush()
    return p, json.loads(p.stdout.readline())


class Client:
    def __init__(self, port):
        self.ctx = zmq.Context()
        self.s = self.ctx.socket(zmq.REQ)
        self.s.setsockopt(zmq.RCVTIMEO, 10000)
        self.s.setsockopt(zmq.LINGER, 0)
        self.s.connect(f"tcp://127.0.0.1:{port}")

    def ask(self, head, *frames, token=TOKEN):
        h = head if isinstance(head, bytes) else json.dumps({"token": token, **head}).encode()
        self.s.send_multipart([h, *frames])
        reply = self.s.recv_multipart()
        return json.loads(reply[0]), reply[1:]

    def close(self):
        self.s.close(0)
        self.ctx.term()


@pytest.fixture
def server():
    p, hello = start()
    c = Client(hello["port"])
    yield c
    try:
        c.ask({"op": "close"})
    finally:
        c.close()
        p.stdin.close()
        p.wait(10)


def test_serves_reset_and_step_with_raw_frames(server):
    head, frames = server.ask({"op": "reset", "seed": 3})
    assert head["ok"] and head["state_len"] == 4 and head["images"] == [{"name": "front", "height": 8, "width": 8}]
    state = np.frombuffer(frames[0], "<f8")
    assert state[:2].tolist() == [0.0, 0.0] and len(frames[1]) == 8 * 8 * 3
    head, frames = server.ask({"op": "step"}, np.array([0.1, 0.0]).tobytes())
    assert head["ok"] and not head["terminated"]
    assert np.frombuffer(frames[0], "<f8")[:2].tolist() == pytest.approx([0.1, 0.0])


def test_binds_loopback_only_and_a_random_port():
    p1, h1 = start()
    p2, h2 = start()
    try:
        assert h1["port"] != h2["port"]
        out = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True).stdout if _has("ss") else ""
        for line in out.splitlines():
            if f":{h1['port']} " in line:
                assert "127.0.0.1:" in line, line
    finally:
        for p in (p1, p2):
            p.stdin.close()
            p.wait(10)


def _has(cmd):
    import shutil

    return shutil.which(cmd) is not None


def test_refuses_without_the_token_and_does_nothing(server):
    server.ask({"op": "reset", "seed": 1})
    for bad in [None, "", "x", TOKEN[:-1], TOKEN + "x", 5]:
        head = {"op": "step"} if bad is None else {"op": "step", "token": bad}
        h, _ = server.ask(json.dumps(head).encode(), np.array([0.9, 0.9]).tobytes())
        assert not h["ok"] and "unauthorized" in h["error"]
    head, frames = server.ask({"op": "step"}, np.array([0.0, 0.0]).tobytes())
    assert np.frombuffer(frames[0], "<f8")[:2].tolist() == [0.0, 0.0], "the refused steps moved nothing"


@pytest.mark.parametrize("frame0", [b"", b"\xff\xfe", b"[1,2]", b"null", b"{" * 5000, json.dumps({"token": TOKEN}).encode(), json.dumps({"token": TOKEN, "op": "explode"}).encode()])
def test_malformed_requests_get_an_error_and_the_server_lives(server, frame0):
    h, _ = server.ask(frame0)
    assert not h["ok"]
    assert server.ask({"op": "reset", "seed": 0})[0]["ok"]


@pytest.mark.parametrize("action, why", [(np.array([0.1]), "2 float64"), (np.array([0.1, 0.2, 0.3]), "2 float64"), (b"abc", "2 float64"), (np.array([np.nan, 0.0]), "NaN"), (np.array([np.inf, 0.0]), "NaN or infinite")])
def test_actions_of_the_wrong_length_or_not_finite_are_refused(server, action, why):
    server.ask({"op": "reset", "seed": 0})
    h, _ = server.ask({"op": "step"}, action if isinstance(action, bytes) else action.tobytes())
    assert not h["ok"] and why in h["error"]


def test_bad_seeds_are_refused(server):
    for seed in [-1, 1.5, "3", True, None, 2**64]:
        h, _ = server.ask({"op": "reset", "seed": seed})
        assert not h["ok"] and "seed" in h["error"]


def test_an_observation_that_stops_fitting_the_mapping_is_reported_by_key_and_size():
    p, hello = start({**DRIVER, "kwargs": {"bad_obs_at_step": 2}})
    c = Client(hello["port"])
    try:
        c.ask({"op": "reset", "seed": 0})
        assert c.ask({"op": "step"}, np.zeros(2).tobytes())[0]["ok"]
        h, _ = c.ask({"op": "step"}, np.zeros(2).tobytes())
        assert not h["ok"] and "observation key 'agent_pos' has 3 values but driver.observation lists 2 names" in h["error"]
    finally:
        c.close()
        p.stdin.close()
        p.wait(10)


def test_the_environment_raising_is_reported_and_the_server_keeps_serving():
    p, hello = start({**DRIVER, "kwargs": {"raise_at_step": 1}})
    c = Client(hello["port"])
    try:
        c.ask({"op": "reset", "seed": 0})
        h, _ = c.ask({"op": "step"}, np.zeros(2).tobytes())
        assert not h["ok"] and "RuntimeError: simulated environment failure" in h["error"]
        assert c.ask({"op": "reset", "seed": 0})[0]["ok"]
    finally:
        c.close()
        p.stdin.close()
        p.wait(10)


@pytest.mark.parametrize(
    "driver, message",
    [
        ({**DRIVER, "env": "Nope-v0"}, "Gymnasium environment 'Nope-v0' is not registered"),
        ({**DRIVER, "modules": ["no_such_module_xyz"]}, "driver.modules names 'no_such_module_xyz', which does not import"),
        ({**DRIVER, "action": {"names": ["x"]}}, "takes 2 action values but driver.action.names lists 1"),
        ({**DRIVER, "expert": "rlft_learner.gym_testenv:Missing"}, "driver.expert 'rlft_learner.gym_testenv:Missing' cannot be loaded"),
    ],
)
def test_startup_errors_are_one_json_line_and_a_nonzero_exit(driver, message):
    p, hello = start(driver)
    assert p.wait(30) != 0
    assert message in hello["error"] and "\n" not in hello["error"]


def test_a_bad_startup_line_exits():
    p = subprocess.Popen([sys.executable, "-m", "rlft_learner.gym_server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    out, _ = p.communicate("not json\n", timeout=30)
    assert p.returncode != 0 and "expected one JSON line" in json.loads(out)["error"]


def test_the_expert_rides_along_with_each_observation_and_reads_privileged_state():
    p, hello = start({**DRIVER, "expert": "rlft_learner.gym_testenv:PointReachExpert"})
    c = Client(hello["port"])
    try:
        h, frames = c.ask({"op": "reset", "seed": 7})
        goal = np.frombuffer(frames[0], "<f8")[2:]
        assert h["expert"] == pytest.approx(goal.tolist())
        for _ in range(20):
            h, _ = c.ask({"op": "step"}, np.asarray(h["expert"]).tobytes())
            if h["terminated"]:
                break
        assert h["success"]
    finally:
        c.close()
        p.stdin.close()
        p.wait(10)


def test_closing_stdin_ends_the_server():
    p, hello = start()
    p.stdin.close()
    assert p.wait(30) == 0
