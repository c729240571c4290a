import socket
import threading

import msgpack
import numpy as np
import pytest
import zmq

from rlft_learner.transport.protocol import decode, encode
from rlft_learner.transport.server import ExperienceServer

OBS = [f"o{i}" for i in range(3)]
ACT = ["a0", "a1"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_server(server, result):
    try:
        result["data"] = server.collect()
    except Exception as exc:  # surfaced by the test
        result["error"] = exc


@pytest.fixture
def server():
    srv = ExperienceServer(f"tcp://127.0.0.1:{free_port()}", timeout_s=10)
    yield srv
    srv.close()


def client(endpoint, timeout_ms=5000):
    """A robot-side DEALER with a receive deadline (shared by the online-server tests)."""
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, timeout_ms)
    sock.connect(endpoint)
    return sock


def ask(sock, frames):
    sock.send_multipart(frames)
    return decode(sock.recv_multipart())[0]


def episode(seq, T, obs_dim=3, seed=0):
    rng = np.random.default_rng(seed)
    return encode({"type": "episode", "seq": seq, "episode_id": f"e{seq}", "seed": seed, "task": "push", "length": T,
                   "success": True}, {"obs": rng.normal(size=(T, obs_dim)), "action": rng.normal(size=(T, 2)), "reward": np.zeros(T)})


def test_hello_episodes_end_round_trip_with_bad_frames_in_between(server):
    result = {}
    thread = threading.Thread(target=run_server, args=(server, result))
    thread.start()
    sock = client(server.endpoint)
    try:
        reply = ask(sock, encode({"type": "episode", "seq": 0, "episode_id": "x", "seed": 0, "task": "push", "length": 1,
                                  "success": False}, {"obs": np.zeros((1, 3)), "action": np.zeros((1, 2)), "reward": np.zeros(1)}))
        assert reply["type"] == "error" and "hello first" in reply["reason"]
        reply = ask(sock, encode({"type": "hello", "seq": 1, "robot_id": "sim-0", "config_hash": "h", "obs_names": OBS,
                                  "action_names": ACT, "task": "push"}))
        assert reply["type"] == "welcome" and reply["seq"] == 1 and reply["learner"].startswith("rlft_learner")
        assert ask(sock, episode(2, 5))["type"] == "ack"
        reply = ask(sock, [b"\x00\x01not msgpack"])
        assert reply["type"] == "error" and reply["seq"] == -1 and "msgpack" in reply["reason"]
        bad = episode(3, 4)
        reply = ask(sock, bad[:2] + [bad[2][:-1]] + bad[3:])
        assert reply == {**reply, "type": "error", "seq": 3} and "bytes" in reply["reason"]
        reply = ask(sock, episode(4, 4, obs_dim=7))
        assert reply["type"] == "error" and "obs_names" in reply["reason"]
        ack = ask(sock, episode(5, 7, seed=1))
        assert ack == {"type": "ack", "seq": 5, "protocol": "rlft-exp/1"}
        assert ask(sock, encode({"type": "end", "seq": 6, "episodes": 2}))["type"] == "ack"
    finally:
        sock.close()
        thread.join(10)
    assert "error" not in result
    data = result["data"]
    assert [len(e.obs) for e in data.episodes] == [5, 7]
    assert data.obs_names == OBS and data.action_names == ACT and data.task == "push"
    assert server.stats.malformed == 4


def test_receive_deadline_names_the_address():
    srv = ExperienceServer(f"tcp://127.0.0.1:{free_port()}", timeout_s=0.2)
    with srv, pytest.raises(TimeoutError, match="no client connected to tcp://127.0.0.1"):
        srv.collect()


def test_bind_failure_is_explained():
    port = free_port()
    with ExperienceServer(f"tcp://127.0.0.1:{port}", timeout_s=1):
        with pytest.raises(RuntimeError, match="Cannot bind"):
            ExperienceServer(f"tcp://127.0.0.1:{port}", timeout_s=1)


def test_wrong_protocol_hello_gets_error(server):
    result = {}
    thread = threading.Thread(target=run_server, args=(server, result))
    thread.start()
    sock = client(server.endpoint)
    try:
        hello = {"type": "hello", "protocol": "rlft-exp/0", "seq": 0, "robot_id": "r", "config_hash": "h",
                 "obs_names": OBS, "action_names": ACT, "task": "push"}
        reply = ask(sock, [msgpack.packb(hello)])
        assert reply["type"] == "error" and "rlft-exp/1" in reply["reason"]
        assert ask(sock, encode({**hello, "protocol": "rlft-exp/1", "seq": 1}))["type"] == "welcome"
        assert ask(sock, encode({"type": "end", "seq": 2, "episodes": 0}))["type"] == "ack"
    finally:
        sock.close()
        thread.join(10)
    assert result["data"].episodes == []


def test_episode_intervention_flags_and_source_arrive_and_bad_flags_are_rejected(server):
    result = {}
    thread = threading.Thread(target=run_server, args=(server, result))
    thread.start()
    sock = client(server.endpoint)
    try:
        hello = {"type": "hello", "seq": 0, "robot_id": "r", "config_hash": "h", "obs_names": OBS, "action_names": ACT, "task": "push"}
        assert ask(sock, encode(hello))["type"] == "welcome"
        tensors = {"obs": np.zeros((4, 3)), "action": np.zeros((4, 2)), "reward": np.zeros(4)}
        head = {"type": "episode", "seq": 1, "episode_id": "e", "seed": 0, "task": "push", "length": 4, "success": False, "source": "recap_collect"}
        reply = ask(sock, encode(head, {**tensors, "intervention": np.array([0, 2, 0, 0])}))
        assert reply["type"] == "error" and "only 0 or 1" in reply["reason"]
        reply = ask(sock, encode({**head, "seq": 2}, {**tensors, "intervention": np.array([0, 1, 0])}))
        assert reply["type"] == "error" and "shape must be [4]" in reply["reason"]
        assert ask(sock, encode({**head, "seq": 3}, {**tensors, "intervention": np.array([0, 1, 1, 0])}))["type"] == "ack"
        assert ask(sock, encode({"type": "end", "seq": 4, "episodes": 1}))["type"] == "ack"
    finally:
        sock.close()
        thread.join(10)
    (ep,) = result["data"].episodes
    assert ep.intervention.tolist() == [0, 1, 1, 0] and ep.source == "recap_collect" and ep.success is False
