"""Finite-value guards (issue 24 item 2): ten finite but huge transitions (3e38) used to overflow normalisation, turn the
critic NaN and publish all-NaN residual packages, and the checkpoint kept the NaN. Now they are refused at the door,
every loss is checked, and nothing non-finite is exported, published or checkpointed."""

import json
import os
import time

import numpy as np
import pytest
import torch

from rlft_learner.transport.protocol import decode, decode_policy, encode
from rlft_learner.algorithms.residual_td3.config import ResidualTD3Config
from rlft_learner.commands.serve_config import ServeConfig
from rlft_learner.commands.serve import Learner
from test_online import SMALL, VERSION, client, hello, policy_sub, running_learner, transitions
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
    for lr, cfg, _ in running_learner(tmp_path, checkpoint_every_s=0.2):
        yield lr, cfg


def test_ten_huge_transitions_are_refused_and_the_learner_keeps_publishing_finite_packages(running, tmp_path):
    lr, cfg = running
    sub = policy_sub(cfg.policy_bind)
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


# --- second line: losses, exports, checkpoints --------------------------------------------------------------------

def test_step_guard_never_steps_on_a_non_finite_loss_or_gradient():
    from rlft_learner.finite import StepGuard

    net = torch.nn.Linear(3, 1)
    opt = torch.optim.AdamW(net.parameters(), lr=0.1)
    before = [p.detach().clone() for p in net.parameters()]
    guard = StepGuard("test", log_every=2)
    assert not guard.step("critic", torch.tensor(float("nan")), opt, net.parameters(), 1.0)
    x = torch.full((4, 3), 3e38)
    assert not guard.step("critic", net(x).pow(2).mean(), opt, net.parameters(), 1.0)  # the overflow: inf loss
    finite_loss = (net(torch.zeros(1, 3)) * 0).abs().sqrt().sum()  # 0, but d sqrt(|.|) at 0 is NaN
    assert not guard.step("actor", finite_loss, opt, net.parameters(), 1.0)
    assert all(torch.equal(a, b) for a, b in zip(before, net.parameters())) and opt.state == {}
    assert guard.skipped == {"critic": 2, "actor": 1} and guard.total == 3
    assert guard.step("critic", net(torch.ones(4, 3)).pow(2).mean(), opt, net.parameters(), 1.0)
    assert not all(torch.equal(a, b) for a, b in zip(before, net.parameters()))


def test_a_poisoned_batch_skips_the_update_and_the_networks_stay_finite():
    from rlft_learner.finite import nonfinite_tensors
    from rlft_learner.algorithms.residual_td3.agent import ResidualTD3
    from test_residual import rows

    agent = ResidualTD3(ResidualTD3Config(critic_heads=2, critic_hidden=16, actor_hidden=16, batch_size=8, learning_starts=1,
                               critic_warmup_updates=0, policy_delay=1), 3, 2)
    agent.add(rows(list(range(8))))
    poisoned = rows(list(range(8, 16)), reward=[3e38] * 8)  # bypassing the door, as the attack reached the buffer
    poisoned["obs"][:] = 3e38
    agent.add(poisoned)
    stats = [agent.update() for _ in range(20)]
    assert agent.updates == 20 and agent.guard.skipped.get("critic", 0) > 0
    assert nonfinite_tensors(agent.state_dict()) == []
    assert all(np.isfinite(v) for s in stats for v in s.values())  # no NaN reaches the metrics or progress JSON


def _nan_(module):
    with torch.no_grad():
        next(module.parameters()).fill_(float("nan"))


def test_a_non_finite_network_is_never_exported(tmp_path):
    from rlft_learner.export.package import export_residual_package
    from rlft_learner.finite import NonFiniteError
    from rlft_learner.algorithms.residual_td3.nets import ResidualActor
    from rlft_learner.algorithms.residual_td3.agent import BasePackage

    base = BasePackage.load(write_base(tmp_path / "base"))
    actor = ResidualActor(3, 2, hidden=16, layers=1, scale=0.1)
    _nan_(actor)
    with pytest.raises(NonFiniteError, match=r"residual package: non-finite \(NaN/Inf\) values in actor\..*nothing was written"):
        export_residual_package(actor, base, str(tmp_path / "packages"), updates=1, exploration_std=0.0)
    assert not (tmp_path / "packages").exists()


def test_publish_and_checkpoint_refuse_a_non_finite_network_and_resume_refuses_a_poisoned_checkpoint(tmp_path):
    from rlft_learner.commands.serve import save_checkpoint

    cfg = ServeConfig(base_package=write_base(tmp_path / "base", version=VERSION), run_dir=str(tmp_path / "run"),
                 experience_bind=f"tcp://127.0.0.1:{free_port()}", policy_bind=f"tcp://127.0.0.1:{free_port()}", **SMALL)
    lr = Learner(cfg, out=lambda _: None)
    try:
        lr.publish()
        lr.checkpoint(wait=True)
        good_version, good_ckpt = lr.latest_version, json.load(open(tmp_path / "run" / "checkpoint.json"))["dir"]
        _nan_(lr.agent.actor)
        lr.publish()
        lr.checkpoint(wait=True)
        assert lr.refused == {"publish": 1, "checkpoint": 1, "checkpoint_write": 0}
        assert lr.latest_version == good_version and lr.server.latest.version == good_version  # robots keep the last good one
        assert os.listdir(tmp_path / "run" / "packages") == [good_version]
        assert json.load(open(tmp_path / "run" / "checkpoint.json"))["dir"] == good_ckpt
        assert lr.guards()["refused_exports"] == {"publish": 1, "checkpoint": 1, "checkpoint_write": 0}
        # A checkpoint written with NaN weights (by a learner before these guards): refused on resume, with the fix.
        save_checkpoint(cfg.run_dir, lr.agent, {"base_version": VERSION, "robots": {}, "latest_version": good_version,
                                                "published_at": 0, "updates": 0})
    finally:
        lr.close()
    assert not os.path.exists(tmp_path / "run" / good_ckpt)  # save_checkpoint replaced it: nothing to fall back to
    with pytest.raises(ValueError, match=r"holds no usable checkpoint: checkpoint .*non-finite \(NaN/Inf\) values in actor\..*new run_dir"):
        Learner(cfg, out=lambda _: None)


def test_resume_falls_back_to_an_older_complete_checkpoint(tmp_path):
    import shutil

    cfg = ServeConfig(base_package=write_base(tmp_path / "base", version=VERSION), run_dir=str(tmp_path / "run"),
                 experience_bind=f"tcp://127.0.0.1:{free_port()}", policy_bind=f"tcp://127.0.0.1:{free_port()}", **SMALL)
    lr = Learner(cfg, out=lambda _: None)
    lr.agent.updates = 7
    lr.checkpoint(wait=True)
    lr.close()
    run = tmp_path / "run"
    good = json.load(open(run / "checkpoint.json"))["dir"]
    bad = "ckpt-000000009-badbad"
    shutil.copytree(run / good, run / bad)
    state = torch.load(str(run / bad / "state.pt"), weights_only=False)
    next(iter(state["critic"].values())).fill_(float("inf"))
    torch.save(state, str(run / bad / "state.pt"))
    json.dump({"dir": bad, "updates": 9}, open(run / "checkpoint.json", "w"))
    lr2 = Learner(cfg, out=lambda _: None)
    try:
        assert lr2.resumed_from == 7  # the older, finite checkpoint
    finally:
        lr2.close()


def test_a_dataset_file_with_huge_values_is_refused(tmp_path):
    from rlft_learner.data import load_npz, save_npz, synthetic_dataset

    data = synthetic_dataset(episodes=2, steps=5, obs_dim=3, action_dim=2)
    data.episodes[1].obs[2, 1] = 3e38
    save_npz(str(tmp_path / "demos.npz"), data)
    with pytest.raises(ValueError, match=r"demos.npz: obs has 1 values beyond ±1e\+06 .*row 7, column 1"):
        load_npz(str(tmp_path / "demos.npz"))
