import hashlib
import json
import os

import numpy as np
import onnx
import pytest
import torch

from rlft_learner.export.package import export_residual_package
from rlft_learner.buffers.replay import FIELDS, ReplayBuffer
from rlft_learner.algorithms.offpolicy import route
from rlft_learner.algorithms.residual_td3.agent import BasePackage, ResidualTD3, redq_target
from rlft_learner.algorithms.residual_td3.config import ResidualTD3Config
from rlft_learner.commands.serve_config import ServeConfig, load_config


def write_base(path, obs_dim=3, act_dim=2, version="bc-toy-20261130T000000Z-abcdef"):
    os.makedirs(path, exist_ok=True)
    policy = {"format": "rlft-policy", "format_version": 1, "kind": "diffusion", "version": version,
              "provenance": {"task": "toy"},
              "observation": {"names": [f"o{i}" for i in range(obs_dim)], "history": 2, "mean": [0.0] * obs_dim, "std": [1.0] * obs_dim},
              "action": {"names": [f"a{i}" for i in range(act_dim)], "horizon": 16, "execute_steps": 8,
                         "min": [-1.0] * act_dim, "max": [1.0] * act_dim}}
    with open(os.path.join(path, "policy.json"), "w") as f:
        json.dump(policy, f)
    return str(path)


def rows(seq, reward=None, terminated=None, truncated=None, intervention=None, robot=0, obs_dim=3, act_dim=2):
    n = len(seq)
    z = np.zeros(n, np.float32)
    out = {k: np.zeros((n,) if w is None else (n, obs_dim if w == "obs" else act_dim), dt) for k, (w, dt) in FIELDS.items() if k != "next"}
    out["next_obs"][:, 0] = np.asarray(seq, np.float32) + 1  # marks which step a bootstrap came from
    out.update(seq=np.asarray(seq, np.int64), robot=np.full(n, robot, np.int64),
               reward=z if reward is None else np.asarray(reward, np.float32),
               terminated=z if terminated is None else np.asarray(terminated, np.float32),
               truncated=z if truncated is None else np.asarray(truncated, np.float32),
               intervention=z if intervention is None else np.asarray(intervention, np.float32))
    return out


def test_nstep_targets_stop_bootstrap_at_terminal_and_bootstrap_at_truncation():
    g = 0.9
    buf = ReplayBuffer(100, 3, 2)
    # robot 0: steps 0..4, success (terminal) at step 3; episode 2 starts at seq 4 and is truncated at seq 5
    buf.add(rows([0, 1, 2, 3], reward=[0, 0, 0, 1], terminated=[0, 0, 0, 1]))
    buf.add(rows([10, 11], robot=1, reward=[0.5, 0.25]))  # another robot interleaved
    buf.add(rows([4, 5], reward=[0, 0], truncated=[0, 1]))
    out = buf.nstep(np.array([0, 1, 2, 3, 6, 7, 4]), n=3, gamma=g)
    # row 0: r0 + g r1 + g^2 r2 = 0, bootstrap from step 2's next_obs with g^3
    assert out["ret"][0] == 0 and out["discount"][0] == pytest.approx(g ** 3) and out["next_obs"][0, 0] == 3
    # row 1: 0 + 0 + g^2 * 1 (terminal at step 3) -> no bootstrap
    assert out["ret"][1] == pytest.approx(g ** 2) and out["discount"][1] == 0
    assert out["ret"][2] == pytest.approx(g) and out["discount"][2] == 0
    assert out["ret"][3] == 1 and out["discount"][3] == 0
    # step 4 -> 5 (truncated): 2-step return, bootstrap g^2 from step 5's next_obs (the episode did not succeed)
    assert out["ret"][4] == 0 and out["discount"][4] == pytest.approx(g ** 2) and out["next_obs"][4, 0] == 6
    assert out["discount"][5] == pytest.approx(g)
    # robot 1's chain does not mix with robot 0's: seq 10 -> 11, then no successor yet (bootstrap after 2 steps)
    assert out["ret"][6] == pytest.approx(0.5 + g * 0.25) and out["discount"][6] == pytest.approx(g ** 2)


def test_redq_target_uses_two_of_e_heads():
    q = torch.arange(10, dtype=torch.float32)[:, None].repeat(1, 4)  # head i predicts i, (E=10, B=4)
    gen = torch.Generator().manual_seed(0)
    picked = set()
    for _ in range(200):
        t = redq_target(q, gen)
        assert t.shape == (4,) and (t == t[0]).all()
        picked.add(int(t[0]))
    # min of 2 distinct heads out of 10: never head 9, and not always head 0 (a full-ensemble min would be)
    assert 9 not in picked and len(picked) > 3


def test_intervention_steps_go_to_both_buffers_autonomous_only_online(tmp_path):
    agent = ResidualTD3(ResidualTD3Config(critic_heads=2, critic_hidden=16, actor_hidden=16), 3, 2)
    agent.add(rows([0, 1, 2, 3, 4], intervention=[0, 1, 1, 0, 0]))
    assert len(agent.online) == 5 and len(agent.offline) == 2
    assert sorted(agent.offline.data["seq"][:2].tolist()) == [1, 2]
    assert agent.intervention_steps == 2 and agent.env_steps == 5
    online, offline = route(rows([7, 8], intervention=[0, 0]))
    assert offline is None and len(online["seq"]) == 2


def test_zero_init_residual_exports_zero_and_valid_package(tmp_path):
    base = BasePackage.load(write_base(tmp_path / "base"))
    agent = ResidualTD3(ResidualTD3Config(critic_heads=2, critic_hidden=16, actor_hidden=32), 3, 2)
    path, policy = export_residual_package(agent.actor, base, str(tmp_path / "packages"), updates=0, exploration_std=0.05)
    vectors = json.load(open(os.path.join(path, "test_vectors.json")))
    assert np.array(vectors["residual"]).shape == (4, 2) and np.abs(vectors["residual"]).max() == 0
    assert policy["kind"] == "residual" and policy["version"].startswith("res-toy-") and policy["version"].endswith("-u0")
    assert policy["base"] == {"version": base.version, "policy_json_sha256": hashlib.sha256(open(tmp_path / "base" / "policy.json", "rb").read()).hexdigest()}
    assert policy["files"] == {"actor": "residual.onnx"} and policy["residual"]["scale"] == 0.1
    for name, digest in policy["sha256"].items():
        assert hashlib.sha256(open(os.path.join(path, name), "rb").read()).hexdigest() == digest
    model = onnx.load(os.path.join(path, "residual.onnx"))
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == ["obs", "base_action"] and [o.name for o in model.graph.output] == ["residual"]
    assert not [d for d in os.listdir(tmp_path / "packages") if d.startswith(".")]


def test_config_rejects_unknown_keys_and_wrong_types(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("base_package: x\nactor_lrr: 0.1\n")
    with pytest.raises(ValueError, match="unknown config key 'actor_lrr'.*actor_lr"):
        load_config(str(p))
    p.write_text("utd: fast\n")
    with pytest.raises(ValueError, match="'utd' must be float"):
        load_config(str(p))
    p.write_text("utd: 4\ncritic_heads: 6\n")
    cfg = load_config(str(p), {"critic_heads": 4})
    assert cfg.utd == 4.0 and cfg.critic_heads == 4 and cfg.actor_lr == 1e-4
    with pytest.raises(ValueError, match="base_noise_scale = 3.0 is out of range; allowed: \\[0, 2\\].*actor.noise_scale"):
        load_config(overrides={"base_noise_scale": 3.0})


def test_residual_learns_to_correct_a_constant_base_offset():
    """1-D toy: target x ~ U(-0.5, 0.5) is the observation; the base action is x + 0.08; one-step episodes with reward 1
    when the executed action is within 0.04 of x (the base alone never is). 500 episodes, 1000 updates."""
    torch.set_num_threads(1)
    cfg = ResidualTD3Config(critic_heads=4, critic_hidden=64, actor_hidden=64, batch_size=128, utd=2.0, learning_starts=100,
                 critic_warmup_updates=100, actor_lr=1e-3, exploration_std=0.05, residual_scale=0.15, seed=0)
    agent = ResidualTD3(cfg, obs_dim=1, act_dim=1)
    rng = np.random.default_rng(0)
    offset, tol, seq = 0.08, 0.04, 0

    def residual(x, base):
        with torch.no_grad():
            return agent.actor(torch.tensor([[x]], dtype=torch.float32), torch.tensor([[base]], dtype=torch.float32)).item()

    successes = []
    for _ in range(500):
        x = rng.uniform(-0.5, 0.5)
        base = x + offset
        a = float(np.clip(base + residual(x, base) + rng.normal(0, cfg.exploration_std), -1, 1))
        success = abs(a - x) < tol
        r = rows([seq], reward=[float(success)], terminated=[1.0], obs_dim=1, act_dim=1)
        r.update(obs=np.array([[x]], np.float32), next_obs=np.array([[x]], np.float32), base_action=np.array([[base]], np.float32),
                 next_base_action=np.array([[base]], np.float32), action=np.array([[a]], np.float32))
        agent.add(r)
        seq += 1
        for _ in range(agent.updates_due()):
            agent.update()
        successes.append(success)
    assert agent.updates == 1000 and agent.actor_updates > 400
    assert np.mean(successes[-100:]) > np.mean(successes[:100]) + 0.2  # with exploration noise on
    xs = np.linspace(-0.45, 0.45, 19)
    errors = [abs(x + offset + residual(x, x + offset) - x) for x in xs]
    assert np.mean(np.array(errors) < tol) >= 0.9, errors


def test_demos_fill_the_offline_buffer_with_relabelled_base_actions(tmp_path):
    import torch as T

    from rlft_learner.data import save_npz, synthetic_dataset
    from rlft_learner.algorithms.bc.diffusion import ModelConfig, NoisePredictionNet, ddim_timesteps, squared_cosine_alphas_cumprod

    base_dir = write_base(tmp_path / "base", obs_dim=4, act_dim=2)
    mcfg = ModelConfig(obs_dim=4, action_dim=2, history=2, horizon=16, hidden=16, blocks=1)
    T.save({"state_dict": NoisePredictionNet(mcfg).state_dict(), "config": mcfg.to_dict(),
            "alphas_cumprod": T.from_numpy(squared_cosine_alphas_cumprod(100).astype(np.float32)),
            "timesteps": ddim_timesteps(100, 10)}, os.path.join(base_dir, "model.pt"))
    data = synthetic_dataset(episodes=2, steps=20, obs_dim=4, action_dim=2)
    data.obs_names, data.action_names = ["o0", "o1", "o2", "o3"], ["a0", "a1"]
    data.episodes[1].success = False
    save_npz(str(tmp_path / "demos.npz"), data)
    from rlft_learner.algorithms.residual_td3.agent import demo_rows

    r = demo_rows(str(tmp_path / "demos.npz"), BasePackage.load(base_dir))
    assert r["obs"].shape == (40, 4) and r["base_action"].shape == (40, 2) and np.abs(r["base_action"]).max() <= 1
    assert r["terminated"][19] == 1 and r["truncated"][39] == 1 and r["terminated"].sum() == 1
    assert (r["intervention"] == 1).all()
    agent = ResidualTD3(ResidualTD3Config(critic_heads=2, critic_hidden=16, actor_hidden=16), 4, 2)
    agent.add_offline(r)
    out = agent.offline.nstep(np.array([18, 19, 20]), n=3, gamma=0.99)
    assert out["discount"][0] == 0 and out["discount"][1] == 0 and out["discount"][2] > 0  # episodes do not chain
    # The robot's sampling temperature (base_noise_scale): at 0 every chunk is denoised from zeros, so the relabelled
    # base action equals that of a zero-noise sampler run on the same observations; at 1 it does not.
    r0 = demo_rows(str(tmp_path / "demos.npz"), BasePackage.load(base_dir), noise_scale=0.0)
    from rlft_learner.algorithms.bc.diffusion import DDIMSampler
    ck = T.load(os.path.join(base_dir, "model.pt"))
    net = NoisePredictionNet(ModelConfig(**ck["config"]))
    net.load_state_dict(ck["state_dict"])
    sampler = DDIMSampler(net.eval(), ck["alphas_cumprod"].numpy(), list(ck["timesteps"])).eval()
    base = BasePackage.load(base_dir)
    obs0 = base.norm_obs(data.episodes[0].obs)
    with T.no_grad():
        first = sampler(T.from_numpy(obs0[[0, 0]].reshape(1, -1)), T.zeros(1, 16, 2)).numpy()[0]
    execute = int(base.policy["action"].get("execute_steps", 8))
    np.testing.assert_allclose(r0["base_action"][:execute], first[:execute], atol=1e-6)
    assert not np.allclose(r["base_action"][:execute], first[:execute], atol=1e-4)
    # mirror_obs: each demo is followed by its reflection (o1 and a0 negated), its base actions planned on the mirror.
    from rlft_learner.buffers.mirror import Mirror
    rm = demo_rows(str(tmp_path / "demos.npz"), base, noise_scale=0.0, mirror=Mirror(base, ["o1"], ["a0"]))
    assert rm["obs"].shape == (80, 4) and rm["terminated"].sum() == 2 and rm["truncated"][[59, 79]].tolist() == [1, 1]
    np.testing.assert_allclose(rm["obs"][:20], r0["obs"][:20])
    np.testing.assert_allclose(rm["obs"][20:40, 1], -r0["obs"][:20, 1], atol=1e-6)
    np.testing.assert_allclose(rm["obs"][20:40, [0, 2, 3]], r0["obs"][:20, [0, 2, 3]])
    np.testing.assert_allclose(rm["action"][20:40, 0], -r0["action"][:20, 0], atol=1e-6)
    with T.no_grad():
        mirrored = sampler(T.from_numpy(rm["obs"][[20, 20]].reshape(1, -1)), T.zeros(1, 16, 2)).numpy()[0]
    np.testing.assert_allclose(rm["base_action"][20:20 + execute], mirrored[:execute], atol=1e-6)
    # Columns the base does not read (train-bc --aux targets saved with the demos) are left out by name; a column the
    # base reads and the demos lack is refused, naming it.
    import dataclasses
    wide = dataclasses.replace(data, obs_names=["o0", "cube.x", "o1", "o2", "o3"],
                               episodes=[dataclasses.replace(e, obs=np.insert(e.obs, 1, 7.0, axis=1)) for e in data.episodes])
    save_npz(str(tmp_path / "wide.npz"), wide)
    rw = demo_rows(str(tmp_path / "wide.npz"), base, noise_scale=0.0)
    np.testing.assert_allclose(rw["obs"], r0["obs"])
    np.testing.assert_allclose(rw["base_action"], r0["base_action"])
    narrow = dataclasses.replace(data, obs_names=["o0", "o1", "o2"], episodes=[dataclasses.replace(e, obs=e.obs[:, :3]) for e in data.episodes])
    save_npz(str(tmp_path / "narrow.npz"), narrow)
    with pytest.raises(ValueError, match="lacks the base's observation o3"):
        demo_rows(str(tmp_path / "narrow.npz"), base)


def test_clipped_intervention_actions_stay_inside_the_residual_box():
    """docs/algorithms.md §2: the residual target of an intervention step is a_human - a_base, clipped to the residual bound."""
    from rlft_learner.algorithms.residual_td3.agent import clip_interventions
    rows = {
        "intervention": np.array([0.0, 1.0, 1.0], np.float32),
        "base_action": np.array([[0.0, 0.0], [0.2, -0.2], [0.95, 0.0]], np.float32),
        "action": np.array([[0.5, 0.5], [0.9, -0.25], [1.0, 0.0]], np.float32),
    }
    out = clip_interventions(rows, 0.1)
    np.testing.assert_allclose(out["action"][0], [0.5, 0.5])  # the policy's own step is untouched
    np.testing.assert_allclose(out["action"][1], [0.3, -0.25], atol=1e-6)  # clipped to base + 0.1, inside on dim 2
    np.testing.assert_allclose(out["action"][2], [1.0, 0.0], atol=1e-6)  # still within [-1, 1]
    np.testing.assert_allclose(rows["action"][1], [0.9, -0.25])  # the input rows are not modified


def test_bc_anchor_pulls_the_residual_toward_offline_corrections_when_q_is_flat():
    """TD3+BC anchor (actor_bc_weight): with a critic that has learnt nothing, the actor's only signal is the anchor, so
    the residual moves toward what the offline rows did relative to the base (+0.05 here), clipped to the box."""
    torch.set_num_threads(1)
    cfg = ResidualTD3Config(critic_heads=2, critic_hidden=16, actor_hidden=32, batch_size=64, learning_starts=1, critic_warmup_updates=0,
                 policy_delay=1, actor_lr=3e-3, actor_bc_weight=1.0, residual_scale=0.1, critic_lr=0.0, seed=0)
    agent = ResidualTD3(cfg, obs_dim=3, act_dim=2)
    r = rows(list(range(200)), obs_dim=3, act_dim=2)
    r["base_action"] = np.zeros((200, 2), np.float32)
    r["action"] = np.full((200, 2), 0.05, np.float32)  # the operator / demo did base + 0.05
    agent.add_offline(r)
    agent.add(rows(list(range(1000, 1200)), obs_dim=3, act_dim=2))
    metrics = [agent.update() for _ in range(300)]
    assert "losses/actor_bc" in metrics[-1] and metrics[-1]["losses/actor_bc"] < metrics[0]["losses/actor_bc"]
    with torch.no_grad():
        res = agent.actor(torch.zeros(5, 3), torch.zeros(5, 2))
    assert float(res.mean()) > 0.02 and float(res.abs().max()) <= 0.1 + 1e-6


class _SlopedCritic(torch.nn.Module):
    """Q(s, a) = 1 + slope * a_0 on every head: a critic that claims a small, steady gain for pushing action 0 up."""

    def __init__(self, heads, slope):
        super().__init__()
        self.heads, self.slope = heads, slope
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def forward(self, obs, action):
        q = 1.0 + self.slope * action[:, 0] + 0 * self.dummy  # (B,)
        return q.unsqueeze(0).expand(self.heads, -1)  # (E, B)


@pytest.mark.parametrize("penalty", [0.0, 3.0])
def test_residual_penalty_turns_a_bang_bang_residual_into_a_proportional_one(penalty):
    """With Adam, plain TD3 drives the bounded residual to its box edge for any consistent gradient, however small
    (here a 2% gain over the whole box); the trust-region term (actor_residual_penalty) settles it inside the box."""
    torch.set_num_threads(1)
    cfg = ResidualTD3Config(critic_heads=2, critic_hidden=16, actor_hidden=32, batch_size=64, learning_starts=1, critic_warmup_updates=0,
                 policy_delay=1, actor_lr=3e-3, actor_residual_penalty=penalty, residual_scale=0.1, critic_lr=0.0, seed=0)
    agent = ResidualTD3(cfg, obs_dim=3, act_dim=2)
    agent.critic = _SlopedCritic(cfg.critic_heads, slope=0.2)
    agent.critic_target = _SlopedCritic(cfg.critic_heads, slope=0.2)
    agent.add(rows(list(range(300)), obs_dim=3, act_dim=2))
    for _ in range(400):
        agent.update()
    with torch.no_grad():
        res = agent.actor(torch.randn(64, 3), torch.zeros(64, 2))[:, 0]
    if penalty == 0:
        assert float(res.mean()) > 0.09  # saturated at the +0.1 bound
    else:
        assert 0.0 < float(res.mean()) < 0.05  # pushed the right way, but only as far as the claimed gain is worth


def test_pessimistic_actor_prefers_actions_the_heads_agree_on():
    """actor_pessimism: mean - k * std over heads. Two heads agree at a_0 = 0 and disagree more the further a_0 goes, with
    the same mean slope: the mean alone pushes a_0 up, the lower confidence bound holds it near 0."""
    torch.set_num_threads(1)

    class Split(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dummy = torch.nn.Parameter(torch.zeros(1))

        def forward(self, obs, action):
            a = action[:, 0] + 0 * self.dummy
            return torch.stack([1 + 0.1 * a + 2.0 * a.abs(), 1 + 0.1 * a - 2.0 * a.abs()])  # (2, B)

    out = {}
    for k in (0.0, 1.0):
        cfg = ResidualTD3Config(critic_heads=2, critic_hidden=16, actor_hidden=32, batch_size=64, learning_starts=1, critic_warmup_updates=0,
                     policy_delay=1, actor_lr=3e-3, actor_pessimism=k, residual_scale=0.1, critic_lr=0.0, seed=0)
        agent = ResidualTD3(cfg, obs_dim=3, act_dim=2)
        agent.critic, agent.critic_target = Split(), Split()
        agent.add(rows(list(range(300)), obs_dim=3, act_dim=2))
        for _ in range(300):
            agent.update()
        with torch.no_grad():
            out[k] = float(agent.actor(torch.randn(64, 3), torch.zeros(64, 2))[:, 0].abs().mean())
    assert out[0.0] > 0.09 and out[1.0] < 0.02, out


def test_critic_export_matches_the_ensemble():
    """critic.onnx is traced from an export-friendly copy of CriticEnsemble.forward (broadcast matmul, explicit
    LayerNorm): it must give the ensemble's Q values, batch-first."""
    from rlft_learner.export.package import _CriticBatchFirst
    from rlft_learner.algorithms.residual_td3.nets import CriticEnsemble
    torch.manual_seed(0)
    critic = CriticEnsemble(3, 2, hidden=16, layers=2, heads=4)
    obs, act = torch.randn(7, 3), torch.rand(7, 2) * 2 - 1
    with torch.no_grad():
        assert torch.allclose(_CriticBatchFirst(critic)(obs, act), critic(obs, act).T, atol=1e-5)


def test_bc_anchor_from_interventions_only_ignores_demo_rows():
    """actor_bc_source interventions: the anchor pulls the residual toward a_human - a_base on operator steps (rows
    from a robot), never toward a demo's action minus its relabelled base (rows with robot -1)."""
    cfg = ResidualTD3Config(actor_bc_weight=50.0, actor_bc_source="interventions", critic_warmup_updates=0,
                 learning_starts=1, policy_delay=1, critic_hidden=16, actor_hidden=16, critic_heads=2, batch_size=64,
                 actor_lr=3e-3, residual_scale=0.1)
    agent = ResidualTD3(cfg, 3, 2)
    demo = rows(list(range(200)), intervention=[1] * 200, robot=-1)
    demo["action"][:, 0] = -1.0  # demos say "go negative"
    agent.add_offline(demo)
    op = rows(list(range(1000, 1200)), intervention=[1] * 200)
    op["action"][:, 0] = 1.0  # operators say "go positive" (routed to the offline buffer too)
    agent.add(op)
    for _ in range(300):
        agent.update()
    with torch.no_grad():
        r = agent.actor(torch.zeros(8, 3), torch.zeros(8, 2))[:, 0]
    assert (r > 0.05).all(), r  # toward the operators' correction, at the box edge (0.1)
    with pytest.raises(ValueError, match="actor_bc_source"):
        load_config("", {"actor_bc_source": "demos"})


def test_env_warmup_holds_the_actor_and_publishes_a_uniform_noise_package(tmp_path):
    """warmup_env_steps (ResFiT: base + uniform noise for the first env steps): the actor does not move before that many
    online transitions arrived; a fresh learner publishes the zero residual with residual.exploration_uniform."""
    from rlft_learner.commands.serve import Learner
    from test_server import free_port
    cfg = ResidualTD3Config(warmup_env_steps=100, critic_warmup_updates=0, learning_starts=1, policy_delay=1,
                 critic_hidden=16, actor_hidden=16, critic_heads=2, batch_size=16)
    agent = ResidualTD3(cfg, 3, 2)
    agent.add(rows(list(range(50))))
    for _ in range(20):
        agent.update()
    assert agent.actor_updates == 0
    agent.add(rows(list(range(50, 100))))
    agent.update()
    agent.update()
    assert agent.actor_updates >= 1
    base = write_base(tmp_path / "base", obs_dim=3, act_dim=2)
    lr = Learner(ServeConfig(base_package=base, run_dir=str(tmp_path / "run"), warmup_env_steps=100, warmup_noise=0.2,
                        experience_bind=f"tcp://127.0.0.1:{free_port()}", policy_bind=f"tcp://127.0.0.1:{free_port()}"),
                 out=lambda _: None)
    try:
        pj = json.load(open(os.path.join(lr.packages_dir, lr.latest_version, "policy.json")))
        assert pj["residual"]["exploration_uniform"] == 0.2
    finally:
        lr.close()
    with pytest.raises(ValueError, match="warmup_noise"):
        load_config("", {"warmup_noise": 0.0})


def test_exploration_rho_reaches_the_package_and_out_of_range_is_refused(tmp_path):
    """exploration_rho (AR(1)-correlated exploration) is written into policy.json only when set; rho >= 1 is refused."""
    from rlft_learner.commands.serve import Learner
    from test_server import free_port
    base = write_base(tmp_path / "base", obs_dim=3, act_dim=2)
    cfg = ServeConfig(base_package=base, run_dir=str(tmp_path / "run"), exploration_rho=0.9,
                 experience_bind=f"tcp://127.0.0.1:{free_port()}", policy_bind=f"tcp://127.0.0.1:{free_port()}")
    lr = Learner(cfg, out=lambda _: None)
    try:
        lr.publish()
        pj = json.load(open(os.path.join(lr.packages_dir, lr.latest_version, "policy.json")))
        assert pj["residual"] == {"scale": cfg.residual_scale, "exploration_std": cfg.exploration_std, "exploration_rho": 0.9}
        _, pj = export_residual_package(lr.agent.actor, lr.base, str(tmp_path / "pk"), 0, 0.05)
        assert "exploration_rho" not in pj["residual"], "white noise (the default) leaves policy.json as before"
    finally:
        lr.close()
    for bad in (1.0, -0.1):
        with pytest.raises(ValueError, match="exploration_rho"):
            load_config("", {"exploration_rho": bad})


def test_obs_features_are_relative_positions_inside_the_exported_networks(tmp_path):
    """obs_features cube-target adds (cube - target) per shared suffix over its spread, and the distance, computed
    from the normalised observation inside actor and critic: residual.onnx and critic.onnx keep the plain `obs`
    input, and the critic export computes what the ensemble computes."""
    from rlft_learner.export.package import _CriticBatchFirst
    from rlft_learner.algorithms.residual_td3.nets import CriticEnsemble, ObsFeatures, ResidualActor
    from rlft_learner.commands.serve import make_agent
    names = ["ee.x", "ee.y", "ee.z", "cube.x", "cube.y", "target.x", "target.y"]
    mean = np.array([0.2, 0.0, 0.05, 0.2, 0.0, 0.2, 0.0], np.float32)
    std = np.array([0.05, 0.1, 0.04, 0.03, 0.04, 0.04, 0.03], np.float32)
    f = ObsFeatures(names, mean, std, "cube-target, ee-cube")
    assert f.pairs == ["cube-target", "ee-cube"] and f.extra == 6  # x, y and the distance, twice (ee.z has no partner)
    raw = np.array([[0.25, 0.1, 0.05, 0.23, -0.02, 0.20, 0.02]], np.float32)
    out = f(torch.from_numpy((raw - mean) / std))[0].numpy()
    s_ct = np.sqrt(std[3:5] ** 2 + std[5:7] ** 2)  # layout: obs (7), cube-target x y, ee-cube x y, the two distances
    np.testing.assert_allclose(out[7:9], (raw[0, 3:5] - raw[0, 5:7]) / s_ct, rtol=1e-4)
    np.testing.assert_allclose(out[11], np.hypot(0.03, -0.04) / np.sqrt(np.mean(s_ct ** 2)), rtol=1e-4)
    np.testing.assert_allclose(out[:7], (raw[0] - mean) / std, rtol=1e-5)
    with pytest.raises(ValueError, match="goal.*observations are ee.x"):
        ObsFeatures(names, mean, std, "cube-goal")
    with pytest.raises(ValueError, match="prefix pairs"):
        ObsFeatures(names, mean, std, "cube")

    torch.manual_seed(0)
    actor, critic = ResidualActor(7, 2, hidden=16, features=f), CriticEnsemble(7, 2, hidden=16, heads=3, features=f)
    torch.nn.init.normal_(actor.head.weight, std=0.1)
    obs, act = torch.randn(5, 7), torch.rand(5, 2) * 2 - 1
    with torch.no_grad():
        assert torch.allclose(_CriticBatchFirst(critic)(obs, act), critic(obs, act).T, atol=1e-5)
    base = write_base(tmp_path / "base", obs_dim=7)
    path, _ = export_residual_package(actor, BasePackage.load(base), str(tmp_path / "pk"), 1, 0.05, critic=critic)
    for file in ("residual.onnx", "critic.onnx"):
        graph = onnx.load(os.path.join(path, file)).graph
        assert [i.name for i in graph.input][0] == "obs"
        assert graph.input[0].type.tensor_type.shape.dim[1].dim_value == 7
    vec = json.load(open(os.path.join(path, "test_vectors.json")))
    with torch.no_grad():
        np.testing.assert_allclose(vec["residual"], actor(torch.tensor(vec["obs"]), torch.tensor(vec["base_action"])).numpy(), atol=1e-6)

    cfg = load_config(overrides={"obs_features": "o0-o1", "critic_heads": 2, "critic_hidden": 16, "actor_hidden": 16})
    with pytest.raises(ValueError, match="base package"):
        make_agent(cfg, 7, 2)
    with pytest.raises(ValueError, match="obs_features is a residual_td3 option"):
        load_config(overrides={"obs_features": "cube-target", "algorithm": "rlpd_sac"})


def test_the_shipped_learner_presets_are_valid_configs():
    """learner/presets/<task>.yaml (rlft session --learner-config, bench:learning's settings) load with every key known."""
    import glob
    files = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "presets", "*.yaml")))
    assert [os.path.basename(f) for f in files] == ["peg_insert.yaml", "push_cube.yaml", "so101_pick_place_pixels.yaml", "so101_push_cube_pixels.yaml"]
    peg, push, *pixel = (load_config(f) for f in files)
    assert peg.actor_residual_penalty == 1 and peg.exploration_std == 0.02 and not peg.mirror_obs
    assert push.actor_residual_penalty == 0.1 and push.mirror_obs.split(",") == ["q.shoulder_pan", "ee.y", "cube.y", "target.y"]
    # From pixels (bench:learning --robot so101 --obs pixels): none of the keys a pixel base refuses, for either algorithm.
    for cfg in pixel:
        assert cfg.image_encoder == "base" and cfg.actor_residual_penalty == 0.1
        assert not (cfg.mirror_obs or cfg.mirror_action or cfg.her_goal or cfg.obs_features or cfg.chunk_critic)
