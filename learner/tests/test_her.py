"""Hindsight goal relabelling for the residual learner (rlft_learner/buffers/her.py)."""

import json
import os

import numpy as np
import pytest
import torch

from rlft_learner.buffers.her import HER_ROBOT, HindsightRelabeler, base_actions, load_base_sampler
from rlft_learner.buffers.replay import FIELDS
from rlft_learner.algorithms.residual_td3.agent import BasePackage, ResidualTD3
from rlft_learner.algorithms.residual_td3.config import ResidualTD3Config
from rlft_learner.commands.serve import load_checkpoint, save_checkpoint
from rlft_learner.commands.serve_config import load_config

NAMES = ["q0", "cube.x", "cube.y", "target.x", "target.y"]
MEAN = np.array([0.0, 0.4, 0.0, 0.5, 0.1], np.float32)
STD = np.array([1.0, 0.1, 0.2, 0.1, 0.2], np.float32)


def write_base(path):
    """A tiny diffusion base package over NAMES (random weights) with a non-trivial normalisation."""
    from rlft_learner.algorithms.bc.diffusion import ModelConfig, NoisePredictionNet, ddim_timesteps, squared_cosine_alphas_cumprod

    os.makedirs(path, exist_ok=True)
    policy = {"format": "rlft-policy", "format_version": 1, "kind": "diffusion", "version": "bc-push-20261201T000000Z-abcdef",
              "provenance": {"task": "push_cube"},
              "observation": {"names": NAMES, "history": 2, "mean": MEAN.tolist(), "std": STD.tolist()},
              "action": {"names": ["a0", "a1"], "horizon": 8, "execute_steps": 4, "min": [-1.0, -1.0], "max": [1.0, 1.0]}}
    with open(os.path.join(path, "policy.json"), "w") as f:
        json.dump(policy, f)
    mcfg = ModelConfig(obs_dim=len(NAMES), action_dim=2, history=2, horizon=8, hidden=16, blocks=1)
    torch.save({"state_dict": NoisePredictionNet(mcfg).state_dict(), "config": mcfg.to_dict(),
                "alphas_cumprod": torch.from_numpy(squared_cosine_alphas_cumprod(100).astype(np.float32)),
                "timesteps": ddim_timesteps(100, 10)}, os.path.join(path, "model.pt"))
    return BasePackage.load(str(path))


def episode(base, length=20, robot=0, first_seq=0, dx=0.01, success=False):
    """One push episode as the learner receives it: the cube moves dx along x per step, the target sits far away."""
    raw = np.zeros((length + 1, len(NAMES)), np.float32)
    raw[:, 1] = 0.3 + dx * np.arange(length + 1)
    raw[:, 3:5] = [0.7, 0.3]
    obs = base.norm_obs(raw)
    rng = np.random.default_rng(robot)
    end = np.zeros(length, np.float32)
    end[-1] = 1
    return {"obs": obs[:-1], "next_obs": obs[1:], "base_action": rng.uniform(-1, 1, (length, 2)).astype(np.float32),
            "action": rng.uniform(-1, 1, (length, 2)).astype(np.float32),
            "next_base_action": np.zeros((length, 2), np.float32), "reward": end * success,
            "terminated": end * success, "truncated": end * (not success), "intervention": np.zeros(length, np.float32),
            "robot": np.full(length, robot, np.int64), "seq": np.arange(first_seq, first_seq + length, dtype=np.int64),
            "step": np.arange(length, dtype=np.int64)}


def relabeler(base, k=3, noise_scale=1.0):
    return HindsightRelabeler(base, ["target.x", "target.y"], ["cube.x", "cube.y"], radius=0.035, goals_per_episode=k,
                              min_move=0.035, noise_scale=noise_scale, seed=0)


def cut(rows, sl):
    return {k: v[sl] for k, v in rows.items()}


def test_a_missed_episode_becomes_successes_for_where_the_cube_went(tmp_path):
    base = write_base(tmp_path / "base")
    her = relabeler(base, k=3, noise_scale=0.0)
    ep = episode(base)
    out = her.add(ep)
    assert out is not None and set(out) == set(FIELDS) - {"next"}
    raw_goal = out["obs"][:, 3:5] * STD[3:5] + MEAN[3:5]
    raw_cube_next = out["next_obs"][:, 1:3] * STD[1:3] + MEAN[1:3]
    ends = np.flatnonzero(out["terminated"])
    assert len(ends) == 3 and (out["reward"] == out["terminated"]).all() and not out["truncated"].any()
    starts = np.concatenate([[0], ends[:-1] + 1])
    goals = set()
    for s, e in zip(starts, ends):
        g = raw_goal[s]
        np.testing.assert_allclose(raw_goal[s:e + 1], np.repeat(g[None], e - s + 1, 0), atol=1e-6)  # one goal per copy
        np.testing.assert_allclose(out["next_obs"][s:e + 1, 3:5], out["obs"][s:e + 1, 3:5])
        # The copy ends at the first step whose next cube position is within the radius of its goal, not later.
        d = np.linalg.norm(raw_cube_next[s:e + 1] - g, axis=-1)
        assert d[-1] < 0.035 and (d[:-1] >= 0.035).all()
        assert np.linalg.norm(g - [0.3, 0.0]) >= 0.035  # the cube had moved at least min_move there
        np.testing.assert_allclose(out["action"][s:e + 1], ep["action"][:e - s + 1])  # what the robot did is kept
        goals.add(tuple(np.round(g, 4)))
        # Base actions are re-planned for the relabelled goal: a zero-noise sampler on the relabelled obs history.
        sampler, mcfg = load_base_sampler(base.path)
        want = base_actions(sampler, mcfg, out["obs"][None, s:e + 1], 4, 0.0, torch.Generator())[0]
        np.testing.assert_allclose(out["base_action"][s:e + 1], want, atol=1e-5)
        np.testing.assert_allclose(out["next_base_action"][s:e], want[1:], atol=1e-5)
        assert not np.allclose(out["base_action"][s:e + 1], ep["base_action"][:e - s + 1])
    assert len(goals) == 3
    assert (out["robot"] == HER_ROBOT).all() and (np.diff(out["seq"]) == 1).all()
    # In a buffer, a copy's steps chain for n-step returns and copies do not chain into each other.
    agent = ResidualTD3(ResidualTD3Config(critic_heads=2, critic_hidden=16, actor_hidden=16, her_goal="target.x,target.y"), 5, 2)
    agent.add_her(out)
    n = agent.her.nstep(np.array([ends[0] - 1, ends[0]]), 3, 0.9)
    assert n["ret"][0] == pytest.approx(0.9) and n["discount"][0] == 0 and n["ret"][1] == 1 and n["discount"][1] == 0


def test_relabelled_copies_leave_out_the_robots_zlib_streams(tmp_path):
    """Rows of frames that came zlib-compressed carry the robot's streams (frames.py); copies carry no streams."""
    base = write_base(tmp_path / "base")
    ep = episode(base)
    streams = np.empty(len(ep["seq"]), dtype=object)
    streams[:] = [b"x\x01" + bytes([i]) + b"\x00\x00" for i in range(len(streams))]  # ends in NULs, as streams can
    out = relabeler(base, k=2).add({**ep, "zlib.image.front": streams})
    assert out is not None and not any(k.startswith("zlib.") for k in out)


def test_streamed_interleaved_robots_are_relabelled_per_episode_and_partial_episodes_are_not(tmp_path):
    base = write_base(tmp_path / "base")
    her = relabeler(base, k=2)
    a, b = episode(base, robot=0), episode(base, robot=1, first_seq=100, success=True)
    assert her.add(cut(a, slice(0, 7))) is None
    assert her.add(cut(b, slice(0, 12))) is None
    out = her.add({k: np.concatenate([a[k][7:], b[k][12:]]) for k in a})  # both episodes end in this message
    assert out is not None and int(out["terminated"].sum()) == 4 and her.episodes == 2
    # Joined mid-episode (e.g. a learner restarted mid-episode): nothing until the next episode starts at step 0.
    assert her.add(cut(episode(base, robot=2), slice(5, 20))) is None
    # A gap in seq inside an episode: not relabelled.
    c = episode(base, robot=3)
    c["seq"][10:] += 1
    assert her.add(c) is None
    # A cube that never moved gives no goal.
    assert her.add(episode(base, robot=4, dx=0.0)) is None


def test_batches_draw_her_fraction_of_the_online_share_and_checkpoints_keep_them(tmp_path):
    base = write_base(tmp_path / "base")
    cfg = load_config(overrides={"base_package": base.path, "her_goal": "target.x,target.y", "her_achieved": "cube.x,cube.y",
                                 "her_radius": 0.035, "her_fraction": 0.5, "batch_size": 8, "critic_heads": 2,
                                 "critic_hidden": 16, "actor_hidden": 16, "critic_warmup_updates": 0})
    agent = ResidualTD3(cfg, 5, 2)
    her = relabeler(base, k=3)
    for r in range(4):
        ep = episode(base, robot=r, first_seq=0)
        agent.add({k: v for k, v in ep.items() if k != "step"})
        agent.add_her(her.add(ep))
    b = agent.sample()
    assert b.obs.shape == (8, 5) and agent.data.n_off == 0
    # Rows 2..3 of 4 online rows are relabelled: their goal is the cube's path, not the episode's target (0.7, 0.3).
    goal_x = b.obs[:, 3] * STD[3] + MEAN[3]
    assert (goal_x[:4] - 0.7).abs().max() < 1e-5 and (goal_x[4:] - 0.7).abs().min() > 0.1
    agent.update()
    save_checkpoint(str(tmp_path / "run"), agent, {"base_version": base.version})
    again = ResidualTD3(cfg, 5, 2)
    load_checkpoint(str(tmp_path / "run"), again)
    assert len(again.her) == len(agent.her) > 0
    fresh = relabeler(base)
    fresh.resume(again.her)
    assert fresh._seq == int(agent.her.data["seq"][: len(agent.her)].max()) + 1  # copies after a restart do not reuse seqs
    np.testing.assert_array_equal(again.her.data["obs"][: len(agent.her)], agent.her.data["obs"][: len(agent.her)])


def test_her_config_errors_name_the_key_and_the_fix(tmp_path):
    base = write_base(tmp_path / "base")
    with pytest.raises(ValueError, match="her_radius must be > 0"):
        load_config(overrides={"her_goal": "target.x,target.y", "her_achieved": "cube.x,cube.y"})
    with pytest.raises(ValueError, match="her_goal relabels goals for the residual learner"):
        load_config(overrides={"her_goal": "target.x", "her_radius": 0.03, "algorithm": "rlpd_sac"})
    with pytest.raises(ValueError, match=r"name observations \['goal.x'\]"):
        HindsightRelabeler(base, ["goal.x"], ["cube.x"], 0.035, 4, 0.035, 1.0, 0)
    with pytest.raises(ValueError, match="same number"):
        HindsightRelabeler(base, ["target.x", "target.y"], ["cube.x"], 0.035, 4, 0.035, 1.0, 0)
