import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest

from rlft_learner.data import Normalizer, make_windows, save_npz, synthetic_dataset
from rlft_learner.data import Episode
from rlft_learner.algorithms.bc.train import Config, run, train

LEARNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def test_windows_pad_history_at_start_and_chunk_at_end():
    ep = Episode(obs=np.arange(5, dtype=np.float32)[:, None], action=np.arange(5, dtype=np.float32)[:, None] * 10,
                 reward=np.zeros(5, np.float32))
    obs, act = make_windows([ep], history=2, horizon=4)
    assert obs.shape == (5, 2, 1) and act.shape == (5, 4, 1)
    assert obs[0, :, 0].tolist() == [0, 0] and obs[3, :, 0].tolist() == [2, 3]
    assert act[0, :, 0].tolist() == [0, 10, 20, 30] and act[3, :, 0].tolist() == [30, 40, 40, 40]


def test_normalizer_maps_actions_to_unit_box_and_floors_std():
    data = synthetic_dataset(episodes=3, steps=20, obs_dim=4, action_dim=2)
    data.episodes[0].obs[:, 1] = 5.0
    for ep in data.episodes:
        ep.obs[:, 1] = 5.0  # a constant dimension
        ep.action[:, 0] = 0.3  # a constant action
    norm = Normalizer.fit(data.episodes, std_floor=1e-2)
    assert norm.obs_std[1] == pytest.approx(1e-2)
    a = norm.action(np.concatenate([e.action for e in data.episodes]))
    assert a.min() >= -1 - 1e-6 and a.max() <= 1 + 1e-6 and np.isfinite(a).all()
    assert np.allclose(norm.unaction(a), np.concatenate([e.action for e in data.episodes]), atol=1e-5)


def test_training_reduces_loss():
    data = synthetic_dataset(episodes=6, steps=40, obs_dim=5, action_dim=2, seed=3)
    cfg = Config(steps=200, batch_size=64, hidden=64, blocks=2, warmup_steps=20, log_every=50, device="cpu")
    metrics = []
    losses = train(cfg, data, metrics.append).losses
    assert np.mean(losses[-40:]) < 0.6 * np.mean(losses[:20])
    assert [m["step"] for m in metrics] == [50, 100, 150, 200]
    assert {"losses/diffusion", "charts/SPS"} <= set(metrics[0])


def test_train_bc_from_npz_exports_a_valid_package(tmp_path, capsys):
    data = synthetic_dataset(episodes=4, steps=30, obs_dim=6, action_dim=3, seed=1)
    npz = tmp_path / "demos.npz"
    save_npz(str(npz), data)
    done = run(Config(dataset=str(npz), out=str(tmp_path / "run"), steps=40, batch_size=32, hidden=32, blocks=1,
                      warmup_steps=5, log_every=20, json_progress=True, device="cpu"))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["event"] for e in lines] == ["progress", "progress", "done"]
    assert lines[0] == {"event": "progress", "step": 20, "total": 40, "loss": lines[0]["loss"]}
    assert lines[-1] == done and done["final_loss"] > 0

    pkg = done["package"]
    policy = json.load(open(os.path.join(pkg, "policy.json")))
    assert policy["format"] == "rlft-policy" and policy["format_version"] == 1 and policy["kind"] == "diffusion"
    assert policy["observation"]["names"] == data.obs_names and policy["observation"]["history"] == 2
    assert len(policy["observation"]["mean"]) == 6 and len(policy["action"]["min"]) == 3
    assert policy["action"]["horizon"] == 16 and policy["action"]["execute_steps"] == 8
    s = policy["sampler"]
    assert s["type"] == "ddim" and s["eta"] == 0 and s["steps"] == 10 and len(s["alphas_cumprod"]) == 100
    assert s["timesteps"] == sorted(s["timesteps"], reverse=True) and len(s["timesteps"]) == 10
    assert policy["provenance"]["episodes"] == 4
    for name, digest in policy["sha256"].items():
        assert hashlib.sha256(open(os.path.join(pkg, name), "rb").read()).hexdigest() == digest
    assert {"sampler.onnx", "denoiser.onnx", "test_vectors.json", "model.pt"} <= set(policy["sha256"])

    sampler = onnx.load(os.path.join(pkg, policy["files"]["sampler"]))
    onnx.checker.check_model(sampler)
    assert [i.name for i in sampler.graph.input] == ["obs", "noise"] and sampler.graph.output[0].name == "action"
    assert sampler.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert sampler.graph.input[0].type.tensor_type.shape.dim[1].dim_value == 12
    denoiser = onnx.load(os.path.join(pkg, policy["files"]["denoiser"]))
    assert [i.name for i in denoiser.graph.input] == ["obs", "x", "t"] and denoiser.graph.output[0].name == "eps"
    assert denoiser.graph.input[2].type.tensor_type.elem_type == onnx.TensorProto.INT64

    vectors = json.load(open(os.path.join(pkg, "test_vectors.json")))
    action = np.array(vectors["action"])
    assert np.array(vectors["obs"]).shape == (3, 12) and action.shape == (3, 16, 3)
    assert np.abs(action).max() <= 1.0

    from rlft_learner.commands.bench_sampler import load_sampler
    import torch
    with torch.no_grad():  # model.pt reproduces the test vectors
        again = load_sampler(pkg)(torch.tensor(vectors["obs"]), torch.tensor(vectors["noise"]))
    assert np.allclose(again.numpy(), action, atol=1e-5)


def run_cli(*args, timeout=120):
    env = {**os.environ, "PYTHONPATH": LEARNER}
    return subprocess.run([sys.executable, "-m", "rlft_learner", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=LEARNER, env=env)


def test_make_fixture_and_bench_commands(tmp_path):
    out = tmp_path / "fixture"
    res = run_cli("make-fixture", "--out", str(out), "--obs-dim", "12", "--action-dim", "5", "--steps", "30")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.splitlines()[-1])["event"] == "done"
    policy = json.load(open(out / "policy.json"))
    assert len(policy["observation"]["names"]) == 12 and len(policy["action"]["names"]) == 5
    assert (out / "sampler.onnx").exists() and (out / "test_vectors.json").exists()
    res = run_cli("bench-sampler", "--package", str(out), "--threads", "1", "--iters", "5")
    assert res.returncode == 0, res.stderr
    stats = json.loads(res.stdout)
    assert stats["p50_ms"] > 0 and stats["p99_ms"] >= stats["p50_ms"]


def test_help_shows_examples():
    for cmd in ("train-bc", "make-fixture", "bench-sampler"):
        res = run_cli(cmd, "--help")
        assert res.returncode == 0 and "example" in res.stdout and f"rlft_learner {cmd}" in res.stdout


def test_train_bc_times_out_clearly_without_client(tmp_path):
    res = run_cli("train-bc", "--bind", "tcp://127.0.0.1:*", "--timeout", "0.3", "--out", str(tmp_path), "--json-progress")
    assert res.returncode == 1
    event = json.loads(res.stdout.splitlines()[-1])
    assert event["event"] == "error" and "no client connected" in event["message"]


def test_train_bc_over_the_wire(tmp_path):
    import threading
    import zmq
    from rlft_learner.transport.protocol import decode, encode
    from test_server import free_port

    port = free_port()
    cfg = Config(bind=f"tcp://127.0.0.1:{port}", timeout=10, out=str(tmp_path / "run"), steps=10, batch_size=16, hidden=16,
                 blocks=1, warmup_steps=2, log_every=5, device="cpu")
    result = {}
    thread = threading.Thread(target=lambda: result.update(run(cfg)))
    thread.start()
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 10000)
    sock.connect(cfg.bind)
    data = synthetic_dataset(episodes=2, steps=20, obs_dim=4, action_dim=2)
    try:
        sock.send_multipart(encode({"type": "hello", "seq": 0, "robot_id": "sim", "config_hash": "h", "task": "push_cube",
                                    "obs_names": data.obs_names, "action_names": data.action_names}))
        assert decode(sock.recv_multipart())[0]["type"] == "welcome"
        for i, ep in enumerate(data.episodes):
            sock.send_multipart(encode({"type": "episode", "seq": i + 1, "episode_id": ep.episode_id, "seed": ep.seed,
                                        "task": "push_cube", "length": len(ep.obs), "success": True},
                                       {"obs": ep.obs, "action": ep.action, "reward": ep.reward}))
            assert decode(sock.recv_multipart())[0] == {"type": "ack", "seq": i + 1, "protocol": "rlft-exp/1"}
        sock.send_multipart(encode({"type": "end", "seq": 3, "episodes": 2}))
        assert decode(sock.recv_multipart())[0]["type"] == "ack"
    finally:
        sock.close()
        thread.join(60)
    policy = json.load(open(os.path.join(result["package"], "policy.json")))
    assert policy["provenance"]["task"] == "push_cube" and policy["provenance"]["episodes"] == 2
    assert policy["version"].startswith("bc-push_cube-")
