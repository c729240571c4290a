import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

import msgpack
import numpy as np
import pytest
import zmq

from rlft_learner.transport.protocol import decode, decode_policy, encode
from rlft_learner.commands.serve_config import ServeConfig
from rlft_learner.commands.serve import Learner
from test_residual import write_base
from test_server import ask, free_port
from test_server import client as server_client

LEARNER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
VERSION = "bc-toy-20261130T000000Z-abcdef"
SMALL = dict(critic_heads=2, critic_hidden=16, actor_hidden=16, batch_size=16, learning_starts=8, critic_warmup_updates=2,
             threads=1, progress_every_s=0.2)


def client(endpoint):
    return server_client(endpoint, timeout_ms=10000)  # the learner may be busy training


def hello(seq, robot="r0", version=VERSION, **over):
    return encode({"type": "hello", "seq": seq, "robot_id": robot, "config_hash": "sha256:x", "obs_names": ["o0", "o1", "o2"],
                   "action_names": ["a0", "a1"], "task": "toy", "mode": "online", "base_policy_version": version, **over})


def transitions(seq, first, n, robot="r0", intervention=0.0, obs_dim=3, frames=None):
    """`frames`: extra tensors, e.g. camera frames image.<cam> / next_image.<cam> uint8 [n, H, W, 3]."""
    rng = np.random.default_rng(first)
    a = lambda: rng.uniform(-1, 1, size=(n, 2))  # noqa: E731
    header = {"type": "transitions", "seq": seq, "robot_id": robot, "first_seq": first, "count": n,
              "episode": [0] * n, "step": list(range(first, first + n)), "policy_version": ["base"] * n,
              "intervention_source": ["scripted_operator" if intervention else ""] * n}
    return encode(header, {"obs": rng.normal(size=(n, obs_dim)), "next_obs": rng.normal(size=(n, obs_dim)), "base_action": a(),
                           "residual_action": np.zeros((n, 2)), "action": a(), "next_base_action": a(),
                           "reward": np.zeros(n), "terminated": np.zeros(n), "truncated": np.zeros(n),
                           "intervention": np.full(n, intervention), **(frames or {})})


def policy_sub(endpoint, timeout_ms=30000):
    """A robot-side SUB on the learner's policy PUB (topic `policy`)."""
    sub = zmq.Context.instance().socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, b"policy")
    sub.setsockopt(zmq.RCVTIMEO, timeout_ms)
    sub.connect(endpoint)
    return sub


def running_learner(tmp_path, **over):
    """A Learner on free loopback ports, run in a thread: yields (learner, cfg, its JSON lines), stops it after. Its
    base is a toy state package unless `base_package` says otherwise."""
    base = over.pop("base_package", None) or write_base(tmp_path / "base", version=VERSION)
    cfg = ServeConfig(base_package=base, run_dir=str(tmp_path / "run"),
                 experience_bind=f"tcp://127.0.0.1:{free_port()}", policy_bind=f"tcp://127.0.0.1:{free_port()}",
                 **{"publish_every": 10, **SMALL, **over})
    lines = []
    lr = Learner(cfg, out=lines.append)
    stop = threading.Event()
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("done", lr.run(stop)))
    thread.start()
    yield lr, cfg, lines
    stop.set()
    thread.join(30)
    assert "done" in result


@pytest.fixture
def learner(tmp_path):
    yield from running_learner(tmp_path)


def test_two_robots_dedup_gap_and_bad_frames_keep_serving(learner):
    lr, cfg, _ = learner
    a, b = client(cfg.experience_bind), client(cfg.experience_bind)
    try:
        assert ask(a, transitions(0, 0, 3))["reason"].endswith("send hello first")
        w = ask(a, hello(1))
        assert w["type"] == "welcome" and w["acked_seq"] == -1 and w["latest_policy"] is None and w["heartbeat_sec"] == 2.0
        r = ask(a, encode({"type": "get_policy", "seq": 10}))
        assert r["type"] == "error" and "no residual package yet" in r["reason"]  # nothing trained yet
        bad = ask(b, hello(1, robot="r1", version="bc-other"))
        assert bad["type"] == "error" and "bc-other" in bad["reason"] and VERSION in bad["reason"]
        assert ask(b, hello(2, robot="r1"))["acked_seq"] == -1
        assert ask(a, transitions(2, 0, 5)) == {"type": "ack", "seq": 2, "acked_seq": 4, "durable_seq": -1, "protocol": "rlft-exp/1"}
        assert ask(b, transitions(3, 0, 4, robot="r1", intervention=1.0))["acked_seq"] == 3
        assert ask(a, transitions(3, 3, 4))["acked_seq"] == 6  # resend of 3, 4 + new 5, 6: duplicates dropped
        assert ask(a, transitions(4, 0, 5))["acked_seq"] == 6  # a full duplicate
        assert ask(a, transitions(5, 9, 2))["acked_seq"] == 6  # a gap: nothing stored, resend from 7
        assert len(lr.agent.online) == 7 + 4 and len(lr.agent.offline) == 4
        # malformed, truncated, wrong version: error replies, server keeps going
        assert ask(a, [b"\xc1garbage"])["seq"] == -1
        good = transitions(6, 7, 2)
        r = ask(a, good[:3] + [good[3][:-4]] + good[4:])
        assert r["type"] == "error" and r["seq"] == 6 and "bytes" in r["reason"]
        r = ask(a, [msgpack.packb({**decode(hello(7))[0], "protocol": "rlft-exp/0"})])
        assert r["type"] == "error" and "rlft-exp/1" in r["reason"]
        r = ask(a, transitions(8, 7, 2, obs_dim=4))
        assert r["type"] == "error" and "widths" in r["reason"]
        assert lr.server.stats.malformed == 5  # before-hello, garbage, truncated, wrong protocol, widths
        hb = ask(a, encode({"type": "heartbeat", "seq": 9, "robot_id": "r0"}))
        assert hb["type"] == "heartbeat" and hb["acked_seq"] == 6 and hb["online_transitions"] == 11 and hb["offline_transitions"] == 4
        assert ask(b, encode({"type": "heartbeat", "seq": 4, "robot_id": "r1"}))["acked_seq"] == 3
        assert ask(a, transitions(11, 7, 2))["acked_seq"] == 8
    finally:
        a.close()
        b.close()


def test_packages_are_published_and_served_with_matching_sha256(learner):
    lr, cfg, lines = learner
    sub = policy_sub(cfg.policy_bind)
    sock = client(cfg.experience_bind)
    try:
        ask(sock, hello(0))
        time.sleep(0.3)  # let the SUB connect before anything is published
        assert ask(sock, transitions(1, 0, 20))["acked_seq"] == 19
        pub = sub.recv_multipart()
        assert pub[0] == b"policy"
        header, files = decode_policy(pub[1:])
        assert header["kind"] == "residual" and header["base_version"] == VERSION
        sock.send_multipart(encode({"type": "get_policy", "seq": 2}))
        reply = sock.recv_multipart()
        h2, files2 = decode_policy(reply)
        assert h2["seq"] == 2 and h2["version"] == lr.server.latest.version
        policy = json.loads(files2["policy.json"])
        assert {f["name"] for f in h2["files"]} == {"policy.json", "residual.onnx", "critic.onnx", "model.pt", "test_vectors.json"}
        for spec in h2["files"]:
            assert hashlib.sha256(files2[spec["name"]]).hexdigest() == spec["sha256"]
            if spec["name"] != "policy.json":
                assert policy["sha256"][spec["name"]] == spec["sha256"]
        w = ask(sock, hello(3))
        assert w["latest_policy"] == {"version": h2["version"], "kind": "residual"}
        assert lines == []  # json_progress is off
    finally:
        sock.close()
        sub.close()


def _start(cfg_path, *flags):
    env = {**os.environ, "PYTHONPATH": LEARNER_DIR, "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "rlft_learner", "serve", "--config", cfg_path, "--json-progress", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_for(proc, event, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"learner exited: {proc.stderr.read()[-2000:]}")
        msg = json.loads(line)
        if msg["event"] == event:
            return msg
    raise AssertionError(f"no {event} event within {timeout} s")


def test_killed_learner_resumes_from_checkpoint_with_its_acked_seq(tmp_path):
    exp, pub = f"tcp://127.0.0.1:{free_port()}", f"tcp://127.0.0.1:{free_port()}"
    cfg_path = tmp_path / "learner.yaml"
    cfg_path.write_text("\n".join([f"base_package: {write_base(tmp_path / 'base', version=VERSION)}", f"run_dir: {tmp_path / 'run'}",
                                   f"experience_bind: {exp}", f"policy_bind: {pub}", "checkpoint_every: 20",
                                   "checkpoint_every_s: 0.2", "publish_every: 1000"]
                                  + [f"{k}: {v}" for k, v in SMALL.items()]) + "\n")
    proc = _start(str(cfg_path))
    sock = client(exp)
    try:
        _wait_for(proc, "progress")
        assert ask(sock, hello(0))["acked_seq"] == -1
        assert ask(sock, transitions(1, 0, 30))["acked_seq"] == 29
        pointer = tmp_path / "run" / "checkpoint.json"
        deadline = time.monotonic() + 30
        hb_seq = 100
        while time.monotonic() < deadline:  # the learner reports the checkpoint as durable_seq once it completed
            hb_seq += 1
            hb = ask(sock, encode({"type": "heartbeat", "seq": hb_seq, "robot_id": "r0"}))
            if hb["durable_seq"] == 29 and pointer.exists() and \
                    json.load(open(tmp_path / "run" / json.load(open(pointer))["dir"] / "meta.json"))["updates"] > 0:
                break
            assert hb["durable_seq"] in (-1, 29) and hb["acked_seq"] == 29
            time.sleep(0.05)
        assert hb["durable_seq"] == 29
        meta = json.load(open(tmp_path / "run" / json.load(open(pointer))["dir"] / "meta.json"))
        assert meta["robots"]["r0"]["acked_seq"] == 29
        assert ask(sock, transitions(2, 30, 5)) == {"type": "ack", "seq": 2, "acked_seq": 34, "durable_seq": 29, "protocol": "rlft-exp/1"}
        os.kill(proc.pid, signal.SIGKILL)  # no chance to checkpoint on the way out
        proc.wait(10)
        meta = json.load(open(tmp_path / "run" / json.load(open(pointer))["dir"] / "meta.json"))
        proc = _start(str(cfg_path))
        resumed = _wait_for(proc, "resumed")
        assert resumed["updates"] == meta["updates"] > 0
        assert resumed["env_steps"] >= 30  # the UTD clock resumes too: a session paces on it (app/session.ts)
        # a new connection (the robot reconnects with hello after the link went down)
        sock.close()
        sock = client(exp)
        w = ask(sock, hello(0))
        restored = meta["robots"]["r0"]["acked_seq"]
        assert 29 <= restored <= 34  # a checkpoint may have caught seq 30..34 before the kill
        assert w["acked_seq"] == w["durable_seq"] == restored  # all it restored is durable; the robot resends after it
        assert ask(sock, transitions(1, restored + 1, 39 - restored))["acked_seq"] == 39
        progress = _wait_for(proc, "progress")
        while progress["updates"] <= meta["updates"]:
            progress = _wait_for(proc, "progress")
        assert progress["online"] == 40
        proc.send_signal(signal.SIGTERM)
        done = _wait_for(proc, "done")
        assert done["updates"] >= progress["updates"]
        assert done["robots"]["r0"] == {"acked_seq": 39, "durable_seq": 39, "online_rows": 40, "distinct_seqs": 40}
        assert proc.wait(20) == 0
    finally:
        sock.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def test_a_slow_checkpoint_write_does_not_hold_the_door_and_a_failed_one_keeps_the_previous(tmp_path, monkeypatch):
    """The soak's failure (docs/results.md § camera frames): a checkpoint rewriting a large replay on the serving thread
    held the robots' acks past their deadline. The files are written on a writer thread now: robots are acked while it
    writes, and their acked_seq becomes durable_seq only once it completed. A write that fails (a full disk) leaves
    the previous checkpoint current and durable_seq where it was; the next one completes."""
    from rlft_learner.commands import serve

    # Write k waits for gates[k]; the second then fails; the third completes (each is started only after the last ended).
    gates = [threading.Event(), threading.Event(), threading.Event()]
    started = [threading.Event(), threading.Event(), threading.Event()]
    calls = []
    real = serve.write_checkpoint

    def slow_write(run_dir, snap, meta):  # called by the writer thread
        k = len(calls)
        calls.append(k)
        if k < 3:
            started[k].set()
            assert gates[k].wait(30)
            if k == 1:
                raise OSError(28, "No space left on device")
        return real(run_dir, snap, meta)

    monkeypatch.setattr(serve, "write_checkpoint", slow_write)
    gen = running_learner(tmp_path, checkpoint_every=10**9, checkpoint_every_s=0.05)
    lr, cfg, _ = next(gen)
    sock = client(cfg.experience_bind)
    heartbeat = iter(range(100, 10**6))
    durable = lambda: ask(sock, encode({"type": "heartbeat", "seq": next(heartbeat), "robot_id": "r0"}))["durable_seq"]  # noqa: E731
    try:
        assert ask(sock, hello(0))["acked_seq"] == -1
        assert ask(sock, transitions(1, 0, 10))["acked_seq"] == 9
        assert started[0].wait(20)  # the learner took a snapshot holding seq 0..9 and is "writing" it
        for k in range(5):  # acked meanwhile, not made durable
            reply = ask(sock, transitions(2 + k, 10 + 4 * k, 4))
            assert reply["acked_seq"] == 13 + 4 * k and reply["durable_seq"] == -1
        assert not (tmp_path / "run" / "checkpoint.json").exists()
        gates[0].set()
        assert started[1].wait(20)  # the first completed; the second (the rows acked meanwhile) is held
        first = json.load(open(tmp_path / "run" / "checkpoint.json"))["dir"]
        assert json.load(open(tmp_path / "run" / first / "meta.json"))["robots"]["r0"]["acked_seq"] >= 9
        was = durable()
        assert was >= 9
        # The disk fills: the second write fails, is counted, and changes nothing a robot relies on.
        assert ask(sock, transitions(60, 30, 5))["acked_seq"] == 34
        gates[1].set()
        deadline = time.monotonic() + 20
        while lr.refused["checkpoint_write"] == 0:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert started[2].wait(20)  # the next write (dirty stays set) is held: nothing has changed
        assert durable() == was and json.load(open(tmp_path / "run" / "checkpoint.json"))["dir"] == first
        gates[2].set()  # it completes: everything acked becomes durable
        deadline = time.monotonic() + 20
        while durable() < 34:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert json.load(open(tmp_path / "run" / "checkpoint.json"))["dir"] != first
        assert not [d for d in os.listdir(tmp_path / "run") if d.startswith(".ckpt-")]
        assert lr.refused["checkpoint_write"] == 1
    finally:
        sock.close()
        for g in gates:
            g.set()
        next(gen, None)


def test_a_second_learner_on_the_same_run_dir_is_refused_and_partial_checkpoints_are_removed(tmp_path):
    """Two learners on one run_dir would interleave checkpoints: the second exits with one line naming the first. A
    partial checkpoint directory (a learner killed mid-write) is removed when the next learner starts."""
    run = tmp_path / "run"
    run.mkdir()
    (run / ".ckpt-000000012-abcdef").mkdir()
    (run / ".ckpt-000000012-abcdef" / "online.npz").write_bytes(b"partial")

    def cfg(name):
        path = tmp_path / f"{name}.yaml"
        path.write_text("\n".join([f"base_package: {write_base(tmp_path / 'base', version=VERSION)}", f"run_dir: {run}",
                                   f"experience_bind: tcp://127.0.0.1:{free_port()}", f"policy_bind: tcp://127.0.0.1:{free_port()}"]
                                  + [f"{k}: {v}" for k, v in SMALL.items()]) + "\n")
        return str(path)

    first = _start(cfg("a"))
    try:
        _wait_for(first, "progress")
        assert not (run / ".ckpt-000000012-abcdef").exists()
        second = _start(cfg("b"))
        out, err = second.communicate(timeout=60)
        assert second.returncode == 1
        assert f"run_dir {run} is in use by another learner (pid {first.pid})" in err, err[-2000:]
        assert "give this one another run_dir" in err
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(30)


def test_a_checkpoint_whose_pointer_could_not_be_written_leaves_no_copy_behind(tmp_path, monkeypatch):
    """A full disk can fail the pointer rename after the checkpoint directory was renamed into place: that directory
    would never be loaded nor removed (a whole replay). It is removed, the previous checkpoint stays current, and the
    next one that completes leaves only itself."""
    from rlft_learner.commands import serve

    cfg = ServeConfig(base_package=write_base(tmp_path / "base", version=VERSION), run_dir=str(tmp_path / "run"),
                      experience_bind=f"tcp://127.0.0.1:{free_port()}", policy_bind=f"tcp://127.0.0.1:{free_port()}", **SMALL)
    lr = Learner(cfg, out=lambda _: None)
    try:
        with pytest.raises(ValueError, match=r"run_dir .* is in use by another learner \(pid \d+\)"):
            Learner(cfg, out=lambda _: None)  # the same run_dir, even in this process
        lr.checkpoint(wait=True)
        first = json.load(open(tmp_path / "run" / "checkpoint.json"))["dir"]
        real = serve._atomic_json

        def full_disk(path, obj):
            if path.endswith("checkpoint.json"):
                raise OSError(28, "No space left on device")
            real(path, obj)

        monkeypatch.setattr(serve, "_atomic_json", full_disk)
        lr.agent.updates = 5
        lr.checkpoint(wait=True)
        assert lr.refused["checkpoint_write"] == 1
        assert sorted(d for d in os.listdir(tmp_path / "run") if "ckpt-" in d) == [first]
        monkeypatch.setattr(serve, "_atomic_json", real)
        lr.agent.updates = 6
        lr.checkpoint(wait=True)
        now = json.load(open(tmp_path / "run" / "checkpoint.json"))["dir"]
        assert now != first and sorted(d for d in os.listdir(tmp_path / "run") if "ckpt-" in d) == [now]
    finally:
        lr.close()
    again = Learner(cfg, out=lambda _: None)  # released by close()
    again.close()
