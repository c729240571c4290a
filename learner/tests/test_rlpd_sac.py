import json
import os

import numpy as np
import onnx
import pytest
import torch

from rlft_learner.data import save_npz, synthetic_dataset
from rlft_learner.export.package import export_residual_package
from rlft_learner.algorithms.residual_td3.agent import BasePackage, ResidualTD3
from rlft_learner.algorithms.rlpd_sac.config import RlpdSacConfig
from rlft_learner.commands.serve_config import ServeConfig, load_config
from rlft_learner.algorithms.rlpd_sac.agent import RlpdSAC, zero_base_demo_rows
from rlft_learner.commands.serve import Learner, make_agent
from test_residual import rows, write_base
from test_server import free_port

SMALL = dict(critic_hidden=32, actor_hidden=32, batch_size=32, learning_starts=8)


def toy_agent(**over) -> RlpdSAC:
    agent = RlpdSAC(RlpdSacConfig(**{**SMALL, "n_step": 1, "gamma": 0.9, **over}), 3, 2)
    n = 64
    r = rows(list(range(n)), reward=[1.0 if i % 8 == 7 else 0.0 for i in range(n)],
             terminated=[1.0 if i % 8 == 7 else 0.0 for i in range(n)])
    r["obs"] = np.random.default_rng(0).normal(size=(n, 3)).astype(np.float32)
    r["next_obs"] = np.roll(r["obs"], -1, axis=0)
    r["action"] = np.random.default_rng(1).uniform(-1, 1, size=(n, 2)).astype(np.float32)
    agent.add(r)
    agent.add_offline(rows(list(range(16)), reward=[0] * 15 + [1], terminated=[0] * 15 + [1], intervention=[1] * 16))
    assert agent.updates_due() == 2 * n
    return agent


def test_sac_update_reduces_critic_loss_and_tunes_temperature():
    torch.set_num_threads(1)
    # Without the entropy bonus in the target the TD regression on a fixed toy batch must converge.
    agent = toy_agent(sac_backup_entropy=False)
    losses = [agent.update()["losses/critic"] for _ in range(300)]
    assert np.mean(losses[-20:]) < 0.5 * np.mean(losses[:20])
    assert agent.updates == 300 and agent.actor_updates == 150
    # With it (the default), soft values grow while alpha falls: the policy's entropy is above the target -|A|/2.
    agent = toy_agent()
    alpha0 = agent.alpha
    metrics = [agent.update() for _ in range(200)]
    assert all(np.isfinite(m["losses/critic"]) for m in metrics)
    assert agent.alpha < alpha0 and metrics[-1]["charts/entropy"] > agent.target_entropy
    # checkpoint round trip
    clone = toy_agent()
    clone.load_state_dict(agent.state_dict())
    obs = torch.randn(5, 3)
    assert torch.equal(clone.actor(obs, torch.zeros(5, 2)), agent.actor(obs, torch.zeros(5, 2)))
    assert clone.updates == 200 and clone.alpha == pytest.approx(agent.alpha)


def test_sac_exports_a_scale_1_residual_package_of_the_mean_action(tmp_path):
    base = BasePackage.load(write_base(tmp_path / "base"))
    agent = RlpdSAC(RlpdSacConfig(**SMALL), 3, 2)
    path, policy = export_residual_package(agent.actor, base, str(tmp_path / "packages"), updates=0,
                                           exploration_std=agent.exploration_std(), version_prefix="sac")
    assert policy["kind"] == "residual" and policy["residual"]["scale"] == 1.0 and policy["version"].startswith("sac-toy-")
    assert 0.05 <= policy["residual"]["exploration_std"] <= 0.3
    model = onnx.load(os.path.join(path, "residual.onnx"))
    assert [i.name for i in model.graph.input] == ["obs", "base_action"]  # the zero base stays an input
    vectors = json.load(open(os.path.join(path, "test_vectors.json")))
    obs = torch.tensor(vectors["obs"])
    mean, _ = agent.sac_actor(obs)
    # the output ignores the base action: tanh(mu(obs)), whatever base_action was fed
    assert np.allclose(vectors["residual"], torch.tanh(mean).detach().numpy(), atol=1e-6)


def test_config_algorithm_selects_the_agent_and_sac_learner_publishes_at_start(tmp_path):
    assert isinstance(make_agent(load_config(), 3, 2), ResidualTD3)
    assert isinstance(make_agent(load_config(overrides={"algorithm": "rlpd_sac"}), 3, 2), RlpdSAC)
    with pytest.raises(ValueError, match="algorithm = .ppo. is not one of residual_td3, rlpd_sac"):
        load_config(overrides={"algorithm": "ppo"})
    # demos without relabelling: base actions are zero for a zero-base learner
    base_dir = write_base(tmp_path / "base")
    data = synthetic_dataset(episodes=2, steps=10, obs_dim=3, action_dim=2)
    data.obs_names, data.action_names = ["o0", "o1", "o2"], ["a0", "a1"]
    save_npz(str(tmp_path / "demos.npz"), data)
    demo = zero_base_demo_rows(str(tmp_path / "demos.npz"), BasePackage.load(base_dir))
    assert len(demo["seq"]) == 20 and not demo["base_action"].any() and demo["terminated"].sum() == 2
    cfg = ServeConfig(**SMALL, algorithm="rlpd_sac", threads=1, base_package=base_dir, run_dir=str(tmp_path / "run"), demo_dataset=str(tmp_path / "demos.npz"),
                 experience_bind=f"tcp://127.0.0.1:{free_port()}", policy_bind=f"tcp://127.0.0.1:{free_port()}")
    lines = []
    lr = Learner(cfg, out=lines.append)
    try:
        assert isinstance(lr.agent, RlpdSAC) and len(lr.agent.offline) == 20
        assert lr.latest_version and lr.latest_version.startswith("sac-toy-")  # robots explore from episode 0
        pj = json.load(open(os.path.join(lr.packages_dir, lr.latest_version, "policy.json")))
        assert pj["residual"]["scale"] == 1.0 and pj["provenance"]["algorithm"] == "rlpd_sac" and pj["provenance"]["zero_base"]
    finally:
        lr.close()
