"""Finite-value guards (issue 24 item 2): ten finite but huge transitions (3e38) used to overflow normalisation, turn the
critic NaN and publish all-NaN residual packages, and the checkpoint kept the NaN. Now they are refused at the door,
every loss is checked, and nothing non-finite is exported, published or checkpointed."""

import json
import os
import threading
import time

import numpy as np
import pytest
import torch
import zmq

from rlft_learner.protocol import decode, decode_policy, encode
from rlft_learner.residual_td3 import Config
from rlft_learner.serve import Learner
from test_online import SMALL, VERSION, client, hello, transitions
from test_residual import write_base
from test_server import ask, free_port


def huge_transitions(seq, first, n, value=3e38):
    """A transitions batch whose observations and rewards are finite float32 values near its maximum (3.4e38)."""
    frames = transitions(seq, first, n)
    header, tensors = decode(frames)
    tensors = dict(tensors, obs=np.full_like(tensors["obs"], value), next_obs=np.full_like(tensors["next_obs"], value),
                   reward=np.full_like(tensors["reward"], value))
    return encode({k: v for k, v in header.items() if k not in ("tensors", "protocol")}, tensors)


def _finite_package(files: dict[str, bytes], tmp_path) -> bool:
    """Every weight in the package's model.pt is finite."""
    path = tmp_path / "published-model.pt"
    path.write_bytes(files["model.pt"])
    state = torch.load(str(path), map_location="cpu")["state_dict"]
    return all(torch.isfinite(v).all() for v in state.values())


@pytest.fixture
def running(tmp_path):
    cfg = Config(base_package=write_base(tmp_path / "base", version=VERSION), run_dir=str(tmp_path / "run"),
                 experience_bind=f"tcp://127.0.0.1:{free_port()}", policy_bind=f"tcp://127.0.0.1:{free_port()}",
                 publish_every=10, checkpoint_every_s=0.2, **SMALL)
    lr = Learner(cfg, out=lambda _: None)
    stop = threading.Event()
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("done", lr.run(stop)))
    thread.start()
    yield lr, cfg
    stop.set()
    thread.join(30)
    assert "done" in result


def test_ten_huge_transitions_are_refused_and_the_learner_keeps_publishing_finite_packages(running, tmp_path):
    lr, cfg = running
    sub = zmq.Context.instance().socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, b"policy")
    sub.setsockopt(zmq.RCVTIMEO, 30000)
    sub.connect(cfg.policy_bind)
    sock = client(cfg.experience_bind)
    try:
        assert ask(sock, hello(0))["type"] == "welcome"
        time.sleep(0.3)  # the SUB connects before anything is published
        # The attack: ten transitions of 3e38 (finite float32), sent as the issue did (one batch of ten).
        r = ask(sock, huge_transitions(1, 0, 10))
        assert r["type"] == "error" and r["seq"] == 1
        assert "tensor 'obs'" in r["reason"] and "1e+06" in r["reason"], r["reason"]
        assert len(lr.agent.online) == 0  # never stored
        assert lr.server.stats.rejected_values == 1
        # A robot that then sends good data is served as before: seq 0.. are still free (nothing was acked).
        assert ask(sock, transitions(2, 0, 30))["acked_seq"] == 29
        header, files = decode_policy(sub.recv_multipart()[1:])
        assert _finite_package(files, tmp_path)
        # A rejected batch later in the stream does not move acked_seq either.
        r = ask(sock, huge_transitions(3, 30, 10, value=-2e6))
        assert r["type"] == "error" and lr.server.stats.rejected_values == 2
        assert ask(sock, encode({"type": "heartbeat", "seq": 4, "robot_id": "r0"}))["acked_seq"] == 29
    finally:
        sock.close()
        sub.close()
    deadline = time.monotonic() + 20
    pointer = os.path.join(cfg.run_dir, "checkpoint.json")
    while not os.path.exists(pointer) and time.monotonic() < deadline:
        time.sleep(0.05)
    ckpt = os.path.join(cfg.run_dir, json.load(open(pointer))["dir"])
    online = np.load(os.path.join(ckpt, "online.npz"))
    assert np.abs(online["obs"]).max() < 1e6 and np.abs(online["reward"]).max() < 1e6
