"""Chunk critic (chunk_critic.py): re-plan windows cut from the online stream, SARSA-over-chunks targets, export."""

import json
import os

import numpy as np
import pytest
import torch

from rlft_learner.algorithms.residual_td3.chunk_critic import ChunkCritic, ChunkWindows
from rlft_learner.export.package import export_residual_package
from rlft_learner.algorithms.residual_td3.agent import BasePackage, ResidualTD3
from rlft_learner.algorithms.residual_td3.config import ResidualTD3Config

from test_residual import rows, write_base

K, OBS, ACT = 4, 3, 2


def steps(seq, step, **kw):
    r = rows(seq, obs_dim=OBS, act_dim=ACT, **kw)
    r["step"] = np.asarray(step, np.int64)
    r["obs"][:, 0] = np.asarray(step, np.float32)  # marks the step a window starts at
    r["base_action"][:, 0] = np.asarray(step, np.float32) / 100  # marks where a chunk's actions came from
    return r


def test_windows_follow_the_replan_boundaries_and_link_to_the_next_chunk():
    g = 0.9
    w = ChunkWindows(K, OBS, ACT, g)
    # one episode of 10 steps ending in a success at step 9: windows at steps 0, 4, 8
    reward = [0] * 9 + [1]
    w.add(steps(list(range(10)), list(range(10)), reward=reward, terminated=[0] * 9 + [1]))
    assert len(w) == 3
    assert list(w.obs[:3, 0]) == [0, 4, 8]
    assert np.allclose(w.chunk[0].reshape(K, ACT)[:, 0], [0, 0.01, 0.02, 0.03])
    assert list(w.next[:3]) == [1, 2, -1]
    assert w.discount[0] == pytest.approx(g ** K) and w.ret[0] == 0
    # the last window holds steps 8, 9 (success at 9): return g^1, no bootstrap, chunk padded with step 9's action
    assert w.terminal[2] and w.discount[2] == 0 and w.ret[2] == pytest.approx(g)
    assert np.allclose(w.chunk[2].reshape(K, ACT)[:, 0], [0.08, 0.09, 0.09, 0.09])
    assert list(w.trainable()) == [0, 1, 2]


def test_interventions_truncations_and_gaps_are_not_trained_on():
    w = ChunkWindows(K, OBS, ACT, 0.9)
    # steps 0..11, an intervention at step 5, truncated at step 11 (timeout)
    inter = [0] * 12
    inter[5] = 1
    w.add(steps(list(range(12)), list(range(12)), intervention=inter, truncated=[0] * 11 + [1]))
    # windows 0 (clean, next = window 1), 1 (holds the intervention), 2 (cut by the truncation: no next)
    assert len(w) == 3 and list(w.clean[:3]) == [True, False, True]
    assert list(w.trainable()) == [0]  # window 0 bootstraps from window 1's planned chunk; 1 and 2 are not trained on
    # a second robot that joins mid-chunk waits for its next re-plan; a gap in seq closes the open window
    w.add(steps([100, 101, 102], [2, 3, 4], robot=1))
    assert len(w) == 4 and w.obs[3, 0] == 4
    w.add(steps([110, 111], [8, 9], robot=1))  # gap: window 3 never gets a next
    assert len(w) == 5 and w.next[3] == -1 and 3 not in w.trainable()


def test_the_chunk_critic_learns_which_chunk_succeeds():
    """Two chunks from the same start state: one always succeeds (reward 1 within the window), the other never does
    and times out later. After training, the critic ranks the succeeding chunk higher."""
    torch.manual_seed(0)
    cc = ChunkCritic(K, OBS, ACT, gamma=0.9, hidden=32, layers=2, heads=4, lr=3e-3, weight_decay=0.0, tau=0.05,
                     grad_clip=1.0, batch_size=64, seed=0, device=torch.device("cpu"))
    seq = 0
    for ep in range(40):
        good = ep % 2 == 0
        n = 4 if good else 12
        r = steps(list(range(seq, seq + n)), list(range(n)), reward=[0] * (n - 1) + [1 if good else 0],
                  terminated=[0] * (n - 1) + [1 if good else 0], truncated=[0] * (n - 1) + [0 if good else 1])
        r["obs"][:, 0] = 0.0  # same start state
        r["base_action"][:, 1] = 1.0 if good else -1.0
        cc.windows.add(r)
        seq += n + 10
    for _ in range(300):
        cc.update()
    obs = torch.zeros(2, OBS)
    chunk = torch.zeros(2, K * ACT)
    chunk.view(2, K, ACT)[0, :, 1] = 1.0
    chunk.view(2, K, ACT)[1, :, 1] = -1.0
    with torch.no_grad():
        q = cc.net(obs, chunk).mean(dim=0)
    assert q[0] > q[1] + 0.3, q


def test_agent_trains_and_checkpoints_the_chunk_critic(tmp_path):
    cfg = ResidualTD3Config(chunk_critic=True, chunk_critic_every=1, learning_starts=1, critic_hidden=16,
                 actor_hidden=16, critic_heads=3, batch_size=16)
    agent = ResidualTD3(cfg, OBS, ACT)
    agent.enable_chunk_critic(K)
    agent.add(steps(list(range(200)), [i % 20 for i in range(200)], truncated=[1 if i % 20 == 19 else 0 for i in range(200)]))
    out = {}
    for _ in range(5):
        out.update(agent.update())
    assert "losses/chunk_critic" in out and agent.chunk.updates == 5
    other = ResidualTD3(cfg, OBS, ACT)
    other.enable_chunk_critic(K)
    other.load_state_dict(agent.state_dict())
    assert len(other.chunk.windows) == len(agent.chunk.windows) and other.chunk.updates == 5
    for p, q in zip(other.chunk.net.parameters(), agent.chunk.net.parameters()):
        assert torch.equal(p, q)


def test_package_carries_chunk_critic_onnx(tmp_path):
    import onnx
    from rlft_learner.algorithms.residual_td3.nets import CriticEnsemble, ResidualActor
    base = BasePackage.load(write_base(tmp_path / "base", obs_dim=OBS, act_dim=ACT))
    net = CriticEnsemble(OBS, K * ACT, hidden=16, layers=2, heads=3)
    path, policy = export_residual_package(ResidualActor(OBS, ACT, hidden=16), base, str(tmp_path / "pk"), 10, 0.05,
                                           chunk_critic=(net, K))
    assert policy["files"]["chunk_critic"] == "chunk_critic.onnx" and policy["chunk_critic"] == {"steps": K}
    assert "chunk_critic.onnx" in policy["sha256"]
    model = onnx.load(os.path.join(path, "chunk_critic.onnx"))
    assert [i.name for i in model.graph.input] == ["obs", "chunk"]
    vec = json.load(open(os.path.join(path, "test_vectors.json")))["chunk_critic"]
    with torch.no_grad():
        want = net(torch.tensor(json.load(open(os.path.join(path, "test_vectors.json")))["obs"]), torch.tensor(vec["chunk"])).T
    assert np.allclose(np.array(vec["q"]), want.numpy(), atol=1e-5)


class _FlipFirst:
    """A stand-in for mirror.Mirror: negates observation 1 and action 1 (normalised)."""

    def obs(self, o):
        o = np.array(o, np.float32, copy=True)
        o[..., 1] *= -1
        return o

    def action(self, a):
        a = np.array(a, np.float32, copy=True)
        a[..., 1] *= -1
        return a


def test_mirrored_stream_adds_reflected_windows_of_the_chunk_the_robot_ran():
    cfg = ResidualTD3Config(chunk_critic=True, learning_starts=1, critic_hidden=16, actor_hidden=16,
                 critic_heads=3, batch_size=16)
    agent = ResidualTD3(cfg, OBS, ACT)
    agent.enable_chunk_critic(K, _FlipFirst())
    r = steps(list(range(10)), list(range(10)), reward=[0] * 9 + [1], terminated=[0] * 9 + [1])
    r["obs"][:, 1] = 0.5
    r["base_action"][:, 1] = 0.25
    agent.add(r)
    w = agent.chunk.windows
    assert len(w) == 6  # windows at steps 0, 4, 8 for the robot and again for its mirror image
    real = [i for i in range(6) if w.obs[i, 1] > 0]
    mir = [i for i in range(6) if w.obs[i, 1] < 0]
    assert len(real) == len(mir) == 3
    for a, b in zip(real, mir):
        assert w.obs[a, 0] == w.obs[b, 0] and w.ret[a] == pytest.approx(w.ret[b]) and w.terminal[a] == w.terminal[b]
        assert np.allclose(w.chunk[b].reshape(K, ACT)[:, 1], -w.chunk[a].reshape(K, ACT)[:, 1])
        assert np.allclose(w.chunk[b].reshape(K, ACT)[:, 0], w.chunk[a].reshape(K, ACT)[:, 0])
    # each stream's windows link to their own next window
    assert all(w.next[i] in real for i in real if w.next[i] >= 0) and all(w.next[i] in mir for i in mir if w.next[i] >= 0)
    assert sorted(w.trainable().tolist()) == sorted(real + mir)
