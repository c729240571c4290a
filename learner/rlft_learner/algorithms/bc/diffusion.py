"""Diffusion Policy model (Chi et al. 2023, arXiv 2303.04137) with an MLP noise-prediction network.

No training code here (nanoGPT style). `NoisePredictionNet` predicts the noise added to a normalised action chunk,
conditioned on the flattened normalised observation history and the diffusion timestep. `DDIMSampler` is the
deterministic DDIM loop (Song et al. 2021, arXiv 2010.02502, eta = 0) over a fixed list of timesteps, written so that
`torch.onnx.export` tracing unrolls it into one graph.

RECAP (pi*0.6, arXiv 2511.14759; docs/algorithms.md §3): a network built with `indicator=1` also takes an advantage
indicator per sample (0 negative, 1 positive, 2 unconditioned = "dropped"), as a learned embedding added to the
timestep embedding. The embedding starts at zero, so a network loaded from a BC checkpoint starts as that policy.
The sampler can combine a conditioned and an unconditioned pass with classifier-free guidance (Ho & Salimans 2022,
arXiv 2207.12598): eps = eps_u + beta (eps_c - eps_u); beta = 1 is the conditioned pass alone.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ModelConfig:
    """Shapes and sizes of the noise-prediction network; saved with the weights in model.pt."""

    obs_dim: int
    action_dim: int
    history: int = 2
    horizon: int = 16
    hidden: int = 256
    blocks: int = 3
    time_dim: int = 64
    indicator: int = 0  # 1: takes the RECAP advantage indicator (NEGATIVE / POSITIVE / UNCONDITIONED) as an input

    def to_dict(self) -> dict:
        # Plain ints only: model.pt must load with torch.load(weights_only=True), which rejects numpy scalars.
        return {k: int(v) for k, v in asdict(self).items()}


NEGATIVE, POSITIVE, UNCONDITIONED = 0, 1, 2  # indicator values (policy.json advantage.values)


def cfg_combine(eps_cond: torch.Tensor, eps_uncond: torch.Tensor, beta: float) -> torch.Tensor:
    """Classifier-free guidance: eps_u + beta (eps_c - eps_u). Same float32 arithmetic as policies/advantage.ts."""
    return eps_uncond + beta * (eps_cond - eps_uncond)


def squared_cosine_alphas_cumprod(train_timesteps: int = 100, max_beta: float = 0.999) -> np.ndarray:
    """alpha_bar_t of the squared-cosine schedule (Nichol & Dhariwal 2021, arXiv 2102.09672; diffusers `squaredcos_cap_v2`)."""
    def alpha_bar(t: float) -> float:
        return math.cos((t + 0.008) / 1.008 * math.pi / 2) ** 2

    betas = [min(1 - alpha_bar((i + 1) / train_timesteps) / alpha_bar(i / train_timesteps), max_beta)
             for i in range(train_timesteps)]
    return np.cumprod(1.0 - np.asarray(betas, dtype=np.float64)).astype(np.float32)  # (T_train,)


def ddim_timesteps(train_timesteps: int = 100, steps: int = 10) -> list[int]:
    """Descending DDIM timesteps with "leading" spacing (diffusers DDIMScheduler): 90, 80, ..., 0 for 100/10."""
    ratio = train_timesteps // steps
    return [i * ratio for i in reversed(range(steps))]


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding of integer timesteps (Vaswani et al. 2017), t (B,) -> (B, dim)."""
    half = dim // 2
    freqs = torch.exp(torch.arange(half, dtype=torch.float32, device=t.device) * (-math.log(10000.0) / (half - 1)))  # (half,)
    args = t.to(torch.float32)[:, None] * freqs[None, :]  # (B, half)
    return torch.cat([torch.sin(args), torch.cos(args)], dim=-1)  # (B, dim)


class ResidualBlock(nn.Module):
    """Pre-LayerNorm MLP block with FiLM conditioning (Perez et al. 2018), as Diffusion Policy conditions its U-Net."""

    def __init__(self, hidden: int, cond_dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, hidden * 2)
        self.fc2 = nn.Linear(hidden * 2, hidden)
        self.film = nn.Linear(cond_dim, hidden * 2)

    def forward(self, h: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        scale, shift = self.film(cond).chunk(2, dim=-1)  # (B, hidden) each
        z = self.norm(h) * (1 + scale) + shift  # (B, hidden)
        z = self.fc2(F.mish(self.fc1(z)))  # (B, hidden)
        return h + z


class NoisePredictionNet(nn.Module):
    """eps_theta(obs, x_t, t): obs (B, history*obs_dim), x (B, horizon, action_dim), t int64 (B,) -> eps like x."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        obs_in, act_in = cfg.history * cfg.obs_dim, cfg.horizon * cfg.action_dim
        self.time_mlp = nn.Sequential(nn.Linear(cfg.time_dim, cfg.time_dim * 2), nn.Mish(), nn.Linear(cfg.time_dim * 2, cfg.time_dim))
        cond_dim = obs_in + cfg.time_dim
        self.inp = nn.Linear(act_in + cond_dim, cfg.hidden)
        self.blocks = nn.ModuleList([ResidualBlock(cfg.hidden, cond_dim) for _ in range(cfg.blocks)])
        self.out_norm = nn.LayerNorm(cfg.hidden)
        self.out = nn.Linear(cfg.hidden, act_in)
        if cfg.indicator:
            self.indicator_emb = nn.Embedding(3, cfg.time_dim)
            nn.init.zeros_(self.indicator_emb.weight)  # starts as the unconditioned (BC) network

    def forward(self, obs: torch.Tensor, x: torch.Tensor, t: torch.Tensor, indicator: torch.Tensor | None = None) -> torch.Tensor:
        temb = self.time_mlp(timestep_embedding(t, self.cfg.time_dim))  # (B, time_dim)
        if self.cfg.indicator:
            if indicator is None:
                indicator = torch.full_like(t, UNCONDITIONED)
            temb = temb + self.indicator_emb(indicator)  # (B, time_dim)
        cond = torch.cat([obs, temb], dim=-1)  # (B, history*obs_dim + time_dim)
        h = self.inp(torch.cat([x.flatten(1), cond], dim=-1))  # (B, hidden)
        for block in self.blocks:
            h = block(h, cond)  # (B, hidden)
        eps = self.out(F.mish(self.out_norm(h)))  # (B, horizon*action_dim)
        return eps.reshape(-1, self.cfg.horizon, self.cfg.action_dim)  # (B, horizon, action_dim)


def add_noise(x0: torch.Tensor, noise: torch.Tensor, t: torch.Tensor, alphas_cumprod: torch.Tensor) -> torch.Tensor:
    """Forward process q(x_t | x_0) = sqrt(a_t) x_0 + sqrt(1 - a_t) eps (Ho et al. 2020, arXiv 2006.11239)."""
    a = alphas_cumprod[t].view(-1, 1, 1)  # (B, 1, 1)
    return a.sqrt() * x0 + (1 - a).sqrt() * noise  # (B, H, A)


class DDIMSampler(nn.Module):
    """Deterministic DDIM (eta = 0) from noise to a normalised action chunk, clipping x0 to [-1, 1] at every step.

    Step i at t = timesteps[i], with a_t = alphas_cumprod[t] and a_prev = alphas_cumprod[timesteps[i+1]] (1.0 after
    the last step, diffusers' `set_alpha_to_one`):
        eps = net(obs, x, t);  x0 = clip((x - sqrt(1-a_t) eps) / sqrt(a_t), -1, 1);  x = sqrt(a_prev) x0 + sqrt(1-a_prev) eps
    The coefficients are Python floats, so tracing bakes them into the graph and unrolls the loop.
    With an indicator network, `indicator` (B,) int64 conditions every step; with `cfg_beta` != 1 each step runs the
    conditioned and the unconditioned pass as one batch of 2B and combines them (`cfg_combine`).
    """

    def __init__(self, net: NoisePredictionNet, alphas_cumprod: np.ndarray, timesteps: list[int], cfg_beta: float = 1.0):
        super().__init__()
        self.net = net
        self.cfg_beta = float(cfg_beta)
        if self.cfg_beta != 1.0 and not net.cfg.indicator:
            raise ValueError(f"cfg_beta {cfg_beta} needs a network with an indicator input (guidance combines conditioned and unconditioned passes)")
        ac = [float(a) for a in np.asarray(alphas_cumprod, dtype=np.float32)]
        prev = [ac[t] for t in timesteps[1:]] + [1.0]
        self.steps = [(int(t), ac[t], a_prev) for t, a_prev in zip(timesteps, prev)]

    def eps(self, obs: torch.Tensor, x: torch.Tensor, t: torch.Tensor, indicator: torch.Tensor | None) -> torch.Tensor:
        """The (guided) noise prediction of one step."""
        if self.cfg_beta == 1.0:
            return self.net(obs, x, t, indicator)  # (B, H, A)
        both = self.net(torch.cat([obs, obs]), torch.cat([x, x]), torch.cat([t, t]),
                        torch.cat([indicator, torch.full_like(indicator, UNCONDITIONED)]))  # (2B, H, A)
        eps_c, eps_u = both.chunk(2)  # (B, H, A) each
        return cfg_combine(eps_c, eps_u, self.cfg_beta)

    def forward(self, obs: torch.Tensor, noise: torch.Tensor, indicator: torch.Tensor | None = None) -> torch.Tensor:
        x = noise  # (B, H, A)
        ones = torch.ones_like(noise[:, 0, 0], dtype=torch.int64)  # (B,) keeps the batch axis dynamic under tracing
        if self.net.cfg.indicator and indicator is None:
            indicator = ones * POSITIVE
        for t, a_t, a_prev in self.steps:
            eps = self.eps(obs, x, ones * t, indicator)  # (B, H, A)
            x0 = ((x - math.sqrt(1 - a_t) * eps) / math.sqrt(a_t)).clamp(-1.0, 1.0)  # (B, H, A)
            x = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * eps  # (B, H, A)
        return x.clamp(-1.0, 1.0)  # (B, H, A)


class PixelSampler(nn.Module):
    """The exported sampler of a policy that sees cameras: the camera encoders run once per chunk, then the DDIM loop
    runs on cond = [normalised state history, camera features] (the noise network's `obs`).

    Inputs in ONNX order: obs (B, history*state_dim), one uint8 (B, H, W, 3) image per camera, noise, [indicator]."""

    def __init__(self, encoders: nn.Module, sampler: DDIMSampler):
        super().__init__()
        self.encoders = encoders
        self.sampler = sampler
        self.n_cameras = len(encoders.cameras)

    def forward(self, obs: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
        images, noise, indicator = rest[:self.n_cameras], rest[self.n_cameras], (rest[self.n_cameras + 1:] or (None,))[0]
        cond = torch.cat([obs, self.encoders(*images)], dim=-1)  # (B, history*state_dim + n_cameras*features)
        return self.sampler(cond, noise, indicator)  # (B, H, A)
