"""RECAP (docs/algorithms.md §3): returns, advantages and indicators against hand-computed small episodes,
intervention-forced positives, indicator dropout, classifier-free guidance, value calibration, and one tiny iteration."""

import json
import os

import numpy as np
import pytest
import torch

from rlft_learner.data import save_npz, synthetic_dataset
from rlft_learner.algorithms.bc.diffusion import (POSITIVE, UNCONDITIONED, DDIMSampler, ModelConfig, NoisePredictionNet, cfg_combine,
                                    ddim_timesteps, squared_cosine_alphas_cumprod)
from rlft_learner.export.package import PackageMeta, export_package
from rlft_learner.data import Normalizer
from rlft_learner.algorithms.recap.train import (Config, drop_indicators, finetune_policy, forced_positive, indicators, init_from_pretrained, load_pretrained,
                                 nstep_advantages, run, widen_action_range)
from rlft_learner.algorithms.recap.value import (ReturnSpec, ValueConfig, ValueNet, calibration, episode_rewards, normalised_returns,
                                      predict, return_bins, train_value)
from rlft_learner.data import Dataset, Episode
from rlft_learner.algorithms.bc.train import Config as BcConfig, train


def test_rewards_and_normalised_returns_by_hand():
    # Success after 4 steps: r = [-1, -1, -1, 0]; G = [-3, -2, -1, 0]; T_max = 10.
    r = episode_rewards(4, True, c_fail=10)
    assert r.tolist() == [-1, -1, -1, 0]
    assert normalised_returns(r, 10).tolist() == pytest.approx([-0.3, -0.2, -0.1, 0.0])
    # Failure after 3 steps with C_fail = 5: r = [-1, -1, -5]; G = [-7, -6, -5] / 10.
    r = episode_rewards(3, False, c_fail=5)
    assert r.tolist() == [-1, -1, -5]
    assert normalised_returns(r, 10).tolist() == pytest.approx([-0.7, -0.6, -0.5])
    # Clipped at -1: a failure worth more than T_max steps.
    assert normalised_returns(episode_rewards(3, False, c_fail=20), 10).tolist() == pytest.approx([-1, -1, -1])


def test_return_spec_per_task():
    eps = [Episode(obs=np.zeros((n, 2), np.float32), action=np.zeros((n, 1), np.float32), reward=np.zeros(n, np.float32), task=t)
           for n, t in ((5, "a"), (8, "a"), (3, "b"))]
    spec = ReturnSpec.for_episodes(eps)
    assert spec.max_steps == {"a": 8, "b": 3} and spec.c_fail == {"a": 8.0, "b": 3.0}
    spec = ReturnSpec.for_episodes(eps, "a=20,b=10", c_fail=4)
    assert spec.max_steps == {"a": 20, "b": 10} and spec.c_fail == {"a": 4.0, "b": 4.0}
    assert ReturnSpec.for_episodes(eps, "50").max_steps == {"a": 50, "b": 50}


def test_nstep_advantages_by_hand():
    r = np.array([-0.1, -0.1, -0.1, 0.0])
    v = np.array([-0.5, -0.2, -0.1, 0.0])
    # N = 2: A_0 = r0 + r1 + V2 - V0 = -0.2 - 0.1 + 0.5 = 0.2; A_1 = r1 + r2 + V3 - V1 = -0.2 + 0 + 0.2 = 0.0;
    # A_2 = r2 + r3 (end, no bootstrap) - V2 = -0.1 + 0.1 = 0; A_3 = r3 - V3 = 0.
    assert nstep_advantages(r, v, 2).tolist() == pytest.approx([0.2, 0.0, 0.0, 0.0])
    # N = 1: A_t = r_t + V_{t+1} - V_t.
    assert nstep_advantages(r, v, 1).tolist() == pytest.approx([0.2, 0.0, 0.0, 0.0])
    v2 = np.array([-0.3, -0.3, -0.3, -0.3])
    assert nstep_advantages(r, v2, 1).tolist() == pytest.approx([-0.1, -0.1, -0.1, 0.3])  # A_3 = r3 + 0 (end) - V3
    # Monte-Carlo (N = 0): A_t = G_t - V_t with G = [-0.3, -0.2, -0.1, 0].
    assert nstep_advantages(r, v2, 0).tolist() == pytest.approx([0.0, 0.1, 0.2, 0.3])
    # N longer than the episode is Monte-Carlo too.
    assert nstep_advantages(r, v2, 99).tolist() == pytest.approx(nstep_advantages(r, v2, 0).tolist())


def test_indicator_threshold_is_a_per_task_percentile_and_interventions_are_positive():
    adv = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, -5.0, -4.0])
    inter = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1])
    tasks = np.array(["a"] * 12)
    ind, eps = indicators(adv, inter, tasks, positive_fraction=0.3)
    # The 70th percentile of 0..9 (the non-intervention steps) is 6.3: 7, 8, 9 are positive (30%).
    assert eps == {"a": pytest.approx(6.3)}
    assert ind.tolist() == [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    # Two tasks get their own thresholds.
    adv2 = np.concatenate([np.arange(10.0), 100 + np.arange(10.0)])
    ind2, eps2 = indicators(adv2, np.zeros(20), np.array(["a"] * 10 + ["b"] * 10), 0.3)
    assert eps2["a"] == pytest.approx(6.3) and eps2["b"] == pytest.approx(106.3)
    assert ind2[:10].sum() == 3 and ind2[10:].sum() == 3
    with pytest.raises(ValueError, match="positive_fraction"):
        indicators(adv, inter, tasks, 1.0)


def test_indicator_dropout_replaces_about_p_with_unconditioned():
    ind = torch.ones(20000, dtype=torch.int64)
    out = drop_indicators(ind, 0.3, torch.Generator().manual_seed(0))
    frac = (out == UNCONDITIONED).float().mean().item()
    assert 0.28 < frac < 0.32
    assert set(out.unique().tolist()) == {POSITIVE, UNCONDITIONED}
    assert (drop_indicators(ind, 0.0, torch.Generator()) == ind).all()


def test_cfg_combination_and_beta_one_is_one_pass():
    eps_c, eps_u = torch.tensor([1.0, -2.0, 0.5]), torch.tensor([0.0, 1.0, 0.5])
    assert cfg_combine(eps_c, eps_u, 1.0).tolist() == eps_c.tolist()
    assert cfg_combine(eps_c, eps_u, 2.0).tolist() == pytest.approx([2.0, -5.0, 0.5])
    assert cfg_combine(eps_c, eps_u, 0.0).tolist() == eps_u.tolist()
    torch.manual_seed(0)
    net = NoisePredictionNet(ModelConfig(obs_dim=3, action_dim=2, horizon=4, hidden=16, blocks=1, indicator=1)).eval()
    torch.nn.init.normal_(net.indicator_emb.weight)
    ac, ts = squared_cosine_alphas_cumprod(100), ddim_timesteps(100, 5)
    obs, noise = torch.randn(2, 6), torch.randn(2, 4, 2)
    pos = torch.full((2,), POSITIVE, dtype=torch.int64)
    with torch.no_grad():
        one = DDIMSampler(net, ac, ts, cfg_beta=1.0)(obs, noise, pos)
        guided = DDIMSampler(net, ac, ts, cfg_beta=2.0)(obs, noise, pos)
        # The guided sampler equals the DDIM loop run by hand with the combined eps.
        x = noise
        s = DDIMSampler(net, ac, ts)
        for t, a_t, a_prev in s.steps:
            tt = torch.full((2,), t, dtype=torch.int64)
            e = cfg_combine(net(obs, x, tt, pos), net(obs, x, tt, torch.full_like(pos, UNCONDITIONED)), 2.0)
            x0 = ((x - (1 - a_t) ** 0.5 * e) / a_t ** 0.5).clamp(-1, 1)
            x = a_prev ** 0.5 * x0 + (1 - a_prev) ** 0.5 * e
    assert torch.allclose(guided, x.clamp(-1, 1), atol=1e-6)
    assert not torch.allclose(one, guided)
    with pytest.raises(ValueError, match="indicator"):
        DDIMSampler(NoisePredictionNet(ModelConfig(obs_dim=3, action_dim=2)), ac, ts, cfg_beta=2.0)


def test_zero_initialised_indicator_starts_as_the_pretrained_network():
    torch.manual_seed(1)
    plain = NoisePredictionNet(ModelConfig(obs_dim=3, action_dim=2, horizon=4, hidden=16, blocks=1)).eval()
    cond = NoisePredictionNet(ModelConfig(obs_dim=3, action_dim=2, horizon=4, hidden=16, blocks=1, indicator=1)).eval()
    missing, unexpected = cond.load_state_dict(plain.state_dict(), strict=False)
    assert missing == ["indicator_emb.weight"] and unexpected == []
    obs, x, t = torch.randn(3, 6), torch.randn(3, 4, 2), torch.tensor([5, 50, 90])
    for i in (0, 1, 2):
        assert torch.allclose(cond(obs, x, t, torch.full((3,), i)), plain(obs, x, t), atol=1e-6)


def test_fine_tuned_policy_follows_the_indicator():
    # Same observations, opposite actions: positive samples act +0.6, negative ones -0.6. A short fine-tune from a
    # network that knew neither must make the sampled action follow the indicator (a weak, zero-initialised embedding
    # trained at the network's lr did not: RECAP then was plain BC with a little noise).
    torch.manual_seed(0)
    n, obs_dim = 512, 3
    obs = np.random.default_rng(0).normal(size=(n, obs_dim)).astype(np.float32)
    ind = (np.arange(n) % 2).astype(np.int64)  # 0 negative, 1 positive
    act = np.where(ind[:, None, None] == 1, 0.6, -0.6).astype(np.float32) * np.ones((n, 4, 1), np.float32)
    net = NoisePredictionNet(ModelConfig(obs_dim=obs_dim, action_dim=1, history=1, horizon=4, hidden=32, blocks=1, indicator=1))
    ac = squared_cosine_alphas_cumprod(100)
    cfg = Config(steps=300, batch_size=64, warmup_steps=10, log_every=1000, indicator_dropout=0.3, device="cpu")
    net, _, _ = finetune_policy(cfg, net, obs, act, ind, ac, torch.device("cpu"), lambda m: None)
    sampler = DDIMSampler(net, ac, ddim_timesteps(100, 10))
    o, noise = torch.from_numpy(obs[:64]), torch.randn(64, 4, 1)
    with torch.no_grad():
        pos = sampler(o, noise, torch.full((64,), POSITIVE)).mean().item()
        neg = sampler(o, noise, torch.full((64,), 0)).mean().item()
    assert pos > 0.3 and neg < -0.3, (pos, neg)


def test_value_function_learns_returns_and_calibration_basics():
    # Observation = the normalised return itself (plus noise dims): a good V predicts it closely.
    rng = np.random.default_rng(0)
    g = -rng.uniform(0, 1, 4000).astype(np.float32)
    obs = np.stack([g * 3, rng.normal(size=4000)], 1).astype(np.float32)
    net, losses = train_value(obs, g, ValueConfig(bins=21, hidden=64, steps=400, lr=3e-3), torch.device("cpu"))
    assert np.mean(losses[-50:]) < np.mean(losses[:20])
    v = predict(net, obs, torch.device("cpu"))
    assert v.shape == (4000,) and (v >= -1).all() and (v <= 0).all()
    cal = calibration(v, g)
    assert cal["ece"] < 0.05 and cal["corr"] > 0.97 and sum(b["count"] for b in cal["bins"]) == 4000
    # Calibration by hand: a predictor that is always 0.2 too optimistic has ECE 0.2 and perfect correlation.
    actual = np.linspace(-1, -0.3, 50)
    cal2 = calibration(actual + 0.2, actual)
    assert cal2["ece"] == pytest.approx(0.2) and cal2["mae"] == pytest.approx(0.2) and cal2["corr"] == pytest.approx(1.0)
    # Bins: nearest centre on [-1, 0].
    assert return_bins(torch.tensor([-1.0, -0.5, 0.0, -0.26]), 5).tolist() == [0, 2, 4, 3]
    vnet = ValueNet(2, bins=5, hidden=8, layers=1)
    val, probs = vnet(torch.zeros(1, 2))
    assert probs.shape == (1, 5) and torch.allclose(probs.sum(-1), torch.ones(1)) and -1 <= val.item() <= 0


def test_forced_positives_follow_the_intervention_mode():
    ep = lambda success: Episode(obs=np.zeros((4, 1), np.float32), action=np.zeros((4, 1), np.float32), reward=np.zeros(4, np.float32),
                                 success=success, intervention=np.array([0, 1, 1, 0], np.float32))
    eps = [ep(True), ep(False)]
    assert forced_positive(eps, "always").tolist() == [0, 1, 1, 0, 0, 1, 1, 0]
    assert forced_positive(eps, "success").tolist() == [0, 1, 1, 0, 0, 0, 0, 0]
    assert forced_positive(eps, "none").tolist() == [0] * 8
    with pytest.raises(ValueError, match="intervention_positive"):
        forced_positive(eps, "sometimes")
    # Unforced operator steps are labelled by their advantage, but never move the threshold (autonomous steps only).
    adv = np.array([0, 5, -5, 1, 2, 3, 4, 9], np.float32)
    inter = np.array([0, 1, 1, 0, 0, 1, 1, 0], np.float32)
    ind, eps_t = indicators(adv, inter, np.array(["a"] * 8), 0.5, forced=np.array([0, 1, 1, 0, 0, 0, 0, 0]))
    assert eps_t["a"] == pytest.approx(1.5)  # median of the autonomous 0, 1, 2, 9
    assert ind.tolist() == [0, 1, 1, 0, 1, 1, 1, 1]


def test_fine_tune_widens_the_action_range_instead_of_clipping_operator_actions():
    norm = Normalizer(obs_mean=np.zeros(1, np.float32), obs_std=np.ones(1, np.float32),
                      act_min=np.array([-1.0, 0.0], np.float32), act_max=np.array([1.0, 2.0], np.float32))
    eps = [Episode(obs=np.zeros((2, 1), np.float32), action=np.array([[0.5, 2.5], [-1.5, 1.0]], np.float32), reward=np.zeros(2, np.float32))]
    wide = widen_action_range(norm, eps)
    assert wide.act_min.tolist() == [-1.5, 0.0] and wide.act_max.tolist() == [1.0, 2.5]
    assert wide.obs_mean is norm.obs_mean and wide.obs_std is norm.obs_std
    # The operator's 2.5 (past the demos' 2.0) stays distinguishable from 2.0 after normalisation.
    a = wide.action(np.array([[1.0, 2.0], [1.0, 2.5]], np.float32))
    assert a[1, 1] == pytest.approx(1.0) and a[0, 1] < 1.0
    assert np.allclose(wide.unaction(a), [[1.0, 2.0], [1.0, 2.5]])


def _mixed_dataset(obs_dim: int, action_dim: int) -> Dataset:
    data = synthetic_dataset(episodes=6, steps=30, obs_dim=obs_dim, action_dim=action_dim, seed=4)
    for i, ep in enumerate(data.episodes):
        ep.success = i % 3 != 2
        ep.intervention = np.zeros(len(ep.obs), np.float32)
        if i == 1:
            ep.intervention[5:12] = 1
        ep.source = "scripted_expert" if i < 2 else "recap_collect"
    return data


def test_one_iteration_end_to_end(tmp_path):
    data = synthetic_dataset(episodes=4, steps=30, obs_dim=5, action_dim=2, seed=2)
    trained = train(BcConfig(steps=30, batch_size=32, hidden=32, blocks=1, warmup_steps=5, log_every=30, device="cpu", horizon=8), data)
    net, norm = trained.net, trained.norm
    pre_dir = str(tmp_path / "pre")
    export_package(net, squared_cosine_alphas_cumprod(100), ddim_timesteps(100, 10), norm,
                   PackageMeta(task=data.task, obs_names=data.obs_names, action_names=data.action_names, episodes=4), pre_dir)
    npz = str(tmp_path / "all.npz")
    save_npz(npz, _mixed_dataset(5, 2))
    cfg = Config(dataset=npz, pretrained=pre_dir, out=str(tmp_path / "it1"), steps=30, value_steps=30, value_bins=11, value_hidden=16,
                 batch_size=32, warmup_steps=5, log_every=10, device="cpu", n_step=5, cfg_beta=1.5)
    done = run(cfg)
    stats = json.load(open(done["stats"]))
    assert stats["episodes"] == 6 and stats["intervention_steps"] == 7 and stats["successes"] == 4
    assert stats["positive_fraction_autonomous"] == pytest.approx(0.3, abs=0.02)
    assert stats["positive_fraction"] > stats["positive_fraction_autonomous"]  # interventions are forced positive
    assert stats["sources"] == {"recap_collect": 4, "scripted_expert": 2}
    assert stats["value"]["calibration"]["samples"] == 180
    policy = json.load(open(os.path.join(done["package"], "policy.json")))
    adv = policy["advantage"]
    assert adv["input"] == "indicator" and adv["cfg_beta"] == 1.5 and adv["values"] == {"negative": 0, "positive": 1, "unconditioned": 2}
    assert adv["n_step"] == 5 and policy["files"]["value"] == "value.onnx" and policy["version"].startswith("recap-")
    assert {"value.onnx", "value.pt", "sampler.onnx"} <= set(policy["sha256"])
    # The action range covers every action of the data (the pre-trained one only covered its demos).
    acts = np.concatenate([e.action for e in _mixed_dataset(5, 2).episodes])
    assert stats["action_range"]["steps_outside_pretrained"] > 0
    assert (np.array(policy["action"]["min"]) <= acts.min(0) + 1e-6).all() and (np.array(policy["action"]["max"]) >= acts.max(0) - 1e-6).all()
    # The observation normalisation is the pre-trained package's (the weights were trained with it).
    assert policy["observation"]["mean"] == json.load(open(os.path.join(pre_dir, "policy.json")))["observation"]["mean"]
    # The fine-tuned package can itself be a starting point, and a plain run exports no indicator.
    pre = load_pretrained(done["package"])
    assert pre.config.indicator == 1 and init_from_pretrained(pre, indicator=True).cfg.indicator == 1
    plain = run(Config(**{**cfg.__dict__, "plain": True, "out": str(tmp_path / "plain")}))
    pj = json.load(open(os.path.join(plain["package"], "policy.json")))
    assert "advantage" not in pj and "value" not in pj["files"] and pj["version"].startswith("bc-mixed-")


def _pixel_pretrained(tmp_path, data) -> str:
    from rlft_learner.algorithms.bc.train import run as run_bc

    npz = str(tmp_path / "demos.npz")
    save_npz(npz, data)
    run_bc(BcConfig(dataset=npz, out=str(tmp_path / "bc"), steps=20, batch_size=8, hidden=32, blocks=1, warmup_steps=2,
                    log_every=20, device="cpu", horizon=8, encoder_channels=8, encoder_features=8, keypoints=4))
    return str(tmp_path / "bc" / "package")


def test_one_iteration_from_pixels_value_reads_the_frames_and_onnx_agrees(tmp_path):
    """RECAP over a pre-trained policy that sees a camera: V reads [state, the pre-trained encoders' features], the
    fine-tune trains the encoders with the network, value.onnx takes the camera bytes, and onnxruntime agrees."""
    import onnxruntime as ort
    from rlft_learner.data import synthetic_pixel_dataset

    data = synthetic_pixel_dataset(episodes=6, steps=20, size=32, seed=3)
    pre_dir = _pixel_pretrained(tmp_path, data)
    for i, ep in enumerate(data.episodes):  # failures and an intervention beside the successes
        ep.success = i % 3 != 0
        ep.source = "recap_collect"
        if i == 1:
            ep.intervention = np.zeros(len(ep.obs), np.float32)
            ep.intervention[5:9] = 1
    npz = str(tmp_path / "all.npz")
    save_npz(npz, data)
    done = run(Config(dataset=npz, pretrained=pre_dir, out=str(tmp_path / "it1"), steps=20, value_steps=20, value_bins=11,
                      value_hidden=16, batch_size=16, warmup_steps=2, log_every=10, device="cpu", n_step=3))
    pkg = done["package"]
    policy = json.load(open(os.path.join(pkg, "policy.json")))
    assert policy["advantage"]["value"]["input"] == "obs+images" and json.load(open(done["stats"]))["intervention_steps"] == 4
    assert [i["camera"] for i in policy["observation"]["images"]] == ["front"]
    sampler = ort.InferenceSession(os.path.join(pkg, "sampler.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in sampler.get_inputs()] == ["obs", "image.front", "noise", "indicator"]
    value = ort.InferenceSession(os.path.join(pkg, "value.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in value.get_inputs()] == ["obs", "image.front"]
    vec = json.load(open(os.path.join(pkg, "test_vectors.json")))["value"]
    v, _ = value.run(None, {"obs": np.array(vec["obs"], np.float32), "image.front": np.array(vec["images"]["front"], np.uint8)})
    assert np.abs(v - np.array(vec["value"], np.float32)).max() <= 1e-5
    # The fine-tuned encoders are in the package (they trained with the network) and differ from the pre-trained ones.
    pre, fin = load_pretrained(pre_dir), load_pretrained(pkg)
    assert fin.encoders is not None and fin.config.indicator == 1
    diff = max((a - b).abs().max().item() for a, b in zip(pre.encoders.state_dict().values(), fin.encoders.state_dict().values())
               if a.dtype.is_floating_point)
    assert diff > 0
    # Episodes without the camera the package sees are refused, naming the camera and the fix.
    for ep in data.episodes:
        ep.images = {}
    save_npz(npz, data)
    with pytest.raises(ValueError, match="camera 'front' has no frames.*send the episodes with their frames"):
        run(Config(dataset=npz, pretrained=pre_dir, out=str(tmp_path / "it2"), steps=2, value_steps=2, device="cpu"))


def test_wrong_observation_names_are_refused(tmp_path):
    data = synthetic_dataset(episodes=2, steps=20, obs_dim=4, action_dim=2, seed=2)
    trained = train(BcConfig(steps=5, batch_size=16, hidden=16, blocks=1, warmup_steps=1, log_every=5, device="cpu"), data)
    net, norm = trained.net, trained.norm
    pre_dir = str(tmp_path / "pre")
    export_package(net, squared_cosine_alphas_cumprod(100), ddim_timesteps(100, 10), norm,
                   PackageMeta(task="t", obs_names=[f"x{i}" for i in range(4)], action_names=data.action_names, episodes=2), pre_dir)
    npz = str(tmp_path / "d.npz")
    save_npz(npz, data)
    with pytest.raises(ValueError, match="observation names"):
        run(Config(dataset=npz, pretrained=pre_dir, out=str(tmp_path / "o"), steps=2, value_steps=2, device="cpu"))


def test_positive_sources_force_successful_demonstrations_positive_and_out_of_the_percentile():
    from rlft_learner.algorithms.recap.train import demo_positive
    ep = lambda success, source: Episode(obs=np.zeros((3, 1), np.float32), action=np.zeros((3, 1), np.float32), reward=np.zeros(3, np.float32),
                                         success=success, source=source)
    eps = [ep(True, "scripted_expert"), ep(False, "scripted_expert"), ep(True, "recap_collect")]
    assert demo_positive(eps, "scripted_expert, teleop").tolist() == [1, 1, 1, 0, 0, 0, 0, 0, 0]
    assert demo_positive(eps, "").tolist() == [0] * 9
    adv = np.array([-9, -9, -9, 0, 1, 2, 3, 4, 5], np.float32)
    demo = demo_positive(eps, "scripted_expert")
    ind, eps_t = indicators(adv, demo, np.array(["a"] * 9), 0.5, forced=demo)
    assert eps_t["a"] == pytest.approx(2.5)  # median of the six non-demonstration steps
    assert ind.tolist() == [1, 1, 1, 0, 0, 0, 1, 1, 1]
