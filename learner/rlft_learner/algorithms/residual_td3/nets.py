"""Networks of the residual learner (ResFiT, Ankile et al. 2025, arXiv 2509.19301): no training code here."""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ObsFeatures(nn.Module):
    """Relative features appended to the normalised observation: for each pair "A-B" of observation prefixes, the
    differences A.s - B.s over the suffixes s both have (e.g. cube.x - target.x, cube.y - target.y) and their
    Euclidean distance, in physical units divided by the difference's spread (sqrt(std_A^2 + std_B^2), the package's
    stats). Success in goal-reaching tasks is a function of such a distance; an MLP on absolute positions has to learn
    it from the data. A fixed map inside the network, so the exported ONNX takes the same `obs` input as without it."""

    def __init__(self, names: list[str], mean, std, spec: str):
        super().__init__()
        ia: list[int] = []
        ib: list[int] = []
        group: list[int] = []
        self.pairs: list[str] = []
        for pair in (p.strip() for p in spec.split(",") if p.strip()):
            a, sep, b = pair.partition("-")
            if not sep or not a or not b:
                raise ValueError(f"config: obs_features items are prefix pairs like cube-target; found {pair!r}")
            sa = {n[len(a) + 1:]: i for i, n in enumerate(names) if n.startswith(a + ".")}
            sb = {n[len(b) + 1:]: i for i, n in enumerate(names) if n.startswith(b + ".")}
            common = [s for s in sa if s in sb]
            if not common:
                raise ValueError(f"config: obs_features pair {pair!r} matches no observation suffix shared by {a}.* and "
                                 f"{b}.*; the base package's observations are {', '.join(names)}")
            for s in common:
                ia.append(sa[s])
                ib.append(sb[s])
                group.append(len(self.pairs))
            self.pairs.append(pair)
        mean = torch.as_tensor(mean, dtype=torch.float32)
        std = torch.as_tensor(std, dtype=torch.float32)
        ia_t, ib_t = torch.tensor(ia), torch.tensor(ib)
        spread = torch.sqrt(std[ia_t] ** 2 + std[ib_t] ** 2)
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)
        self.register_buffer("ia", ia_t)
        self.register_buffer("ib", ib_t)
        self.register_buffer("spread", spread)
        # (pairs, diffs) 0/1 matrix summing squared differences per pair; the distance's scale is the RMS spread.
        member = torch.zeros(len(self.pairs), len(ia))
        member[torch.tensor(group), torch.arange(len(ia))] = 1.0
        self.register_buffer("member", member)
        self.register_buffer("dist_scale", torch.sqrt((member @ spread ** 2) / member.sum(1)))
        self.extra = len(ia) + len(self.pairs)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        raw = obs * self.std + self.mean  # (..., obs_dim), physical units
        diff = raw[..., self.ia] - raw[..., self.ib]  # (..., D)
        dist = torch.sqrt(diff ** 2 @ self.member.t() + 1e-12)  # (..., P)
        return torch.cat([obs, diff / self.spread, dist / self.dist_scale], dim=-1)


def _in_dim(obs_dim: int, features: ObsFeatures | None) -> int:
    return obs_dim + (features.extra if features is not None else 0)


class ResidualActor(nn.Module):
    """a_res = tanh(MLP([obs_norm, base_action])) * scale. The last layer starts at zero, so training starts exactly
    at the base policy (ResFiT §3; Policy Decorator, arXiv 2412.13630, bounds the residual the same way)."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 256, layers: int = 2, scale: float = 0.1,
                 features: ObsFeatures | None = None):
        super().__init__()
        self.obs_dim, self.act_dim, self.hidden, self.layers, self.scale = obs_dim, act_dim, hidden, layers, scale
        self.features = features
        dims = [_in_dim(obs_dim, features) + act_dim] + [hidden] * layers
        body: list[nn.Module] = []
        for a, b in zip(dims[:-1], dims[1:]):
            body += [nn.Linear(a, b), nn.ReLU()]
        self.body = nn.Sequential(*body)
        self.head = nn.Linear(dims[-1], act_dim)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, obs: torch.Tensor, base_action: torch.Tensor) -> torch.Tensor:
        if self.features is not None:
            obs = self.features(obs)
        h = self.body(torch.cat([obs, base_action], dim=-1))  # (B, hidden)
        return torch.tanh(self.head(h)) * self.scale  # (B, A)


def combine(base_action: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
    """Executed action in normalised space: clip(a_base + a_res, -1, 1) (docs/protocol.md)."""
    return torch.clamp(base_action + residual, -1.0, 1.0)


class CriticEnsemble(nn.Module):
    """E independent Q heads (Linear -> LayerNorm -> ReLU) x layers -> Linear(1), evaluated as one batched matmul over
    stacked weights. LayerNorm in the critic follows RLPD (Ball et al. 2023, arXiv 2302.02948) and ResFiT."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 256, layers: int = 2, heads: int = 10,
                 features: ObsFeatures | None = None):
        super().__init__()
        self.heads = heads
        self.features = features
        dims = [_in_dim(obs_dim, features) + act_dim] + [hidden] * layers + [1]
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for a, b in zip(dims[:-1], dims[1:]):
            # nn.Linear's default init, per head: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
            bound = 1.0 / math.sqrt(a)
            self.weights.append(nn.Parameter(torch.empty(heads, a, b).uniform_(-bound, bound)))
            self.biases.append(nn.Parameter(torch.empty(heads, 1, b).uniform_(-bound, bound)))
        self.ln_gain = nn.ParameterList([nn.Parameter(torch.ones(heads, 1, hidden)) for _ in range(layers)])
        self.ln_bias = nn.ParameterList([nn.Parameter(torch.zeros(heads, 1, hidden)) for _ in range(layers)])

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """Q values of every head: (E, B)."""
        if self.features is not None:
            obs = self.features(obs)
        x = torch.cat([obs, action], dim=-1).unsqueeze(0).expand(self.heads, -1, -1)  # (E, B, in)
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = torch.baddbmm(b, x, w)  # (E, B, out)
            if i < len(self.ln_gain):
                x = F.layer_norm(x, x.shape[-1:]) * self.ln_gain[i] + self.ln_bias[i]
                x = F.relu(x)
        return x.squeeze(-1)  # (E, B)
