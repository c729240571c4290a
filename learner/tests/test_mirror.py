"""Mirror-symmetry augmentation for the residual learner (rlft_learner/buffers/mirror.py)."""

import numpy as np
import pytest
import torch

from rlft_learner.buffers.her import HER_ROBOT, HindsightRelabeler, base_actions, load_base_sampler
from rlft_learner.buffers.mirror import MIRROR_ROBOT, Mirror, MirrorRelabeler
from rlft_learner.algorithms.residual_td3.agent import ResidualTD3
from rlft_learner.algorithms.residual_td3.config import ResidualTD3Config
from rlft_learner.commands.serve_config import load_config

from test_her import MEAN, NAMES, STD, episode, write_base


def test_reflection_negates_the_named_physical_values_and_is_its_own_inverse(tmp_path):
    base = write_base(tmp_path / "base")
    base.act_min, base.act_max = np.array([-0.8, -1.0], np.float32), np.array([1.0, 1.0], np.float32)
    m = Mirror(base, ["cube.y", "target.y"], ["a0"])
    raw = np.array([[0.3, 0.35, 0.05, 0.5, -0.12]], np.float32)
    out = m.obs(base.norm_obs(raw)) * STD + MEAN
    np.testing.assert_allclose(out, [[0.3, 0.35, -0.05, 0.5, 0.12]], atol=1e-6)
    np.testing.assert_allclose(m.obs(m.obs(base.norm_obs(raw))), base.norm_obs(raw), atol=1e-6)
    a = base.norm_action(np.array([[0.5, 0.3], [0.9, -0.2]], np.float32))
    back = (m.action(a) + 1) / 2 * (base.act_max - base.act_min) + base.act_min
    # a0 = 0.5 -> -0.5 (inside [-0.8, 1]); a0 = 0.9 -> -0.9 is clipped to -0.8, as the robot would; a1 untouched.
    np.testing.assert_allclose(back, [[-0.5, 0.3], [-0.8, -0.2]], atol=1e-6)
    with pytest.raises(ValueError, match="unknown \\['cube.z'\\].*observations are"):
        Mirror(base, ["cube.z"], [])
    with pytest.raises(ValueError, match="mirror_obs is a residual_td3 option"):
        load_config(overrides={"mirror_obs": "cube.y", "algorithm": "rlpd_sac"})


def test_a_finished_episode_gets_a_mirrored_copy_with_the_base_re_run(tmp_path):
    base = write_base(tmp_path / "base")
    m = Mirror(base, ["cube.y", "target.y"], ["a1"])
    rel = MirrorRelabeler(base, m, noise_scale=0.0, seed=0)
    ep = episode(base, length=10)
    ep["obs"][:, 2] = np.linspace(-1, 1, 10)  # the cube drifts across y
    assert rel.add({k: v[:6] for k, v in ep.items()}) is None  # an episode streamed in two messages
    out = rel.add({k: v[6:] for k, v in ep.items()})
    assert out is not None and len(out["seq"]) == 10
    np.testing.assert_allclose(out["obs"], m.obs(ep["obs"]), atol=1e-6)
    np.testing.assert_allclose(out["next_obs"], m.obs(ep["next_obs"]), atol=1e-6)
    np.testing.assert_allclose(out["action"][:, 0], ep["action"][:, 0])
    np.testing.assert_allclose(out["action"][:, 1], -ep["action"][:, 1], atol=1e-6)
    for k in ("reward", "terminated", "truncated", "intervention"):
        np.testing.assert_array_equal(out[k], ep[k])
    # Base actions: the zero-noise sampler on the mirrored history, one step further for the truncated last step.
    sampler, mcfg = load_base_sampler(base.path)
    want = base_actions(sampler, mcfg, np.concatenate([out["obs"], out["next_obs"][-1:]])[None], 4, 0.0, torch.Generator())[0]
    np.testing.assert_allclose(out["base_action"], want[:10], atol=1e-5)
    np.testing.assert_allclose(out["next_base_action"], want[1:], atol=1e-5)
    assert (out["robot"] == MIRROR_ROBOT).all() and (np.diff(out["seq"]) == 1).all()

    # With hindsight relabelling on too, both copy kinds share the buffer under their own pseudo-robots, and after a
    # restore each continues its own seq.
    agent = ResidualTD3(ResidualTD3Config(critic_heads=2, critic_hidden=16, actor_hidden=16, batch_size=8, mirror_obs="cube.y"), 5, 2)
    her = HindsightRelabeler(base, ["target.x", "target.y"], ["cube.x", "cube.y"], 0.035, 2, 0.035, 0.0, 0)
    agent.add_her(out)
    agent.add_her(her.add(episode(base, length=20)))
    fresh_m, fresh_h = MirrorRelabeler(base, m, 0.0, 0), HindsightRelabeler(base, ["target.x", "target.y"], ["cube.x", "cube.y"], 0.035, 2, 0.035, 0.0, 0)
    fresh_m.resume(agent.her)
    fresh_h.resume(agent.her)
    robots = agent.her.data["robot"][: len(agent.her)]
    seqs = agent.her.data["seq"][: len(agent.her)]
    assert fresh_m._seq == seqs[robots == MIRROR_ROBOT].max() + 1 == 10
    assert fresh_h._seq == seqs[robots == HER_ROBOT].max() + 1
    batch = agent.her.nstep(np.arange(len(agent.her)), 3, 0.99)
    assert np.isfinite(batch["ret"]).all()


def test_the_learner_gives_the_chunk_critic_the_task_mirror(tmp_path):
    from rlft_learner.commands.serve import Learner
    from test_server import free_port
    base = write_base(tmp_path / "base")
    for name, mirror in (("m", "cube.y,target.y"), ("plain", "")):
        cfg = load_config(overrides={"base_package": base.path, "run_dir": str(tmp_path / name), "chunk_critic": True,
                                     "mirror_obs": mirror, "critic_hidden": 16, "actor_hidden": 16,
                                     "experience_bind": f"tcp://127.0.0.1:{free_port()}",
                                     "policy_bind": f"tcp://127.0.0.1:{free_port()}"})
        learner = Learner(cfg, out=lambda line: None)
        try:
            assert learner.agent.chunk is not None
            assert learner.agent.chunk_mirror is learner.mirror and (learner.mirror is None) == (not mirror)
        finally:
            learner.close()
