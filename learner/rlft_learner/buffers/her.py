"""Hindsight goal relabelling (HER, Andrychowicz et al. 2017, arXiv 1707.01495) for goal-conditioned tasks, adapted
to a residual over a frozen base policy.

HER turns an episode that pushed the cube to the wrong place into one that pushed it to the right place: the goal in
the observation is replaced by where the cube actually went, and the sparse reward is recomputed for that goal. The
critic then sees successes, and what led to them, far more often than the task's own success rate gives it.

What a residual learner has to do on top of the textbook recipe:
- The stored base action is the base policy's action *for the original goal*. The critic's target needs the base
  action the robot would have planned for the relabelled goal, and the actor is trained on (obs, base action) pairs
  that must match what it sees on the robot. So every relabelled copy re-runs the frozen base on its relabelled
  observations, chunk by chunk at the robot's re-plan steps (`step % K == 0`), as `demo_rows` does for demos.
- The executed action stays what the robot did; only goal, reward, episode end and base actions change. One goal per
  copy (the "episode" strategy) keeps a copy's steps linked for n-step returns; a copy ends at its first success.

Goals come from where the object went: `goals_per_episode` steps are drawn among those where the achieved position is
at least `min_move` from its start (a goal the object never left gives a trivial one-step success), and not the last
step of an episode that failed by leaving the workspace. The relabelled rows live in their own buffer
(`ResidualTD3.her`), sampled as `her_fraction` of each batch's online share.

Only for tasks whose observation holds the goal and the achieved position by name (push_cube: `target.x,target.y` and
`cube.x,cube.y`, success radius 3.5 cm) and whose success is "achieved within radius of goal" — not for image goals or
success classifiers. Episodes are assembled from each robot's streamed rows; one cut by a gap in `seq` or `step` (a
learner restart mid-episode) is not relabelled.
"""

from __future__ import annotations

import os

import numpy as np
import torch

#: Robot index the relabelled rows carry in their buffer: one pseudo-robot, whose seq counter links each copy's steps.
HER_ROBOT = -2


def load_base_sampler(base_path: str):
    """The frozen base's DDIM sampler (eval mode) and its ModelConfig, from a train-bc package's model.pt."""
    from ..algorithms.bc.diffusion import DDIMSampler, ModelConfig, NoisePredictionNet

    ckpt = torch.load(os.path.join(base_path, "model.pt"), map_location="cpu")
    mcfg = ModelConfig(**ckpt["config"])
    net = NoisePredictionNet(mcfg)
    net.load_state_dict(ckpt["state_dict"])
    return DDIMSampler(net.eval(), ckpt["alphas_cumprod"].numpy(), list(ckpt["timesteps"])).eval(), mcfg


def base_actions(sampler, mcfg, obs_n: np.ndarray, execute: int, noise_scale: float, gen: torch.Generator,
                 encoders=None, frames: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """Base actions of episodes (G, T, obs_dim) normalised obs, planned every `execute` steps from the obs history (the
    first step repeated before the start) and executed open-loop, as the robot does -> (G, T, A) in [-1, 1]. A base
    that sees cameras (`encoders`: its camera encoders, pixels/nets.py load_base_encoders; `frames`: camera -> uint8
    (G, T, H, W, 3)) also reads each re-plan step's frames, as its sampler does on the robot (bc/diffusion.py
    PixelSampler: [state history, camera features])."""
    g, t_len, obs_dim = obs_n.shape
    history, horizon, act_dim = mcfg.history, mcfg.horizon, mcfg.action_dim
    if encoders is not None:
        # A pixel model's noise network reads one "step" [state history, features] (bc/train.py: its ModelConfig has
        # history 1): the state history is what that width holds besides the features (train-bc's --history, 2 by default).
        state_in = mcfg.obs_dim - encoders.out_dim
        if state_in <= 0 or state_in % obs_dim:
            raise ValueError(f"the base's noise network reads {mcfg.obs_dim} inputs, its encoders give {encoders.out_dim} features: "
                             f"that leaves no whole history of {obs_dim} observations; the package's model.pt and encoders disagree")
        history = state_in // obs_dim
    starts = np.arange(0, t_len, execute)  # (C,)
    hist = np.clip(starts[:, None] + np.arange(-history + 1, 1)[None, :], 0, t_len - 1)  # (C, history)
    cond = torch.from_numpy(np.ascontiguousarray(obs_n[:, hist].reshape(g * len(starts), history * obs_dim), np.float32))
    with torch.no_grad():
        if encoders is not None:  # (G*C, H, W, 3) uint8 per camera: the frame of each re-plan step
            assert frames is not None, "a base that sees cameras needs the episodes' frames"
            images = [torch.from_numpy(np.ascontiguousarray(frames[c][:, starts]).reshape(g * len(starts), *frames[c].shape[2:]))
                      for c in encoders.cameras]
            cond = torch.cat([cond, encoders(*images)], dim=-1)  # (G*C, history*obs_dim + features)
        noise = torch.randn(len(cond), horizon, act_dim, generator=gen) * noise_scale
        chunks = sampler(cond, noise).numpy()  # (G*C, H, A)
    chunks = chunks.reshape(g, len(starts), horizon, act_dim)[:, :, :execute]  # (G, C, K, A)
    return np.clip(chunks.reshape(g, -1, act_dim)[:, :t_len], -1, 1).astype(np.float32)


class EpisodeRelabeler:
    """Collects each robot's streamed rows into episodes and returns `relabel(episode)` of every finished one; the
    copies carry the pseudo-robot `robot` and its own seq counter. Subclasses: HindsightRelabeler (here) and
    mirror.MirrorRelabeler. Shared: the episode assembly, the seq counter and the lazily loaded base sampler."""

    robot = HER_ROBOT  # the pseudo-robot its rows carry

    def __init__(self, base, noise_scale: float, gen_seed: int):
        self.base, self.noise_scale = base, noise_scale
        self.execute = base.execute_steps
        self.gen = torch.Generator().manual_seed(gen_seed)
        self._sampler = None
        self._open: dict[int, dict[str, list[np.ndarray]]] = {}  # robot -> columns of its current episode
        self._seq = 0  # next seq of the pseudo-robot
        self.episodes = 0  # episodes relabelled

    def sampler(self):
        """The frozen base's DDIM sampler and ModelConfig, loaded on first use."""
        if self._sampler is None:
            self._sampler = load_base_sampler(self.base.path)
        return self._sampler

    def resume(self, buffer) -> None:
        """After a checkpoint restore: continue the pseudo-robot's seq after the rows `buffer` (agent.her) holds."""
        mine = buffer.data["robot"][: len(buffer)] == self.robot
        if mine.any():
            self._seq = int(buffer.data["seq"][: len(buffer)][mine].max()) + 1

    def add(self, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
        """Take received rows (several robots may interleave); return the relabelled rows of episodes they finish."""
        out: list[dict[str, np.ndarray]] = []
        for i in range(len(rows["seq"])):
            robot, step = int(rows["robot"][i]), int(rows["step"][i])
            ep = self._open.get(robot)
            if ep is not None and (ep["seq"][-1] + 1 != rows["seq"][i] or ep["step"][-1] + 1 != step):
                ep = None  # a gap: that episode cannot be relabelled
            if ep is None:
                if step != 0:
                    self._open.pop(robot, None)
                    continue  # joined mid-episode: wait for the next one
                # Not the robot's zlib streams of its frames (frames.py): copies carry the inflated frames.
                ep = self._open[robot] = {k: [] for k in rows if not k.startswith("zlib.")}
            for k in ep:
                ep[k].append(rows[k][i])
            if rows["terminated"][i] > 0 or rows["truncated"][i] > 0:
                del self._open[robot]
                copy = self.relabel({k: np.stack(v) for k, v in ep.items()})
                if copy is not None:
                    out.append(copy)
        return {k: np.concatenate([c[k] for c in out]) for k in out[0]} if out else None

    def relabel(self, ep: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
        raise NotImplementedError


class HindsightRelabeler(EpisodeRelabeler):
    """Relabelled copies of every finished episode with goals where the object went (module docstring)."""

    def __init__(self, base, goal: list[str], achieved: list[str], radius: float, goals_per_episode: int, min_move: float,
                 noise_scale: float, seed: int):
        missing = [n for n in goal + achieved if n not in base.obs_names]
        if missing:
            raise ValueError(f"config: her_goal / her_achieved name observations {missing} that the base package does not "
                             f"have; its observations are {base.obs_names}")
        if not goal or len(goal) != len(achieved):
            raise ValueError(f"config: her_goal and her_achieved must name the same number (>= 1) of observations, e.g. "
                             f"target.x,target.y and cube.x,cube.y; found {goal} and {achieved}")
        super().__init__(base, noise_scale, seed)
        self.gi = np.array([base.obs_names.index(n) for n in goal])
        self.ai = np.array([base.obs_names.index(n) for n in achieved])
        self.radius, self.k, self.min_move = radius, goals_per_episode, min_move
        self.rng = np.random.default_rng(seed)

    def _raw(self, obs_n: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return obs_n[..., idx] * self.base.obs_std[idx] + self.base.obs_mean[idx]

    def relabel(self, ep: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
        """Up to `goals_per_episode` relabelled copies of one episode (rows 0..T-1 of one robot, step 0 first)."""
        t_len = len(ep["seq"])
        reached = self._raw(ep["next_obs"], self.ai)  # (T, g): achieved position after each step
        moved = np.linalg.norm(reached - self._raw(ep["obs"][0], self.ai), axis=-1) >= self.min_move  # (T,)
        if ep["terminated"][-1] > 0 and ep["reward"][-1] <= 0:
            moved[-1] = False  # the step that failed the episode (e.g. the object left the table)
        candidates = np.flatnonzero(moved)
        if len(candidates) == 0:
            return None
        picks = self.rng.choice(candidates, size=min(self.k, len(candidates)), replace=False)
        goals = reached[picks]  # (G, g)
        # Each copy ends at its first success for its goal (no later than the step the goal was taken from).
        hit = np.linalg.norm(reached[None, :, :] - goals[:, None, :], axis=-1) < self.radius  # (G, T)
        ends = hit.argmax(axis=1)  # (G,)
        goal_n = ((goals - self.base.obs_mean[self.gi]) / self.base.obs_std[self.gi]).astype(np.float32)  # (G, g)
        obs = np.repeat(ep["obs"][None], len(goals), axis=0)  # (G, T, obs_dim)
        nxt = np.repeat(ep["next_obs"][None], len(goals), axis=0)
        obs[:, :, self.gi] = goal_n[:, None, :]
        nxt[:, :, self.gi] = goal_n[:, None, :]
        sampler, mcfg = self.sampler()
        t_max = int(ends.max()) + 1
        base_a = base_actions(sampler, mcfg, obs[:, :t_max], self.execute, self.noise_scale, self.gen)  # (G, t_max, A)
        cols: dict[str, list[np.ndarray]] = {k: [] for k in ("obs", "next_obs", "base_action", "next_base_action", "action",
                                                             "reward", "terminated", "intervention")}
        for j, end in enumerate(ends):
            n = int(end) + 1
            flag = np.zeros(n, np.float32)
            flag[-1] = 1.0
            cols["obs"].append(obs[j, :n])
            cols["next_obs"].append(nxt[j, :n])
            cols["base_action"].append(base_a[j, :n])
            cols["next_base_action"].append(base_a[j, np.minimum(np.arange(1, n + 1), n - 1)])  # unused at the end
            cols["action"].append(ep["action"][:n])
            cols["reward"].append(flag)
            cols["terminated"].append(flag)
            cols["intervention"].append(ep["intervention"][:n])
        rows = {k: np.concatenate(v) for k, v in cols.items()}
        m = len(rows["reward"])
        rows.update(truncated=np.zeros(m, np.float32), robot=np.full(m, self.robot, np.int64),
                    seq=np.arange(self._seq, self._seq + m, dtype=np.int64))
        self._seq += m
        self.episodes += 1
        return rows
