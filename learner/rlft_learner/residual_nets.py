"""Networks of the residual learner (ResFiT, Ankile et al. 2025, arXiv 2509.19301): no training code here."""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualActor(nn.Module):
    """a_res = tanh(MLP([obs_norm, base_action])) * scale. The last layer starts at zero, so training starts exactly
    at the base policy (ResFiT §3; Policy Decorator, arXiv 2412.13630, bounds the residual the same way)."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 256, layers: int = 2, scale: float = 0.1):
        super().__init__()
        self.obs_dim, self.act_dim, self.hidden, self.layers, self.scale = obs_dim, act_dim, hidden, layers, scale
        dims = [obs_dim + act_dim] + [hidden] * layers
        body: list[nn.Module] = []
        for a, b in zip(dims[:-1], dims[1:]):
            body += [nn.Linear(a, b), nn.ReLU()]
        self.body = nn.Sequential(*body)
        self.head = nn.Linear(dims[-1], act_dim)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, obs: torch.Tensor, base_action: torch.Tensor) -> torch.Tensor:
        h = self.body(torch.cat([obs, base_action], dim=-1))  # (B, hidden)
        return torch.tanh(self.head(h)) * self.scale  # (B, A)


def combine(base_action: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
    """Executed action in normalised space: clip(a_base + a_res, -1, 1) (docs/protocol.md)."""
    return torch.clamp(base_action + residual, -1.0, 1.0)


class CriticEnsemble(nn.Module):
    """E independent Q heads (Linear -> LayerNorm -> ReLU) x layers -> Linear(1), evaluated as one batched matmul over
    stacked weights. LayerNorm in the critic follows RLPD (Ball et al. 2023, arXiv 2302.02948) and ResFiT."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 256, layers: int = 2, heads: int = 10):
        super().__init__()
        self.heads = heads
        dims = [obs_dim + act_dim] + [hidden] * layers + [1]
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
        x = torch.cat([obs, action], dim=-1).unsqueeze(0).expand(self.heads, -1, -1)  # (E, B, in)
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = torch.baddbmm(b, x, w)  # (E, B, out)
            if i < len(self.ln_gain):
                x = F.layer_norm(x, x.shape[-1:]) * self.ln_gain[i] + self.ln_bias[i]
                x = F.relu(x)
        return x.squeeze(-1)  # (E, B)
