"""RECAP value function (pi*0.6, Physical Intelligence 2025, arXiv 2511.14759; docs/algorithms.md §3).

A distributional value function over return bins, trained with cross-entropy on discretised Monte-Carlo returns of
ALL data so far (demos, autonomous episodes, interventions): it estimates the value of the data-mixture policy,
not an off-policy Q.

Rewards: -1 per step, 0 at the end of a success, -C_fail at the end of a failure (every episode that does not end
in success: failure or timeout). Returns are divided by the task's maximum episode length T_max and clipped to
[-1, 0], so V ~ -(steps to success) / T_max and a failure is worth at most the slowest success.

No policy code here; train.py computes advantages from these values and trains the conditioned policy.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ...data import Episode
from ...finite import StepGuard, finite_values

log = logging.getLogger("rlft_learner.recap_value")


def episode_rewards(length: int, success: bool, c_fail: float) -> np.ndarray:
    """(T,) raw rewards: -1 per step; the last step is 0 on success, -c_fail on failure."""
    r = -np.ones(length, np.float64)
    r[-1] = 0.0 if success else -float(c_fail)
    return r


def normalised_returns(rewards: np.ndarray, scale: float) -> np.ndarray:
    """(T,) Monte-Carlo returns G_t = sum_{k>=t} r_k (undiscounted, as in pi*0.6), divided by `scale` = T_max and
    clipped to [-1, 0]."""
    g = np.cumsum(rewards[::-1])[::-1] / float(scale)
    return np.clip(g, -1.0, 0.0).astype(np.float32)


@dataclass
class ReturnSpec:
    """How raw episodes become normalised returns, per task: T_max (the scale) and C_fail (in steps)."""

    max_steps: dict[str, int]
    c_fail: dict[str, float]

    @staticmethod
    def for_episodes(episodes: list[Episode], max_episode_steps: str = "", c_fail: float = -1.0) -> "ReturnSpec":
        """`max_episode_steps`: "150", "push_cube=150,peg_insert=100" or "" (longest episode seen per task).
        `c_fail` < 0 means C_fail = T_max (a failure costs as much as a whole episode of steps)."""
        given: dict[str, int] = {}
        default: int | None = None
        for part in filter(None, (p.strip() for p in max_episode_steps.split(","))):
            if "=" in part:
                k, v = part.split("=", 1)
                given[k.strip()] = int(v)
            else:
                default = int(part)
        max_steps: dict[str, int] = {}
        for ep in episodes:
            seen = max(max_steps.get(ep.task, 0), len(ep.obs))
            max_steps[ep.task] = seen
        for task in max_steps:
            t_max = given.get(task, default if default is not None else max_steps[task])
            if t_max < 1:
                raise ValueError(f"max episode steps for task {task!r} must be >= 1; found {t_max}")
            max_steps[task] = t_max
        return ReturnSpec(max_steps=max_steps, c_fail={t: (float(m) if c_fail < 0 else float(c_fail)) for t, m in max_steps.items()})

    def rewards(self, ep: Episode) -> np.ndarray:
        return episode_rewards(len(ep.obs), ep.success, self.c_fail[ep.task])

    def returns(self, ep: Episode) -> np.ndarray:
        return normalised_returns(self.rewards(ep), self.max_steps[ep.task])


class ValueNet(nn.Module):
    """obs (B, obs_dim), normalised -> (value (B,), probs (B, bins)): a softmax over `bins` return bins evenly
    spaced on [-1, 0]; value = E[return] = probs . centres. `logits` is what training uses."""

    def __init__(self, obs_dim: int, bins: int = 101, hidden: int = 256, layers: int = 2):
        super().__init__()
        self.obs_dim, self.bins, self.hidden, self.layers = obs_dim, bins, hidden, layers
        mods: list[nn.Module] = []
        width = obs_dim
        for _ in range(layers):
            mods += [nn.Linear(width, hidden), nn.LayerNorm(hidden), nn.Mish()]
            width = hidden
        self.trunk = nn.Sequential(*mods)
        self.head = nn.Linear(width, bins)
        self.register_buffer("centres", torch.linspace(-1.0, 0.0, bins))  # (bins,)

    def cfg_dict(self) -> dict:
        return {"obs_dim": int(self.obs_dim), "bins": int(self.bins), "hidden": int(self.hidden), "layers": int(self.layers)}

    def logits(self, obs: torch.Tensor) -> torch.Tensor:
        return self.head(self.trunk(obs))  # (B, bins)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        probs = F.softmax(self.logits(obs), dim=-1)  # (B, bins)
        return probs @ self.centres, probs  # (B,), (B, bins)


class ValueOverImages(nn.Module):
    """value.onnx of a RECAP package that sees cameras: (obs (B, obs_dim) normalised, one uint8 (B, H, W, 3) image per
    camera) -> (value, probs) = value_net([obs, encoders(images)]). The encoders are the pre-trained BC policy's, frozen
    (the value was trained on their features), so the robot or inspect-episode feeds the camera bytes as it does to
    the sampler."""

    def __init__(self, encoders: nn.Module, value_net: ValueNet, obs_dim: int):
        super().__init__()
        self.encoders, self.value_net, self.obs_dim = encoders, value_net, obs_dim
        self.n_cameras = len(encoders.cameras)

    def cfg_dict(self) -> dict:
        return {**self.value_net.cfg_dict(), "state_dim": int(self.obs_dim), "cameras": list(self.encoders.cameras)}

    def forward(self, obs: torch.Tensor, *images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.value_net(torch.cat([obs, self.encoders(*images)], dim=-1))


@torch.no_grad()
def frame_features(encoders: nn.Module, frames: list[np.ndarray], device: torch.device, batch: int = 512) -> np.ndarray:
    """Features (N, F) float32 of N frames per camera (uint8 (N, H, W, 3) each, in the encoders' camera order)."""
    encoders = encoders.to(device).eval()
    n = len(frames[0]) if frames else 0
    out = [encoders(*[torch.from_numpy(np.ascontiguousarray(f[i:i + batch])).to(device) for f in frames]).cpu().numpy()
           for i in range(0, n, batch)]
    return np.concatenate(out).astype(np.float32) if out else np.zeros((0, encoders.out_dim), np.float32)


def return_bins(returns: torch.Tensor, bins: int) -> torch.Tensor:
    """Index of the nearest bin centre on [-1, 0] for each normalised return (the discretised MC target)."""
    return torch.round((returns.clamp(-1.0, 0.0) + 1.0) * (bins - 1)).long()


@dataclass
class ValueConfig:
    bins: int = 101  # paper: 201; 101 resolves 1% of T_max, finer than our episodes' 100-150 steps need
    hidden: int = 256
    layers: int = 2
    steps: int = 1500
    batch_size: int = 256
    lr: float = 1e-3
    weight_decay: float = 1e-4
    seed: int = 1


def train_value(obs: np.ndarray, returns: np.ndarray, cfg: ValueConfig, device: torch.device,
                emit: Callable[[dict], None] = lambda e: None, log_every: int = 100) -> tuple[ValueNet, list[float]]:
    """Fit a fresh ValueNet to (obs (N, obs_dim) normalised, returns (N,) in [-1, 0]); returns it (eval) and the losses."""
    torch.manual_seed(cfg.seed)
    net = ValueNet(obs.shape[1], cfg.bins, cfg.hidden, cfg.layers).to(device)
    x = torch.from_numpy(np.asarray(obs, np.float32)).to(device)  # (N, obs_dim)
    y = return_bins(torch.from_numpy(np.asarray(returns, np.float32)), cfg.bins).to(device)  # (N,)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + np.cos(np.pi * s / max(1, cfg.steps))))
    gen = torch.Generator(device=device).manual_seed(cfg.seed)
    guard = StepGuard("recap value")
    losses: list[float] = []
    t0 = time.perf_counter()
    for step in range(cfg.steps):
        idx = torch.randint(0, len(x), (cfg.batch_size,), device=device, generator=gen)  # (B,)
        loss = F.cross_entropy(net.logits(x[idx]), y[idx])
        guard.step("value", loss, opt, net.parameters(), 1.0)
        sched.step()
        losses.append(loss.item())
        if (step + 1) % log_every == 0 or step + 1 == cfg.steps:
            emit({"phase": "value", "step": step + 1, "total": cfg.steps, "losses/value_ce": float(np.mean(finite_values(losses[-log_every:]))),
                  "charts/SPS": (step + 1) / (time.perf_counter() - t0)})
    return net.eval(), losses


@torch.no_grad()
def predict(net: ValueNet, obs: np.ndarray, device: torch.device, batch: int = 8192) -> np.ndarray:
    """V(obs) for (N, obs_dim) normalised observations -> (N,) float32."""
    out = [net(torch.from_numpy(np.asarray(obs[i:i + batch], np.float32)).to(device))[0].cpu().numpy() for i in range(0, len(obs), batch)]
    return np.concatenate(out).astype(np.float32) if out else np.zeros(0, np.float32)


def calibration(pred: np.ndarray, actual: np.ndarray, bins: int = 10) -> dict:
    """Reliability table of V: predictions grouped into `bins` equal-width bins on [-1, 0]; per bin the mean
    prediction, the mean actual normalised return and the count; `ece` = count-weighted mean |pred - actual| over
    bins, `mae` = mean |pred - actual| per sample, `corr` = Pearson correlation (0 when either side is constant)."""
    pred = np.asarray(pred, np.float64)
    actual = np.asarray(actual, np.float64)
    edges = np.linspace(-1.0, 0.0, bins + 1)
    which = np.clip(np.digitize(pred, edges[1:-1]), 0, bins - 1)
    rows = []
    ece = 0.0
    for b in range(bins):
        m = which == b
        n = int(m.sum())
        if n == 0:
            continue
        p, a = float(pred[m].mean()), float(actual[m].mean())
        rows.append({"lo": float(edges[b]), "hi": float(edges[b + 1]), "pred": p, "actual": a, "count": n})
        ece += n * abs(p - a)
    n_all = max(1, len(pred))
    corr = float(np.corrcoef(pred, actual)[0, 1]) if len(pred) > 1 and pred.std() > 0 and actual.std() > 0 else 0.0
    return {"bins": rows, "ece": ece / n_all, "mae": float(np.abs(pred - actual).mean()) if len(pred) else 0.0,
            "corr": corr, "samples": int(len(pred))}


def plot_calibration(path: str, calib: dict, examples: list[tuple[str, np.ndarray, np.ndarray]], title: str) -> str | None:
    """Reliability diagram (left) and V(t) vs the actual return along a few episodes (right), as a PNG.
    Returns None when written, else why not (matplotlib is a learner dependency, but a bare RLFT_PYTHON may lack it)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed in this Python (node scripts/setup-python.mjs installs it); the numbers are in recap.json"
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.2))
    ax1.plot([-1, 0], [-1, 0], color="0.6", lw=1, ls="--", label="perfect")
    rows = calib["bins"]
    if rows:
        ax1.plot([r["pred"] for r in rows], [r["actual"] for r in rows], "o-", color="C0", label="V")
        for r in rows:
            ax1.annotate(str(r["count"]), (r["pred"], r["actual"]), textcoords="offset points", xytext=(3, -10), fontsize=7, color="0.4")
    ax1.set(xlim=(-1.02, 0.02), ylim=(-1.02, 0.02), xlabel="predicted V (normalised)", ylabel="actual return (normalised)",
            title=f"calibration: ECE {calib['ece']:.3f}, corr {calib['corr']:.2f}")
    ax1.legend(loc="upper left", fontsize=8)
    for i, (label, v, g) in enumerate(examples):
        ax2.plot(v, color=f"C{i}", lw=1.5, label=f"{label} V(t)")
        ax2.plot(g, color=f"C{i}", lw=1, ls=":", label=f"{label} return")
    ax2.set(xlabel="step", ylabel="normalised value", ylim=(-1.05, 0.05), title="V(t) along episodes (dotted: actual)")
    if examples:
        ax2.legend(fontsize=7, loc="lower left")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None
