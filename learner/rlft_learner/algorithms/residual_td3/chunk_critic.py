"""Chunk-level critic for best-of-N base chunks: Q(s, a_t..a_{t+K-1}) over the K base actions a chunk executes.

Critic-ranked best-of-N base chunks (docs/algorithms.md §1 "beyond the recipe"). Ranking N sampled chunks by the step
critic's score of their *first* action did not help (docs/residual.md): the first actions of different chunks barely
differ, while what the chunks go on to do does. This critic scores the whole executed part of a chunk, as PA-RL
(Mark et al. 2024, arXiv 2412.06685) and Q-chunking (Li, Zhou & Levine 2025, arXiv 2507.07969) do; the robot samples
N chunks at every re-plan and runs the one it scores highest (launch `actor.best_of_select: chunk_critic`).

Training data is the online stream, cut into the robot's re-plan windows (steps t with t % K == 0 start a chunk; the
robot plans chunks exactly there). A window's target is SARSA over chunks:
    y = sum_{i<K} gamma^i r_{t+i} + gamma^K * Q_target(s_{t+K}, base chunk the robot planned at t+K)
with no bootstrap past a success (sparse reward, §1). The robot's selection makes the chunks it runs better than a
random sample, so this evaluates the improving best-of-N policy (policy iteration over chunks).
- Windows holding an intervention step are not trained on (the operator, not the chunk, decided what followed);
  they still serve as the next window of the one before, whose bootstrap uses the base chunk the robot planned
  there — what the policy would have run without the operator, as at evaluation.
- Windows cut by a truncation (timeout, abort, a gap in seq) have no next window and are dropped.
- Demonstrations are not used: their base actions are relabelled samples, not what was executed.
- With mirror_obs (mirror.py) every online step also enters reflected, as its own pseudo-robot: mirrored observation,
  mirrored base action, the same reward, flags, seq and step. Unlike the step critic's mirrored episodes (which re-run
  the base on the mirrored observations), a window keeps the reflection of the chunk the robot ran: in a
  mirror-symmetric scene that chunk, run from the mirrored state, makes the mirrored trajectory, so the window's
  return holds (up to the residual, whose output is not constrained to be symmetric). The rows can be mirrored one
  by one as they stream in, since a window needs no look-ahead.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from ...finite import StepGuard
from .nets import CriticEnsemble


def _redq(q: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    pick = torch.randperm(q.shape[0], generator=gen)[:2]
    return q[pick].min(dim=0).values  # (B,)


#: Pseudo-robot of robot r's mirrored stream: MIRROR_ROBOT_BASE - r (mirror.py's copies use -3, HER's -2, demos -1).
MIRROR_ROBOT_BASE = -1000


def mirrored_rows(rows: dict[str, np.ndarray], mirror) -> dict[str, np.ndarray]:
    """Online step rows -> their reflection under `mirror` (mirror.Mirror) for ChunkWindows.add."""
    out = dict(rows)
    out["obs"] = mirror.obs(rows["obs"])
    out["base_action"] = mirror.action(rows["base_action"])
    out["robot"] = MIRROR_ROBOT_BASE - np.asarray(rows["robot"], np.int64)
    return out


class ChunkWindows:
    """Re-plan windows of K steps cut from per-robot step rows (keys obs, base_action, reward, terminated, truncated,
    intervention, robot, seq, step; obs normalised, base_action in [-1, 1])."""

    def __init__(self, k: int, obs_dim: int, act_dim: int, gamma: float, capacity: int = 100_000):
        self.k, self.obs_dim, self.act_dim, self.gamma, self.capacity = k, obs_dim, act_dim, gamma, capacity
        self.obs = np.zeros((capacity, obs_dim), np.float32)
        self.chunk = np.zeros((capacity, k * act_dim), np.float32)
        self.ret = np.zeros(capacity, np.float32)
        self.discount = np.zeros(capacity, np.float32)  # gamma^K, or 0 after a success
        self.next = np.full(capacity, -1, np.int64)  # index of the next window (-1: none yet / none)
        self.clean = np.zeros(capacity, bool)  # no intervention step inside
        self.closed = np.zeros(capacity, bool)  # complete: K steps, or ended by a success
        self.terminal = np.zeros(capacity, bool)
        self.size = 0
        # robot -> (open window index, its step count, last seq, last step); None after an episode end.
        self._open: dict[int, tuple[int, int, int, int]] = {}

    def __len__(self) -> int:
        return self.size

    def add(self, rows: dict[str, np.ndarray]) -> None:
        for i in range(len(rows["seq"])):
            self._add_row({k: rows[k][i] for k in ("obs", "base_action", "reward", "terminated", "truncated",
                                                    "intervention", "robot", "seq", "step")})

    def _add_row(self, r: dict) -> None:
        robot, seq, step = int(r["robot"]), int(r["seq"]), int(r["step"])
        cur = self._open.get(robot)
        if cur is not None and (cur[2] + 1 != seq or cur[3] + 1 != step):
            self._open.pop(robot)  # a gap or a new episode without an end row: the open window has no next
            cur = None
        if cur is None or step % self.k == 0:
            if cur is None and step % self.k != 0:
                return  # joined mid-chunk (e.g. after a gap): wait for the next re-plan
            if self.size >= self.capacity:
                return  # full: keep what we have (a session is far smaller than the default capacity)
            w = self.size
            self.size += 1
            self.obs[w], self.chunk[w], self.ret[w], self.discount[w] = r["obs"], 0.0, 0.0, self.gamma ** self.k
            self.next[w], self.clean[w], self.closed[w], self.terminal[w] = -1, True, False, False
            if cur is not None and self.closed[cur[0]]:
                self.next[cur[0]] = w
            cur = (w, 0, seq, step)
        w, n = cur[0], cur[1]
        self.chunk[w, n * self.act_dim:(n + 1) * self.act_dim] = r["base_action"]
        self.ret[w] += self.gamma ** n * float(r["reward"])
        if r["intervention"] > 0.5:
            self.clean[w] = False
        n += 1
        if r["terminated"] > 0.5:
            self.chunk[w, n * self.act_dim:] = np.tile(r["base_action"], self.k - n)  # pad with the last action
            self.closed[w], self.terminal[w], self.discount[w] = True, True, 0.0
            self._open.pop(robot, None)
            return
        if r["truncated"] > 0.5:
            self._open.pop(robot, None)  # no next window: not trainable
            return
        if n == self.k:
            self.closed[w] = True
        self._open[robot] = (w, n, seq, step)

    def trainable(self) -> np.ndarray:
        s = self.size
        return np.flatnonzero(self.clean[:s] & self.closed[:s] & (self.terminal[:s] | (self.next[:s] >= 0)))

    def state(self) -> dict[str, np.ndarray]:
        s = self.size
        return {"obs": self.obs[:s], "chunk": self.chunk[:s], "ret": self.ret[:s], "discount": self.discount[:s],
                "next": self.next[:s], "clean": self.clean[:s], "closed": self.closed[:s], "terminal": self.terminal[:s]}

    def load_state(self, st: dict[str, np.ndarray]) -> None:
        s = len(st["ret"])
        for k in ("obs", "chunk", "ret", "discount", "next", "clean", "closed", "terminal"):
            getattr(self, k)[:s] = st[k]
        self.size = s
        self._open = {}  # a resumed learner starts every robot at its next re-plan


class ChunkCritic:
    """The chunk Q ensemble (same heads, width and LayerNorm as the step critic), its target and its windows."""

    def __init__(self, k: int, obs_dim: int, act_dim: int, *, gamma: float, hidden: int, layers: int, heads: int,
                 lr: float, weight_decay: float, tau: float, grad_clip: float, batch_size: int, seed: int,
                 device: torch.device):
        self.k, self.tau, self.grad_clip, self.batch_size, self.device = k, tau, grad_clip, batch_size, device
        self.windows = ChunkWindows(k, obs_dim, act_dim, gamma)
        self.net = CriticEnsemble(obs_dim, k * act_dim, hidden, layers, heads).to(device)
        self.target = copy.deepcopy(self.net).requires_grad_(False)
        self.opt = torch.optim.AdamW(self.net.parameters(), lr=lr, weight_decay=weight_decay)
        self.rng = np.random.default_rng(seed + 7)
        self.gen = torch.Generator().manual_seed(seed + 7)
        self.updates = 0
        self.guard = StepGuard("chunk_critic")

    def update(self) -> dict[str, float]:
        """One TD update on a batch of trainable windows; {} while there are fewer than 32 of them."""
        idx_all = self.windows.trainable()
        if len(idx_all) < 32:
            return {}
        w = self.windows
        idx = idx_all[self.rng.integers(0, len(idx_all), size=min(self.batch_size, len(idx_all)))]
        nxt = np.where(w.next[idx] >= 0, w.next[idx], idx)  # terminal windows: discount 0, any row will do
        t = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(self.device)  # noqa: E731
        with torch.no_grad():
            y = t(w.ret[idx]) + t(w.discount[idx]) * _redq(self.target(t(w.obs[nxt]), t(w.chunk[nxt])), self.gen)  # (B,)
        q = self.net(t(w.obs[idx]), t(w.chunk[idx]))  # (E, B)
        loss = ((q - y.unsqueeze(0)) ** 2).mean(dim=1).sum()
        if not self.guard.step("chunk_critic", loss, self.opt, self.net.parameters(), self.grad_clip):
            return {}
        with torch.no_grad():
            for p, pt in zip(self.net.parameters(), self.target.parameters()):
                pt.lerp_(p, self.tau)
        self.updates += 1
        return {"losses/chunk_critic": loss.item() / q.shape[0], "charts/chunk_q_mean": q.mean().item(),
                "charts/chunk_windows": float(len(idx_all))}

    def state_dict(self) -> dict:
        return {"net": self.net.state_dict(), "target": self.target.state_dict(), "opt": self.opt.state_dict(),
                "updates": self.updates, "windows": {k: torch.from_numpy(np.array(v)) for k, v in self.windows.state().items()}}

    def load_state_dict(self, st: dict) -> None:
        self.net.load_state_dict(st["net"])
        self.target.load_state_dict(st["target"])
        self.opt.load_state_dict(st["opt"])
        self.updates = int(st["updates"])
        self.windows.load_state({k: v.numpy() for k, v in st["windows"].items()})
