"""The HIL-SERL / RLPD baseline: SAC from scratch with demonstrations in the offline half of every batch.

Sources: Haarnoja et al. 2018 (SAC with automatic entropy tuning, arXiv 1812.05905), CleanRL's `sac_continuous_action.py`
(network shapes, log-std squashing, alpha loss), RLPD (Ball et al. 2023, arXiv 2302.02948: LayerNorm critics, 50/50
demo/online batches, high UTD) and HIL-SERL (Luo et al. 2024, arXiv 2410.21845: 2 critics, 256x256, lr 3e-4, gamma 0.97,
target entropy -|A|/2, interventions to both buffers). See docs/algorithms.md §2. Selected in `serve` with
`algorithm: rlpd_sac`; the online loop, protocol, buffers and intervention routing are shared with the residual learner
(commands/serve.py, algorithms/offpolicy.py).

How it runs on the robot with the residual machinery: the actor is exported as a `kind: "residual"` package with
`residual.scale = 1` and the robot runs it over a **zero base** (`PolicyActor` `zeroBase`), so the executed normalised
action is `clip(0 + tanh(mu(obs)) + N(0, exploration_std^2), -1, 1)`. The behaviour policy is therefore the deterministic
mean plus Gaussian noise, not SAC's own tanh-Gaussian sample; `exploration_std` follows the policy's own spread
(mean over the last batch of (1 - tanh(mu)^2) * sigma, the first-order std of tanh(mu + sigma eps)), clipped to
[sac_exploration_min, sac_exploration_max], unless `sac_exploration_std` fixes it. Transitions arrive with
base_action = 0 (what the robot ran), and the SAC networks never read base actions.

Deviations from the published recipe, chosen for a like-for-like comparison with the residual learner (configurable):
gamma 0.99 (HIL-SERL 0.97), n-step returns with the residual learner's n (RLPD 1), the same UTD.
"""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import torch
import torch.nn as nn

from ...buffers.replay import Batch
from ...finite import StepGuard
from ..offpolicy import Experience, UsesExperience, demo_rows_from, polyak
from ..residual_td3.agent import BasePackage
from ..residual_td3.nets import CriticEnsemble
from .config import RlpdSacConfig

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0  # CleanRL


class GaussianTanhActor(nn.Module):
    """CleanRL's SAC actor: MLP -> (mean, log_std), log_std squashed into [LOG_STD_MIN, LOG_STD_MAX]; a = tanh(mean + std eps)."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 256, layers: int = 2):
        super().__init__()
        self.obs_dim, self.act_dim, self.hidden, self.layers = obs_dim, act_dim, hidden, layers
        dims = [obs_dim] + [hidden] * layers
        body: list[nn.Module] = []
        for a, b in zip(dims[:-1], dims[1:]):
            body += [nn.Linear(a, b), nn.ReLU()]
        self.body = nn.Sequential(*body)
        self.mean = nn.Linear(dims[-1], act_dim)
        self.log_std = nn.Linear(dims[-1], act_dim)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.body(obs)  # (B, hidden)
        log_std = torch.tanh(self.log_std(h))
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)  # (B, A)
        return self.mean(h), log_std

    def sample(self, obs: torch.Tensor, gen: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Reparameterised sample: (action (B, A), log_prob (B,), mean (B, A), std (B, A))."""
        mean, log_std = self(obs)
        std = log_std.exp()
        eps = torch.randn(mean.shape, generator=gen).to(mean.device)
        x = mean + std * eps
        y = torch.tanh(x)
        # log N(x; mean, std) - sum log(1 - tanh(x)^2), with CleanRL's 1e-6 guard
        log_prob = (-0.5 * eps ** 2 - log_std - 0.5 * math.log(2 * math.pi)).sum(-1) - torch.log(1 - y.pow(2) + 1e-6).sum(-1)
        return y, log_prob, mean, std


class DeterministicExport(nn.Module):
    """The exported actor: residual.onnx's signature (obs, base_action) -> tanh(mean(obs)) * scale, scale 1. The base
    action (0 on a zero-base robot) is ignored; it stays a graph input (multiplied by 0) so the robot's feed matches."""

    def __init__(self, actor: GaussianTanhActor):
        super().__init__()
        self.actor = actor
        self.obs_dim, self.act_dim, self.hidden, self.layers, self.scale = actor.obs_dim, actor.act_dim, actor.hidden, actor.layers, 1.0

    def forward(self, obs: torch.Tensor, base_action: torch.Tensor) -> torch.Tensor:
        mean, _ = self.actor(obs)
        return torch.tanh(mean) * self.scale + 0.0 * base_action  # (B, A)


class RlpdSAC(UsesExperience):
    """Same surface as ResidualTD3 (add / add_offline / updates_due / update / state_dict / counters) so `serve` runs
    either. `update()` does one critic update and, every `policy_delay`-th one, an actor and temperature update."""

    chunk = None  # no chunk critic: it ranks a base policy's chunks
    her = None  # hindsight / mirror relabelling re-runs a base policy; the config refuses them with rlpd_sac

    def __init__(self, cfg: RlpdSacConfig, obs_dim: int, act_dim: int, net_obs_dim: int | None = None):
        """`net_obs_dim`: the networks' observation width when it is not the buffers' obs_dim (algorithms/pixels:
        state + camera features)."""
        self.cfg, self.obs_dim, self.act_dim = cfg, obs_dim, act_dim
        torch.manual_seed(cfg.seed)
        self.device = torch.device(cfg.device)
        net_obs = net_obs_dim or obs_dim
        self.sac_actor = GaussianTanhActor(net_obs, act_dim, cfg.actor_hidden, cfg.actor_layers).to(self.device)
        self.actor = DeterministicExport(self.sac_actor)  # what export_residual_package writes
        self.critic = CriticEnsemble(net_obs, act_dim, cfg.critic_hidden, cfg.critic_layers, cfg.sac_critics).to(self.device)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.log_alpha = torch.tensor(math.log(cfg.sac_init_temperature), device=self.device, requires_grad=True)
        self.target_entropy = cfg.sac_target_entropy * act_dim
        self.actor_opt = torch.optim.Adam(self.sac_actor.parameters(), lr=cfg.sac_lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=cfg.sac_lr)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=cfg.sac_lr)
        # The residual learner's data handling, by composition: HIL-SERL routing (interventions unclipped: a policy
        # from scratch can express the operator's whole action), RLPD 50/50 n-step batches, the UTD clock.
        self.data = Experience(cfg, obs_dim, act_dim, self.device)
        self.online, self.offline = self.data.online, self.data.offline
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.updates = 0
        self.actor_updates = 0
        self.guard = StepGuard("rlpd_sac")
        self.policy_spread = float("nan")  # mean action-space std of the policy on the last actor batch
        with torch.no_grad():  # the spread of the untrained policy, for the first package
            _, _, mean, std = self.sac_actor.sample(torch.zeros(1, net_obs, device=self.device), self.gen)
            self.policy_spread = float(((1 - torch.tanh(mean) ** 2) * std).mean())

    @property
    def alpha(self) -> float:
        return float(self.log_alpha.exp())

    def exploration_std(self) -> float:
        """The Gaussian std the robot adds around tanh(mu) (see the module docstring)."""
        cfg = self.cfg
        if cfg.sac_exploration_std >= 0:
            return cfg.sac_exploration_std
        return float(np.clip(self.policy_spread, cfg.sac_exploration_min, cfg.sac_exploration_max))

    def update(self) -> dict[str, float]:
        return self.learn(self.sample())

    def learn(self, b: Batch, actor_obs: torch.Tensor | None = None) -> dict[str, float]:
        """The SAC step on batch `b`; `actor_obs` as in ResidualTD3.learn (None = b.obs)."""
        cfg = self.cfg
        alpha = self.log_alpha.exp().detach()
        with torch.no_grad():
            a_next, logp_next, _, _ = self.sac_actor.sample(b.next_obs, self.gen)
            q_next = self.critic_target(b.next_obs, a_next).min(dim=0).values  # (B,), clipped double Q
            if cfg.sac_backup_entropy:
                q_next = q_next - alpha * logp_next
            y = b.ret + b.discount * q_next  # n-step target; discount 0 after a success
        q = self.critic(b.obs, b.action)  # (E, B): the executed action (policy + noise, or the operator's)
        critic_loss = ((q - y.unsqueeze(0)) ** 2).mean(dim=1).sum()
        self.updates += 1  # the UTD clock advances also when the step is skipped (finite.StepGuard)
        out: dict[str, float] = {}
        if self.guard.step("critic", critic_loss, self.critic_opt):
            polyak(self.critic, self.critic_target, cfg.tau)
            out = {"losses/critic": critic_loss.item() / cfg.sac_critics, "charts/q_mean": q.mean().item()}
        if self.updates % cfg.policy_delay == 0:
            a_obs = b.obs if actor_obs is None else actor_obs
            a, logp, mean, std = self.sac_actor.sample(a_obs, self.gen)
            q_pi = self.critic(a_obs, a).min(dim=0).values  # (B,)
            actor_loss = (alpha * logp - q_pi).mean()
            if not self.guard.step("actor", actor_loss, self.actor_opt):
                return out
            alpha_loss = (-self.log_alpha.exp() * (logp.detach() + self.target_entropy)).mean()  # CleanRL
            self.guard.step("alpha", alpha_loss, self.alpha_opt)
            self.actor_updates += 1
            self.policy_spread = float(((1 - torch.tanh(mean.detach()) ** 2) * std.detach()).mean())
            out.update({"losses/actor": actor_loss.item(), "losses/alpha": alpha_loss.item(), "charts/alpha": self.alpha,
                        "charts/entropy": -logp.detach().mean().item(), "charts/policy_spread": self.policy_spread})
        return out

    # -- checkpoints --
    def state_dict(self) -> dict:
        return {"actor": self.sac_actor.state_dict(), "critic": self.critic.state_dict(),
                "critic_target": self.critic_target.state_dict(), "log_alpha": self.log_alpha.detach().clone(),
                "actor_opt": self.actor_opt.state_dict(), "critic_opt": self.critic_opt.state_dict(),
                "alpha_opt": self.alpha_opt.state_dict(),
                "counters": {"updates": self.updates, "actor_updates": self.actor_updates, **self.data.counters()},
                "policy_spread": torch.tensor(self.policy_spread),
                "torch_rng": self.gen.get_state(), "np_rng": json.dumps(self.data.rng.bit_generator.state)}

    def load_state_dict(self, state: dict) -> None:
        self.sac_actor.load_state_dict(state["actor"])
        for name in ("critic", "critic_target", "actor_opt", "critic_opt", "alpha_opt"):
            getattr(self, name).load_state_dict(state[name])
        with torch.no_grad():
            self.log_alpha.copy_(state["log_alpha"])
        for k, v in state["counters"].items():
            setattr(self.data if k in ("env_steps", "intervention_steps") else self, k, int(v))
        self.policy_spread = float(state["policy_spread"])
        self.gen.set_state(state["torch_rng"])
        self.data.rng.bit_generator.state = json.loads(state["np_rng"])


def zero_base_demo_rows(path: str, base: BasePackage) -> dict[str, np.ndarray]:
    """Offline rows from a train-bc .npz for a zero-base learner: base_action = next_base_action = 0 (no relabelling,
    SAC never reads them). Success ends an episode (terminated); other episode ends are truncations."""
    def copies(ep):
        zeros = np.zeros((len(ep.obs), len(base.action_names)), np.float32)
        yield base.norm_obs(ep.obs), base.norm_action(ep.action), zeros

    return demo_rows_from(path, base, copies)
