"""Residual TD3 from pixels (algorithms/pixels/): the actor and critics read [joints, camera features] from the frozen
base encoder or their own; a residual that only the frame can tell learns from synthetic batches with frames; the
package takes uint8 image inputs that onnxruntime runs like PyTorch; pixel-meaningless features are refused."""

import json
import os

import numpy as np
import onnxruntime as ort
import pytest
import torch

from rlft_learner.data import save_npz, synthetic_pixel_dataset
from rlft_learner.algorithms.bc.train import Config as BcConfig, run
from rlft_learner.algorithms.pixels.agent import PixelResidualTD3, PixelRlpdSAC
from rlft_learner.algorithms.pixels.nets import chw_to_float, load_base_encoders
from rlft_learner.algorithms.residual_td3.agent import BasePackage
from rlft_learner.commands.serve import make_agent
from rlft_learner.commands.serve_config import ServeConfig
from rlft_learner.export.package import export_residual_package

SIZE = 32


def make_pixel_base(tmp, history: int = 1) -> tuple[str, str]:
    """A tiny pixel BC package (one 32x32 camera "front", joints q.j0 q.j1, state `history`) trained on demos with
    frames: (package dir, the demos' .npz)."""
    npz = tmp / "pix.npz"
    save_npz(str(npz), synthetic_pixel_dataset(episodes=3, steps=10, size=SIZE, seed=1))
    run(BcConfig(dataset=str(npz), out=str(tmp / "run"), steps=5, batch_size=8, hidden=16, blocks=1, warmup_steps=1,
                 log_every=5, device="cpu", horizon=4, execute_steps=4, history=history, encoder_channels=8, keypoints=4, encoder_features=8,
                 image_shift=2, seed=0))
    return str(tmp / "run" / "package"), str(npz)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> BasePackage:
    return BasePackage.load(make_pixel_base(tmp_path_factory.mktemp("pixbase"))[0])


def test_demo_relabelling_reads_the_pixel_base_state_history(tmp_path):
    """A pixel base with a state history of 2 (train-bc's default; its noise network reads one [state history, features]
    step): serve's demo_dataset relabels each re-plan step with the base on the last two states and the step's frame,
    as the robot's sampler does."""
    from rlft_learner.algorithms.residual_td3.agent import demo_rows
    from rlft_learner.buffers.her import load_base_sampler
    from rlft_learner.data import load_npz

    package, npz = make_pixel_base(tmp_path, history=2)
    base = BasePackage.load(package)
    rows = demo_rows(npz, base, noise_scale=0.0)
    sampler, mcfg = load_base_sampler(package)
    enc = load_base_encoders(package)
    ep = load_npz(npz).episodes[0]
    obs_n = base.norm_obs(ep.obs)
    k = base.execute_steps
    with torch.no_grad():  # the re-plan at step k: states k-1 and k, frame k, zero noise
        cond = torch.cat([torch.from_numpy(obs_n[[k - 1, k]].reshape(1, -1).astype(np.float32)), enc(torch.from_numpy(ep.images["front"][k:k + 1]))], -1)
        want = sampler(cond, torch.zeros(1, mcfg.horizon, mcfg.action_dim)).numpy()[0, :k]
    np.testing.assert_allclose(rows["base_action"][k:2 * k], np.clip(want, -1, 1), atol=1e-5)


def _cfg(**kw) -> ServeConfig:
    """serve's flat config (what make_agent takes); PixelResidualTD3 / PixelRlpdSAC take its agent_config()."""
    return ServeConfig(**{**dict(critic_heads=2, critic_hidden=32, actor_hidden=32, batch_size=32, critic_warmup_updates=0,
                            policy_delay=1, residual_scale=0.2, actor_lr=1e-3, seed=0), **kw})


def frame(side: float, rng: np.random.Generator) -> np.ndarray:
    """uint8 (3, H, W): noise and a bright square on the left (side < 0) or the right (side > 0)."""
    img = rng.integers(0, 40, size=(3, SIZE, SIZE), dtype=np.uint8)
    x = 3 if side < 0 else SIZE - 11
    img[:, 12:20, x:x + 8] = np.array([230, 60, 40], np.uint8)[:, None, None]
    return img


def bandit_batch(n: int, rng: np.random.Generator, agent: PixelResidualTD3 | None = None) -> dict:
    """One-step episodes: the joints say nothing, the square's side says which way joint 0 must move; reward 1 when
    the executed action (base 0 + residual + noise) moves it that way by more than 0.05."""
    side = rng.choice([-1.0, 1.0], size=n)
    imgs = np.stack([frame(s, rng) for s in side])  # (n, 3, H, W)
    action = rng.uniform(-0.2, 0.2, size=(n, 2)).astype(np.float32)
    reward = (action[:, 0] * side > 0.05).astype(np.float32)
    z = np.zeros((n, 2), np.float32)
    return {"obs": z, "base_action": z, "action": action, "ret": reward, "discount": np.zeros(n, np.float32),
            "next_obs": z, "next_base_action": z, "image.front": imgs, "next_image.front": imgs}


def test_a_pixel_base_makes_a_pixel_agent_and_refuses_features_that_need_state(base):
    agent = make_agent(_cfg(), 2, 2, base)
    assert isinstance(agent, PixelResidualTD3) and agent.cameras == ["front"]
    assert agent.actor.obs_dim == 2 + agent.encoders.out_dim
    with pytest.raises(ValueError, match="(?s)sees cameras.*her_goal.*cannot be relabelled.*mirror_obs.*obs_features.*chunk_critic"):
        make_agent(_cfg(her_goal="q.j0", her_radius=0.1, mirror_obs="q.j0", obs_features="q-q", chunk_critic=True), 2, 2, base)
    sac = make_agent(_cfg(algorithm="rlpd_sac"), 2, 2, base)
    assert isinstance(sac, PixelRlpdSAC) and sac.sac_actor.obs_dim == 2 + sac.encoders.out_dim
    assert agent.data.online.frames.cameras == {"front": (SIZE, SIZE)}  # its replay keeps frames: update() samples them


def test_batches_without_frames_or_of_another_size_are_refused_naming_the_key(base):
    agent = PixelResidualTD3(_cfg().agent_config(), 2, 2, base)
    b = bandit_batch(4, np.random.default_rng(0))
    with pytest.raises(KeyError, match="next_image.front"):
        agent.update_batch({k: v for k, v in b.items() if k != "next_image.front"})
    with pytest.raises(ValueError, match=r"'image.front': expected uint8 \(B, 3, 32, 32\).*\(4, 32, 32, 3\)"):
        agent.update_batch({**b, "image.front": b["image.front"].transpose(0, 2, 3, 1)})


def test_frozen_base_features_are_the_base_encoders_and_never_change(base):
    agent = PixelResidualTD3(_cfg().agent_config(), 2, 2, base)
    before = {k: v.clone() for k, v in agent.encoders.state_dict().items()}
    rng = np.random.default_rng(0)
    for _ in range(3):
        agent.update_batch(bandit_batch(32, rng))
    after = agent.encoders.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    ref = load_base_encoders(base.path)
    assert all(torch.equal(ref.state_dict()[k], after[k]) for k in before)
    b = bandit_batch(4, rng)
    td3, actor_obs = agent.to_batch(b)
    with torch.no_grad():  # channel-first bytes give the features the robot's HWC bytes give the base's encoder
        hwc = torch.from_numpy(b["image.front"]).permute(0, 2, 3, 1).contiguous()
        assert torch.allclose(td3.obs[:, 2:], ref(hwc), atol=1e-4) and actor_obs is None
    assert chw_to_float(torch.full((1, 3, 2, 2), 255, dtype=torch.uint8)).eq(1).all()


def test_own_encoders_learn_from_the_critic_and_checkpoint(base):
    agent = PixelResidualTD3(_cfg(image_encoder="own").agent_config(), 2, 2, base)
    before = {k: v.clone() for k, v in agent.encoders.state_dict().items()}
    rng = np.random.default_rng(0)
    for _ in range(3):
        agent.update_batch(bandit_batch(32, rng))
    after = agent.encoders.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    twin = PixelResidualTD3(_cfg(image_encoder="own").agent_config(), 2, 2, base)
    twin.load_state_dict(agent.state_dict())
    assert all(torch.equal(twin.encoders.state_dict()[k], after[k]) for k in after)
    frozen = PixelResidualTD3(_cfg().agent_config(), 2, 2, base)
    with pytest.raises(ValueError, match="resume with the same image_encoder"):
        twin.load_state_dict(frozen.state_dict())


@pytest.mark.parametrize("encoder,algorithm", [("base", "residual_td3"), ("own", "residual_td3"), ("base", "rlpd_sac")])
def test_the_residual_learns_a_correction_only_the_frame_tells(base, encoder, algorithm):
    """For rlpd_sac (a zero base, residual scale 1) the same bandit: its deterministic action must point the right way."""
    torch.set_num_threads(1)
    sac = dict(sac_lr=1e-3, sac_init_temperature=0.05) if algorithm == "rlpd_sac" else {}  # rewards of 0/1: a small alpha
    agent = make_agent(_cfg(image_encoder=encoder, batch_size=64, critic_hidden=64, critic_heads=4, algorithm=algorithm, **sac), 2, 2, base)
    rng = np.random.default_rng(1)
    data = bandit_batch(2000, rng)
    for _ in range(300):
        idx = rng.integers(0, 2000, size=64)
        agent.update_batch({k: v[idx] for k, v in data.items()})
    test = bandit_batch(64, np.random.default_rng(7))
    side = np.where(test["image.front"][:, 0, 12:20, 3:11].mean(axis=(1, 2)) > 150, -1.0, 1.0)  # where the square is
    with torch.no_grad():
        res = agent.export_actor()(torch.zeros(64, 2), torch.from_numpy(test["image.front"]).permute(0, 2, 3, 1).contiguous(),
                                   torch.zeros(64, 2))
    margin = 0.0 if algorithm == "rlpd_sac" else 0.05  # SAC's mean action: the right direction; TD3: past the reward's edge
    assert np.mean(res[:, 0].numpy() * side > margin) >= 0.8, res[:, 0]  # chance: 0.5


def test_pixel_residual_package_takes_uint8_frames_that_onnxruntime_runs_like_pytorch(base, tmp_path):
    agent = PixelResidualTD3(_cfg().agent_config(), 2, 2, base)
    rng = np.random.default_rng(0)
    for _ in range(5):
        agent.update_batch(bandit_batch(32, rng))
    frames = np.stack([frame(s, rng) for s in (-1, 1, 1, -1)]).transpose(0, 2, 3, 1)  # (4, H, W, 3) as the robot sends
    path, policy = export_residual_package(agent.export_actor(), base, str(tmp_path / "pk"), agent.updates, 0.05,
                                           frames={"front": frames})
    assert policy["observation"]["images"] == base.policy["observation"]["images"]
    assert policy["observation"]["names"] == base.obs_names and "critic" not in policy["files"]
    vec = json.load(open(os.path.join(path, "test_vectors.json")))
    assert np.array_equal(np.array(vec["images"]["front"], np.uint8), frames)
    sess = ort.InferenceSession(os.path.join(path, "residual.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["obs", "image.front", "base_action"]
    assert sess.get_inputs()[1].type == "tensor(uint8)"
    (res,) = sess.run(None, {"obs": np.array(vec["obs"], np.float32), "image.front": frames,
                             "base_action": np.array(vec["base_action"], np.float32)})
    assert np.abs(res - np.array(vec["residual"], np.float32)).max() <= 1e-4 and np.abs(res).max() > 0
    ckpt = torch.load(os.path.join(path, "model.pt"), weights_only=True)
    assert ckpt["cameras"] == ["front"] and ckpt["encoder_configs"][0]["height"] == SIZE
    with pytest.raises(ValueError, match="critics read frames"):
        export_residual_package(agent.export_actor(), base, str(tmp_path / "pk2"), 0, 0.05, critic=agent.critic)


def test_frozen_features_encoded_once_per_frame_give_the_same_update_as_the_frames(base):
    rng = np.random.default_rng(3)
    b = bandit_batch(16, rng)
    a, c = PixelResidualTD3(_cfg().agent_config(), 2, 2, base), PixelResidualTD3(_cfg().agent_config(), 2, 2, base)
    cached = {**{k: v for k, v in b.items() if "image" not in k},
              "features": c.encode_frames({"front": b["image.front"]}), "next_features": c.encode_frames({"front": b["next_image.front"]})}
    a.update_batch(b)
    c.update_batch(cached)
    for (k, p), q in zip(a.critic.state_dict().items(), c.critic.state_dict().values()):
        assert torch.allclose(p, q, atol=1e-5), k
    with pytest.raises(ValueError, match=r"batch features: expected \(16, 8\)"):
        c.update_batch({**cached, "features": cached["features"][:, :4]})
    with pytest.raises(ValueError, match="own trains its encoders"):
        PixelResidualTD3(_cfg(image_encoder="own").agent_config(), 2, 2, base).encode_frames({"front": b["image.front"]})


def test_rlpd_sac_from_pixels_exports_a_scale_1_package_over_the_zero_base(base, tmp_path):
    agent = PixelRlpdSAC(_cfg(algorithm="rlpd_sac").agent_config(), 2, 2, base)
    rng = np.random.default_rng(0)
    for _ in range(4):
        agent.update_batch(bandit_batch(32, rng))
    path, policy = export_residual_package(agent.export_actor(), base, str(tmp_path / "pk"), agent.updates,
                                           agent.exploration_std(), version_prefix="sac")
    assert policy["residual"]["scale"] == 1.0 and policy["observation"]["images"] == base.policy["observation"]["images"]
    vec = json.load(open(os.path.join(path, "test_vectors.json")))
    sess = ort.InferenceSession(os.path.join(path, "residual.onnx"), providers=["CPUExecutionProvider"])
    (res,) = sess.run(None, {"obs": np.array(vec["obs"], np.float32), "image.front": np.array(vec["images"]["front"], np.uint8),
                             "base_action": np.array(vec["base_action"], np.float32)})
    assert np.abs(res - np.array(vec["residual"], np.float32)).max() <= 1e-4
    twin = PixelRlpdSAC(_cfg(algorithm="rlpd_sac").agent_config(), 2, 2, base)
    twin.load_state_dict(agent.state_dict())
    assert twin.updates == agent.updates
