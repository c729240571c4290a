"""Behaviour cloning from camera frames + state (docs/algorithms.md §6): the encoder, DrQ's random shift, training
that actually uses the image, the exported package (uint8 image inputs) checked by onnxruntime, the .npz format."""

import json
import os

import numpy as np
import onnxruntime as ort
import pytest
import torch

from rlft_learner.data import load_npz, save_npz, synthetic_pixel_dataset
from rlft_learner.algorithms.bc.diffusion import DDIMSampler, PixelSampler, ddim_timesteps, squared_cosine_alphas_cumprod
from rlft_learner.algorithms.bc.train import Config, run, train
from rlft_learner.vision import CameraEncoders, EncoderConfig, SpatialSoftmax, random_shift


def test_random_shift_moves_the_image_by_at_most_pad_pixels_and_keeps_its_size():
    img = torch.zeros(8, 32, 32, 3, dtype=torch.uint8)
    img[:, 10:14, 20:24] = 255
    out = random_shift(img, pad=4, generator=torch.Generator().manual_seed(0))  # (B, 3, H, W)
    assert out.shape == (8, 3, 32, 32) and out.min() >= -1 and out.max() <= 1
    for b in range(8):
        ys, xs = torch.nonzero(out[b, 0] > 0, as_tuple=True)
        assert len(ys) == 16  # the 4x4 square is never cut (it is 10 px from the border)
        assert abs(int(ys.min()) - 10) <= 4 and abs(int(xs.min()) - 20) <= 4
    shifts = {tuple(torch.nonzero(out[b, 0] > 0)[0].tolist()) for b in range(8)}
    assert len(shifts) > 1  # per-sample offsets
    assert torch.equal(random_shift(img, pad=0), random_shift(img, pad=0))


def test_spatial_softmax_finds_the_hot_spot():
    maps = torch.full((1, 1, 9, 9), -20.0)
    maps[0, 0, 2, 6] = 20.0  # row 2, column 6 of 9 -> x = 0.5, y = -0.5 in [-1, 1]
    xy = SpatialSoftmax(9, 9)(maps)
    assert torch.allclose(xy, torch.tensor([[0.5, -0.5]]), atol=1e-4)


def test_encoders_take_uint8_frames_and_refuse_tiny_ones():
    enc = CameraEncoders(["front", "wrist"], EncoderConfig(height=48, width=64, channels=16, keypoints=8, features=12))
    out = enc(torch.zeros(2, 48, 64, 3, dtype=torch.uint8), torch.zeros(2, 48, 64, 3, dtype=torch.uint8))
    assert out.shape == (2, 24) and enc.out_dim == 24
    with pytest.raises(ValueError, match="too small"):
        CameraEncoders(["front"], EncoderConfig(height=16, width=16))


def _small(**kw) -> Config:
    base = dict(steps=400, batch_size=32, hidden=64, blocks=2, warmup_steps=20, log_every=100, device="cpu", horizon=4,
                history=1, encoder_channels=16, keypoints=8, encoder_features=16, image_shift=2, seed=0)
    return Config(**{**base, **kw})


def _sample(trained, ep, t: int, noise_seed: int = 0) -> np.ndarray:
    """First action of the chunk the trained policy samples at step t of `ep` (eager PyTorch)."""
    net, enc, norm = trained.net, trained.encoders, trained.norm
    sampler = DDIMSampler(net, squared_cosine_alphas_cumprod(100), ddim_timesteps(100, 10))
    obs = torch.from_numpy(norm.obs(ep.obs[t:t + 1]))  # (1, obs_dim)
    noise = torch.randn(1, net.cfg.horizon, net.cfg.action_dim, generator=torch.Generator().manual_seed(noise_seed))
    with torch.no_grad():
        if enc is None:
            a = sampler(obs, noise)
        else:
            a = PixelSampler(enc, sampler)(obs, torch.from_numpy(ep.images["front"][t:t + 1]), noise)
    return norm.unaction(a[0, 0].numpy())


def test_a_pixel_policy_uses_the_camera():
    """The goal is only in the image: with the camera the policy's first action points at it; state-only BC can only
    steer toward the average goal."""
    data = synthetic_pixel_dataset(episodes=24, steps=30, size=40, seed=1)
    held = synthetic_pixel_dataset(episodes=6, steps=30, size=40, seed=99)
    pix = train(_small(), data)
    blind_data = synthetic_pixel_dataset(episodes=24, steps=30, size=40, seed=1)
    for ep in blind_data.episodes:
        ep.images = {}
    blind = train(_small(), blind_data)

    def err(trained) -> float:
        out = []
        for ep in held.episodes:
            want = ep.action[0] - ep.obs[0]  # the expert's first step toward the goal
            got = _sample(trained, ep, 0) - ep.obs[0]
            out.append(float(np.sum((got - want) ** 2)))
        return float(np.mean(out))

    assert err(pix) < 0.5 * err(blind), (err(pix), err(blind))


def test_pixel_package_exports_uint8_image_inputs_that_onnxruntime_runs_like_pytorch(tmp_path):
    data = synthetic_pixel_dataset(episodes=4, steps=20, size=40, seed=2)
    npz = tmp_path / "pix.npz"
    save_npz(str(npz), data)
    back = load_npz(str(npz))
    assert back.cameras == ["front"] and back.episodes[1].images["front"].dtype == np.uint8
    assert np.array_equal(back.episodes[1].images["front"], data.episodes[1].images["front"])
    run(_small(dataset=str(npz), out=str(tmp_path / "run"), steps=20, history=2))
    pkg = tmp_path / "run" / "package"
    policy = json.loads((pkg / "policy.json").read_text())
    (img,) = policy["observation"]["images"]
    assert img["camera"] == "front" and img["key"] == "observation.images.front" and img["input"] == "image.front"
    assert (img["height"], img["width"], img["dtype"]) == (40, 40, "uint8")
    assert policy["observation"]["history"] == 2 and policy["files"]["encoder"] == "encoder.onnx"
    assert set(policy["sha256"]) >= {"sampler.onnx", "encoder.onnx", "denoiser.onnx"}
    vec = json.loads((pkg / "test_vectors.json").read_text())
    sess = ort.InferenceSession(str(pkg / "sampler.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["obs", "image.front", "noise"]
    assert sess.get_inputs()[1].type == "tensor(uint8)"
    feeds = {"obs": np.array(vec["obs"], np.float32), "image.front": np.array(vec["images"]["front"], np.uint8),
             "noise": np.array(vec["noise"], np.float32)}
    (action,) = sess.run(None, feeds)
    assert np.abs(action - np.array(vec["action"], np.float32)).max() <= 1e-4
    enc = ort.InferenceSession(str(pkg / "encoder.onnx"), providers=["CPUExecutionProvider"])
    (feat,) = enc.run(None, {"image.front": feeds["image.front"]})
    assert np.abs(feat - np.array(vec["features"], np.float32)).max() <= 1e-4
    ckpt = torch.load(os.path.join(pkg, "model.pt"), weights_only=True)
    assert ckpt["cameras"] == ["front"] and ckpt["encoder_configs"][0]["height"] == 40
    # bench-sampler rebuilds the same encoders + sampler from model.pt (the PyTorch side of npm run bench's image rows).
    from rlft_learner.commands.bench_sampler import bench, load_pixel_sampler
    pix = load_pixel_sampler(str(pkg))
    with torch.no_grad():
        again = pix(torch.tensor(vec["obs"]), torch.tensor(np.array(vec["images"]["front"], np.uint8)), torch.tensor(vec["noise"]))
    assert np.abs(again.numpy() - np.array(vec["action"], np.float32)).max() <= 1e-5
    stats = bench(str(pkg), iters=3, warmup=1)
    assert stats["cameras"] == ["front"] and stats["p99_ms"] >= stats["p50_ms"] > 0


def test_noise_samples_give_the_denoiser_several_noise_draws_per_encoded_window():
    """noise_samples K: the encoders run once per window, the denoiser trains on K noise draws of each (bench:pixels'
    diagnosis: the denoiser, not the encoder, was undertrained). Same steps, same windows: the loss falls faster."""
    data = synthetic_pixel_dataset(episodes=8, steps=20, size=40, seed=3)
    one = train(_small(steps=150), data)
    four = train(_small(steps=150, noise_samples=4), data)
    assert all(np.isfinite(four.losses)) and len(four.losses) == 150
    assert np.mean(four.losses[-50:]) < np.mean(one.losses[-50:]), (np.mean(four.losses[-50:]), np.mean(one.losses[-50:]))


def test_freeze_encoders_keeps_the_random_encoders_and_trains_the_denoiser():
    """freeze_encoders: the exported encoders are exactly their seeded random initialisation, the denoiser still
    learns (its loss falls)."""
    data = synthetic_pixel_dataset(episodes=8, steps=20, size=40, seed=4)
    frozen = train(_small(steps=120, freeze_encoders=True), data)
    torch.manual_seed(0)  # the seed train() sets before building the encoders
    start = train(_small(steps=1, freeze_encoders=True), data).encoders
    for a, b in zip(frozen.encoders.state_dict().values(), start.state_dict().values()):
        assert torch.equal(a, b)
    assert np.mean(frozen.losses[-30:]) < np.mean(frozen.losses[:30])


def _with_goal_columns(data):
    """The synthetic demos plus what only the simulator would know: the goal the image shows, as two more columns."""
    for ep in data.episodes:
        goal = ep.action[-1]  # the expert ends at its goal; constant per episode is all the test needs
        ep.obs = np.concatenate([ep.obs, np.repeat(goal[None], len(ep.obs), 0)], axis=1).astype(np.float32)
    data.obs_names = data.obs_names + ["goal.x", "goal.y"]
    return data


def test_aux_targets_train_a_position_head_the_policy_reads_but_never_receives(tmp_path):
    """aux_targets: the named columns leave the policy's observation (the package asks only for the joints), the
    encoders' position head learns to estimate them from the image (held-out error far below the spread), and the
    estimates reach the exported graphs, which onnxruntime runs like PyTorch."""
    data = _with_goal_columns(synthetic_pixel_dataset(episodes=24, steps=30, size=40, seed=5))
    held = _with_goal_columns(synthetic_pixel_dataset(episodes=6, steps=30, size=40, seed=98))
    trained = train(_small(steps=500, aux_targets="goal.x, goal.y"), data)
    assert trained.obs_names == ["q.j0", "q.j1"] and trained.aux_names == ["goal.x", "goal.y"]
    enc = trained.encoders
    assert enc.aux_dim == 2 and enc.out_dim == 16 + 2
    imgs = torch.from_numpy(np.concatenate([ep.images["front"][:5] for ep in held.episodes]))
    truth = np.concatenate([ep.obs[:5, 2:] for ep in held.episodes])  # (N, 2)
    with torch.no_grad():
        est = enc(imgs)[:, -2:].numpy()  # normalised estimates
    # a linear read of the estimates (undoing the normalisation) explains most of the goal's variance
    a = np.c_[est, np.ones(len(est))]
    w = np.linalg.lstsq(a, truth, rcond=None)[0]
    r2 = 1 - ((a @ w - truth) ** 2).sum(0) / ((truth - truth.mean(0)) ** 2).sum(0)
    assert (r2 > 0.8).all(), r2

    npz = tmp_path / "aux.npz"
    save_npz(str(npz), _with_goal_columns(synthetic_pixel_dataset(episodes=4, steps=20, size=40, seed=6)))
    run(_small(dataset=str(npz), out=str(tmp_path / "run"), steps=20, aux_targets="goal.x,goal.y"))
    pkg = tmp_path / "run" / "package"
    policy = json.loads((pkg / "policy.json").read_text())
    assert policy["observation"]["names"] == ["q.j0", "q.j1"] and len(policy["observation"]["mean"]) == 2
    vec = json.loads((pkg / "test_vectors.json").read_text())
    enc_sess = ort.InferenceSession(str(pkg / "encoder.onnx"), providers=["CPUExecutionProvider"])
    (feat,) = enc_sess.run(None, {"image.front": np.array(vec["images"]["front"], np.uint8)})
    assert feat.shape[1] == 16 + 2 and np.abs(feat - np.array(vec["features"], np.float32)).max() <= 1e-4
    ckpt = torch.load(os.path.join(pkg, "model.pt"), weights_only=True)
    from rlft_learner.algorithms.pixels.nets import load_base_encoders
    assert load_base_encoders(str(pkg)).out_dim == 18 and list(ckpt["encoder_aux"]) == [2, 128, 0]


def test_aux_targets_refuse_what_they_cannot_train():
    data = _with_goal_columns(synthetic_pixel_dataset(episodes=2, steps=10, size=40, seed=7))
    with pytest.raises(ValueError, match="no observation goal.z.*they have q.j0, q.j1, goal.x, goal.y"):
        train(_small(steps=1, aux_targets="goal.x,goal.z"), data)
    with pytest.raises(ValueError, match="twice"):
        train(_small(steps=1, aux_targets="goal.x,goal.x"), data)
    with pytest.raises(ValueError, match="no observation columns"):
        train(_small(steps=1, aux_targets="q.j0,q.j1,goal.x,goal.y"), data)
    for ep in data.episodes:
        ep.images = {}
    with pytest.raises(ValueError, match="needs demos with camera frames"):
        train(_small(steps=1, aux_targets="goal.x"), data)


def test_aux_only_gives_the_denoiser_the_joints_and_the_estimates_alone():
    data = _with_goal_columns(synthetic_pixel_dataset(episodes=4, steps=10, size=40, seed=8))
    trained = train(_small(steps=3, aux_targets="goal.x,goal.y", aux_only=True), data)
    assert trained.encoders.out_dim == 2 and trained.net.cfg.obs_dim == 2 + 2  # history 1: joints + estimates
    again = CameraEncoders.from_spec(trained.encoders.spec())
    assert again.aux_only and again.out_dim == 2
    with pytest.raises(ValueError, match="aux_only.*needs aux_dim > 0"):
        train(_small(steps=1, aux_only=True), data)


def test_aux_only_episodes_train_the_position_head_and_are_never_imitated():
    """Episodes whose source is aux_only (rlft train-bc --aux-data: noisy demos, the policy's own rollouts) add frames
    to the position head's loss; the denoiser's windows and the normaliser come from the demonstrations alone."""
    from rlft_learner.algorithms.bc.train import AUX_ONLY
    data = _with_goal_columns(synthetic_pixel_dataset(episodes=4, steps=10, size=40, seed=9))
    wild = _with_goal_columns(synthetic_pixel_dataset(episodes=3, steps=10, size=40, seed=10))
    for ep in wild.episodes:
        ep.source, ep.success = AUX_ONLY, False
        ep.action = ep.action + 100.0  # would wreck the action normaliser if it were imitated
    both = type(data)(episodes=data.episodes + wild.episodes, obs_names=data.obs_names, action_names=data.action_names, task=data.task)
    trained = train(_small(steps=5, aux_targets="goal.x,goal.y"), both)
    assert trained.norm.act_max.max() < 50  # the aux-only actions never reached the normaliser
    with pytest.raises(ValueError, match="aux-only.*aux_targets is empty"):
        train(_small(steps=1), both)
    with pytest.raises(ValueError, match="every episode came as aux-only"):
        train(_small(steps=1, aux_targets="goal.x"), type(data)(episodes=wild.episodes, obs_names=data.obs_names,
                                                                 action_names=data.action_names, task=data.task))
