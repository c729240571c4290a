"""Residual off-policy RL on top of a frozen BC policy: ResFiT (Ankile et al. 2025, arXiv 2509.19301) with
TD3 (Fujimoto et al. 2018, arXiv 1802.09477), a REDQ critic ensemble (Chen et al. 2021, arXiv 2101.05982),
RLPD 50/50 batches (Ball et al. 2023, arXiv 2302.02948) and HIL-SERL intervention routing (Luo et al. 2024,
arXiv 2410.21845). See docs/algorithms.md §1-2. The online loop that feeds it is commands/serve.py.

The robot runs the base policy and adds `residual = tanh(MLP([obs_norm, a_base])) * scale`; it sends every step as a
transition (docs/protocol.md). Here the critic learns Q(s, executed action) from n-step sparse-reward returns and the
actor learns a residual that maximises the mean Q of the ensemble.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from dataclasses import dataclass

import numpy as np
import torch

from ...buffers.replay import Batch, ReplayBuffer
from ...finite import StepGuard
from ..offpolicy import Experience, UsesExperience, demo_rows_from, polyak
from .chunk_critic import ChunkCritic, mirrored_rows
from .config import ResidualTD3Config
from .nets import CriticEnsemble, ObsFeatures, ResidualActor, combine


# ---------------------------------------------------------------------------------------------------------------------
# Base package: the frozen BC policy the residual corrects.

@dataclass
class BasePackage:
    """What the residual learner needs from the BC package's policy.json."""

    path: str
    version: str
    policy_json_sha256: str
    task: str
    obs_names: list[str]
    obs_mean: np.ndarray
    obs_std: np.ndarray
    action_names: list[str]
    act_min: np.ndarray
    act_max: np.ndarray
    policy: dict

    @staticmethod
    def load(path: str) -> "BasePackage":
        pj = os.path.join(path, "policy.json")
        if not os.path.isfile(pj):
            raise ValueError(f"base_package {path!r} has no policy.json — point base_package at a train-bc package directory")
        raw = open(pj, "rb").read()
        policy = json.loads(raw)
        try:
            obs, act = policy["observation"], policy["action"]
            return BasePackage(path=path, version=policy["version"], policy_json_sha256=hashlib.sha256(raw).hexdigest(),
                               task=policy.get("provenance", {}).get("task", "task"), obs_names=list(obs["names"]),
                               obs_mean=np.asarray(obs["mean"], np.float32), obs_std=np.asarray(obs["std"], np.float32),
                               action_names=list(act["names"]), act_min=np.asarray(act["min"], np.float32),
                               act_max=np.asarray(act["max"], np.float32), policy=policy)
        except KeyError as exc:
            raise ValueError(f"{pj}: missing key {exc}; expected a policy package (docs/contracts.md)") from None

    @property
    def cameras(self) -> dict[str, tuple[int, int]]:
        """Camera -> (H, W) of the frames the base reads (policy.json observation.images); {} for a state policy."""
        return {str(e["camera"]): (int(e["height"]), int(e["width"])) for e in self.policy["observation"].get("images", [])}

    @property
    def execute_steps(self) -> int:
        """K: actions the robot executes from each chunk before re-planning (policy.json action.execute_steps)."""
        return int(self.policy["action"].get("execute_steps", 8))

    def norm_obs(self, obs: np.ndarray) -> np.ndarray:
        return ((obs - self.obs_mean) / self.obs_std).astype(np.float32)

    def norm_action(self, act: np.ndarray) -> np.ndarray:
        return np.clip(2 * (act - self.act_min) / (self.act_max - self.act_min) - 1, -1, 1).astype(np.float32)


# ---------------------------------------------------------------------------------------------------------------------
# Intervention routing (HIL-SERL, docs/algorithms.md §2).

def clip_interventions(rows: dict[str, np.ndarray], scale: float) -> dict[str, np.ndarray]:
    """For intervention steps, store base + clip(a_human - a_base, -scale, scale): the residual target is the human
    correction clipped to what the residual can express (docs/algorithms.md §2). Unclipped, the critic credits large
    operator actions far outside the residual's box and the actor chases their average direction out of context."""
    mask = rows["intervention"] > 0.5
    if not mask.any():
        return rows
    out = dict(rows)
    base = rows["base_action"][mask]
    out["action"] = rows["action"].copy()
    out["action"][mask] = np.clip(base + np.clip(rows["action"][mask] - base, -scale, scale), -1, 1)
    return out

def redq_target(q_next: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """min over 2 randomly chosen heads of the target ensemble (REDQ, M = 2); q_next (E, B) -> (B,)."""
    pick = torch.randperm(q_next.shape[0], generator=gen)[:2]
    return q_next[pick].min(dim=0).values


# ---------------------------------------------------------------------------------------------------------------------
# The agent.

class ResidualTD3(UsesExperience):
    """Networks, optimisers, buffers and counters; `add()` takes received rows, `update()` runs one critic update
    (and every `policy_delay`-th time, after the critic warm-up, one actor update)."""

    def __init__(self, cfg: ResidualTD3Config, obs_dim: int, act_dim: int, features: ObsFeatures | None = None,
                 net_obs_dim: int | None = None):
        """`features`: the relative observation features of `obs_features` (built from the base package by
        commands/serve.py make_agent), shared by actor and critic; None = the normalised observation alone.
        `net_obs_dim`: the networks' observation width when it is not the buffers' obs_dim (algorithms/pixels: state +
        camera features)."""
        self.cfg, self.obs_dim, self.act_dim = cfg, obs_dim, act_dim
        torch.manual_seed(cfg.seed)
        self.device = torch.device(cfg.device)
        net_obs = net_obs_dim or obs_dim
        self.actor = ResidualActor(net_obs, act_dim, cfg.actor_hidden, cfg.actor_layers, cfg.residual_scale,
                                   features=copy.deepcopy(features)).to(self.device)
        self.critic = CriticEnsemble(net_obs, act_dim, cfg.critic_hidden, cfg.critic_layers, cfg.critic_heads,
                                     features=copy.deepcopy(features)).to(self.device)
        self.actor_target = copy.deepcopy(self.actor).requires_grad_(False)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.actor_opt = torch.optim.AdamW(self.actor.parameters(), lr=cfg.actor_lr, weight_decay=cfg.weight_decay)
        self.critic_opt = torch.optim.AdamW(self.critic.parameters(), lr=cfg.critic_lr, weight_decay=cfg.weight_decay)
        # Buffers, routing, batches and the UTD clock (shared with RlpdSAC by composition: offpolicy.Experience).
        self.data = Experience(cfg, obs_dim, act_dim, self.device, cfg.her_capacity if cfg.relabels else 0,
                               cfg.relabelled_share)
        self.online, self.offline = self.data.online, self.data.offline
        #: Relabelled copies of finished episodes: hindsight goals (her.py, `her_goal`) and mirrored episodes
        #: (mirror.py, `mirror_obs`), each kind under its own pseudo-robot; None when neither is set.
        self.her: ReplayBuffer | None = self.data.her
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.updates = 0  # critic updates
        self.actor_updates = 0
        self.chunk: ChunkCritic | None = None  # the optional chunk-level critic (enable_chunk_critic)
        self.chunk_mirror = None
        self.guard = StepGuard("residual_td3")  # skips optimiser steps on non-finite losses/gradients, counts them

    def enable_chunk_critic(self, k: int, mirror=None) -> None:
        """Train a chunk critic over windows of the base package's K = action.execute_steps (chunk_critic.py). With
        `mirror` (mirror.Mirror, from mirror_obs) it also learns from every online step reflected: the windows of
        the mirrored stream, whose chunk is the reflection of the base chunk the robot ran (chunk_critic.py)."""
        cfg = self.cfg
        self.chunk_mirror = mirror
        self.chunk = ChunkCritic(k, self.obs_dim, self.act_dim, gamma=cfg.gamma, hidden=cfg.critic_hidden,
                                 layers=cfg.critic_layers, heads=cfg.critic_heads, lr=cfg.critic_lr,
                                 weight_decay=cfg.weight_decay, tau=cfg.tau, grad_clip=cfg.grad_clip,
                                 batch_size=cfg.batch_size, seed=cfg.seed, device=self.device)

    # -- data (the rest from offpolicy.UsesExperience) --
    def add(self, rows: dict[str, np.ndarray]) -> None:
        if self.cfg.intervention_action == "clipped":
            rows = clip_interventions(rows, self.cfg.residual_scale)
        if self.chunk is not None and "step" in rows:
            self.chunk.windows.add(rows)
            if self.chunk_mirror is not None:
                self.chunk.windows.add(mirrored_rows(rows, self.chunk_mirror))
        self.data.add(rows)

    def add_her(self, rows: dict[str, np.ndarray]) -> None:
        """Relabelled copies of finished episodes (her.py, mirror.py): their own buffer."""
        self.data.add_her(rows)

    # -- learning --
    def _smoothed_residual(self, obs: torch.Tensor, base: torch.Tensor) -> torch.Tensor:
        """Target policy smoothing (TD3), noise scaled to the residual's range: std 0.2*scale, clipped at 0.3*scale."""
        cfg, s = self.cfg, self.cfg.residual_scale
        res = self.actor_target(obs, base)  # (B, A)
        noise = (torch.randn(res.shape, generator=self.gen) * cfg.target_noise * s).to(res.device)
        noise = noise.clamp(-cfg.target_noise_clip * s, cfg.target_noise_clip * s)
        return (res + noise).clamp(-s, s)

    def update(self) -> dict[str, float]:
        """One critic update (+ maybe one actor update) on a sampled batch; returns metrics."""
        return self.learn(self.sample())

    def learn(self, b: Batch, actor_obs: torch.Tensor | None = None) -> dict[str, float]:
        """The TD3 step on batch `b`. `actor_obs`: what the actor update reads instead of b.obs (algorithms/pixels' own
        encoders: the features detached from the critic's graph, DrQ-v2); None = b.obs."""
        cfg = self.cfg
        with torch.no_grad():
            next_action = combine(b.next_base_action, self._smoothed_residual(b.next_obs, b.next_base_action))  # (B, A)
            q_next = redq_target(self.critic_target(b.next_obs, next_action), self.gen)  # (B,)
            # n-step TD target; `discount` is 0 after a success (terminal) and gamma^k otherwise (replay.py).
            y = b.ret + b.discount * q_next  # (B,)
        q = self.critic(b.obs, b.action)  # (E, B): the critic scores the executed (combined / human) action
        critic_loss = ((q - y.unsqueeze(0)) ** 2).mean(dim=1).sum()  # every head regresses to the same target (REDQ)
        self.updates += 1  # the UTD clock advances also when the step is skipped (finite.StepGuard)
        out: dict[str, float] = {}
        if self.guard.step("critic", critic_loss, self.critic_opt, None, cfg.grad_clip):  # None: every param the optimiser steps
            polyak(self.critic, self.critic_target, cfg.tau)
            out = {"losses/critic": critic_loss.item() / cfg.critic_heads, "charts/q_mean": q.mean().item()}
        if self.chunk is not None and self.updates % cfg.chunk_critic_every == 0:
            out.update(self.chunk.update())
        # Delayed actor updates (TD3), only after the critic warm-up (ResFiT: critic-only updates before the actor moves).
        if self.updates > cfg.critic_warmup_updates and self.env_steps >= cfg.warmup_env_steps and self.updates % cfg.policy_delay == 0:
            a_obs = b.obs if actor_obs is None else actor_obs
            residual = self.actor(a_obs, b.base_action)  # (B, A)
            q_pi = self.critic(a_obs, combine(b.base_action, residual))  # (E, B)
            if cfg.actor_pessimism > 0:
                # Lower confidence bound over the heads (E, B) -> (1, B); the std term carries gradient too.
                q_pi = (q_pi.mean(dim=0) - cfg.actor_pessimism * q_pi.std(dim=0)).unsqueeze(0)
            n_off, s = self.data.n_off, cfg.residual_scale
            # With a regulariser, Q is normalised by its mean magnitude so the weight does not depend on the reward scale.
            q_norm = -q_pi.mean() / q_pi.abs().mean().detach().clamp_min(1e-6)
            actor_loss = q_norm if cfg.actor_residual_penalty > 0 or cfg.actor_bc_weight > 0 else -q_pi.mean()
            if cfg.actor_residual_penalty > 0:
                # Trust region around the base.
                pen = ((residual / s) ** 2).mean()
                actor_loss = actor_loss + cfg.actor_residual_penalty * pen
                out["losses/actor_residual_penalty"] = pen.item()
            if cfg.actor_bc_weight > 0 and n_off > 0:
                # TD3+BC: the anchor pulls the residual toward what the demo / operator did relative to the base, inside the box.
                mask = (self.data.off_intervention if cfg.actor_bc_source == "interventions" else torch.ones(n_off, dtype=torch.bool, device=b.action.device))
                if bool(mask.any()):
                    target = (b.action[-n_off:][mask] - b.base_action[-n_off:][mask]).clamp(-s, s)  # (M, A)
                    bc = ((residual[-n_off:][mask] - target) ** 2).mean() / (s * s)
                    actor_loss = actor_loss + cfg.actor_bc_weight * bc
                    out["losses/actor_bc"] = bc.item()
            if self.guard.step("actor", actor_loss, self.actor_opt, self.actor.parameters(), cfg.grad_clip):
                polyak(self.actor, self.actor_target, cfg.tau)
                self.actor_updates += 1
                out["losses/actor"] = actor_loss.item()
                out["charts/residual_abs"] = residual.detach().abs().mean().item()
            else:
                out.pop("losses/actor_residual_penalty", None)
                out.pop("losses/actor_bc", None)
        return out

    # -- checkpoints --
    def state_dict(self) -> dict:
        return {"actor": self.actor.state_dict(), "critic": self.critic.state_dict(),
                "actor_target": self.actor_target.state_dict(), "critic_target": self.critic_target.state_dict(),
                "actor_opt": self.actor_opt.state_dict(), "critic_opt": self.critic_opt.state_dict(),
                "counters": {"updates": self.updates, "actor_updates": self.actor_updates, **self.data.counters()},
                "torch_rng": self.gen.get_state(), "np_rng": json.dumps(self.data.rng.bit_generator.state),
                **({"chunk": self.chunk.state_dict()} if self.chunk is not None else {})}

    def load_state_dict(self, state: dict) -> None:
        for name in ("actor", "critic", "actor_target", "critic_target", "actor_opt", "critic_opt"):
            getattr(self, name).load_state_dict(state[name])
        for k, v in state["counters"].items():
            setattr(self.data if k in ("env_steps", "intervention_steps") else self, k, int(v))
        self.gen.set_state(state["torch_rng"])
        self.data.rng.bit_generator.state = json.loads(state["np_rng"])
        if self.chunk is not None and "chunk" in state:
            self.chunk.load_state_dict(state["chunk"])


# ---------------------------------------------------------------------------------------------------------------------
# Demonstrations -> offline rows (optional).

def demo_rows(path: str, base: BasePackage, noise_scale: float = 1.0, mirror=None) -> dict[str, np.ndarray]:
    """Offline rows from a train-bc .npz. As in ResFiT, base_action is relabelled by running the frozen base policy on
    the demo observations once at load: chunks predicted every `execute_steps` steps and executed open-loop, as the robot
    does, from initial noise x `noise_scale` (the robot's sampling temperature). Success ends an episode (terminated);
    other episode ends are truncations. With `mirror` (mirror.Mirror), every demo is followed by its mirrored copy,
    whose base actions are the base's on the mirrored observations. Over a base that sees cameras the relabelling
    reads the demos' frames too (and the rows carry them, offpolicy.demo_rows_from)."""
    from ...buffers.her import base_actions, load_base_sampler

    sampler, mcfg = load_base_sampler(base.path)
    execute = base.execute_steps
    gen = torch.Generator().manual_seed(0)
    encoders = None
    if base.cameras:
        from ..pixels.nets import load_base_encoders
        encoders = load_base_encoders(base.path)

    def copies(ep):
        frames = {c: ep.images[c][None] for c in base.cameras}  # (1, T, H, W, 3) each; checked by demo_rows_from
        for flip in (False, True) if mirror is not None else (False,):
            obs_n = base.norm_obs(ep.obs)  # (T, obs_dim)
            act_n = base.norm_action(ep.action)  # (T, A)
            if flip:
                obs_n, act_n = mirror.obs(obs_n), mirror.action(act_n)
            yield obs_n, act_n, base_actions(sampler, mcfg, obs_n[None], execute, noise_scale, gen, encoders, frames)[0]  # (T, A)

    return demo_rows_from(path, base, copies)
