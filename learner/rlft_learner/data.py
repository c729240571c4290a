"""Datasets as the learner holds them (`Episode`, `Dataset`: what a robot or a file sent) and the plumbing shared by
the training scripts: windows, normalisation, .npz files, synthetic demos."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .transport.protocol import value_problem


@dataclass
class Episode:
    """One episode as received: obs (T, obs_dim), action (T, action_dim), reward (T,); `intervention` (T,) 0/1 when the
    client sent who acted (1 = operator), `source` where it came from (e.g. scripted_expert, recap_collect)."""

    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    success: bool = False
    episode_id: str = ""
    seed: int = 0
    task: str = ""
    intervention: np.ndarray | None = None
    source: str = ""
    # camera name -> (T, H, W, 3) uint8 frames, frame t the latest at or before tick t (docs/data.md); empty for
    # state-only data. Kept as uint8 and indexed per batch, never copied per epoch.
    images: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass
class Dataset:
    """What a client sent: its hello and the episodes, in arrival order."""

    episodes: list[Episode]
    obs_names: list[str]
    action_names: list[str]
    task: str
    robot_id: str = ""
    config_hash: str = ""

    @property
    def cameras(self) -> list[str]:
        """Camera names every episode has frames for (sorted), [] for state-only data."""
        if not self.episodes:
            return []
        names = set(self.episodes[0].images)
        for ep in self.episodes[1:]:
            if set(ep.images) != names:
                raise ValueError(f"episode {ep.episode_id} has cameras {sorted(ep.images)}, the first episode {sorted(names)}; "
                                 f"record every episode with the same cameras")
        return sorted(names)


def make_windows(episodes: list[Episode], history: int, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """One training sample per step t: obs[t-history+1..t] and action[t..t+horizon-1].

    As in Diffusion Policy's SequenceSampler, the observation history is padded at the episode start by repeating the
    first observation and the action chunk is padded at the end by repeating the last action.
    Returns obs (N, history, obs_dim) and actions (N, horizon, action_dim), float32.
    """
    obs_out, act_out = [], []
    for ep in episodes:
        T = len(ep.obs)
        t = np.arange(T)[:, None]  # (T, 1)
        obs_idx = np.clip(t + np.arange(-history + 1, 1)[None, :], 0, T - 1)  # (T, history)
        act_idx = np.clip(t + np.arange(horizon)[None, :], 0, T - 1)  # (T, horizon)
        obs_out.append(ep.obs[obs_idx])  # (T, history, obs_dim)
        act_out.append(ep.action[act_idx])  # (T, horizon, action_dim)
    return np.concatenate(obs_out).astype(np.float32), np.concatenate(act_out).astype(np.float32)


def frame_index(episodes: list[Episode]) -> np.ndarray:
    """For each window make_windows returns (one per step, in the same order): the index of its step in the
    concatenation of all episodes' frames. (N,) int64."""
    starts = np.concatenate([[0], np.cumsum([len(ep.obs) for ep in episodes])[:-1]]).astype(np.int64)
    return np.concatenate([s + np.arange(len(ep.obs)) for s, ep in zip(starts, episodes)]).astype(np.int64)


@dataclass
class Normalizer:
    """obs_norm = (obs - mean) / std; a_norm = 2 (a - min) / (max - min) - 1 (docs/contracts.md, policy package)."""

    obs_mean: np.ndarray
    obs_std: np.ndarray
    act_min: np.ndarray
    act_max: np.ndarray

    @staticmethod
    def fit(episodes: list[Episode], std_floor: float = 1e-2, range_floor: float = 1e-3) -> "Normalizer":
        """Stats over every step; std and action range get floors so constant dimensions do not divide by zero."""
        obs = np.concatenate([ep.obs for ep in episodes]).astype(np.float64)  # (N, obs_dim)
        act = np.concatenate([ep.action for ep in episodes]).astype(np.float64)  # (N, action_dim)
        lo, hi = act.min(0), act.max(0)
        pad = np.maximum(range_floor - (hi - lo), 0.0) / 2  # widen degenerate ranges symmetrically
        return Normalizer(obs_mean=obs.mean(0).astype(np.float32), obs_std=np.maximum(obs.std(0), std_floor).astype(np.float32),
                          act_min=(lo - pad).astype(np.float32), act_max=(hi + pad).astype(np.float32))

    def obs(self, obs: np.ndarray) -> np.ndarray:
        return ((obs - self.obs_mean) / self.obs_std).astype(np.float32)

    def action(self, act: np.ndarray) -> np.ndarray:
        return (2 * (act - self.act_min) / (self.act_max - self.act_min) - 1).astype(np.float32)

    def unaction(self, a_norm: np.ndarray) -> np.ndarray:
        return (self.act_min + (a_norm + 1) / 2 * (self.act_max - self.act_min)).astype(np.float32)


def save_npz(path: str, data: Dataset) -> None:
    """Episodes concatenated along time, with `episode_lengths` to split them again."""
    eps = data.episodes
    intervention = np.concatenate([np.zeros(len(e.obs), np.float32) if e.intervention is None else e.intervention for e in eps])
    images = {f"image.{c}": np.concatenate([e.images[c] for e in eps]) for c in data.cameras}  # (N, H, W, 3) uint8 each
    np.savez_compressed(
        path, **images, obs=np.concatenate([e.obs for e in eps]), action=np.concatenate([e.action for e in eps]),
        reward=np.concatenate([e.reward for e in eps]), episode_lengths=np.array([len(e.obs) for e in eps], dtype=np.int64),
        success=np.array([e.success for e in eps]), obs_names=np.array(data.obs_names), action_names=np.array(data.action_names),
        task=np.array(data.task), intervention=intervention, source=np.array([e.source for e in eps]))


def load_npz(path: str) -> Dataset:
    """Read a dataset written by `save_npz` (keys obs, action, episode_lengths; reward, success, names, task,
    intervention, source optional)."""
    with np.load(path, allow_pickle=False) as f:
        for key in ("obs", "action", "episode_lengths"):
            if key not in f:
                raise ValueError(f"{path}: missing array {key!r}; expected obs (N, obs_dim), action (N, action_dim), episode_lengths (E,)")
        obs, act, lengths = f["obs"].astype(np.float32), f["action"].astype(np.float32), f["episode_lengths"].astype(np.int64)
        if len(obs) != len(act) or lengths.sum() != len(obs):
            raise ValueError(f"{path}: obs has {len(obs)} rows, action {len(act)}, episode_lengths sum to {lengths.sum()}; they must agree")
        reward = f["reward"].astype(np.float32) if "reward" in f else np.zeros(len(obs), np.float32)
        success = f["success"].astype(bool) if "success" in f else np.zeros(len(lengths), bool)
        obs_names = [str(n) for n in f["obs_names"]] if "obs_names" in f else [f"obs{i}" for i in range(obs.shape[1])]
        action_names = [str(n) for n in f["action_names"]] if "action_names" in f else [f"act{i}" for i in range(act.shape[1])]
        task = str(f["task"]) if "task" in f else "unknown"
        intervention = f["intervention"].astype(np.float32) if "intervention" in f else None
        source = [str(x) for x in f["source"]] if "source" in f else [""] * len(lengths)
        images = {k[len("image."):]: f[k] for k in f.files if k.startswith("image.")}
        for cam, frames in images.items():
            if frames.dtype != np.uint8 or frames.ndim != 4 or frames.shape[3] != 3 or len(frames) != len(obs):
                raise ValueError(f"{path}: image.{cam} must be uint8 (N, H, W, 3) with one frame per step ({len(obs)}); "
                                 f"found {frames.dtype} {frames.shape}")
    # A file is a door too: the same value rules as the wire (protocol.MAX_ABS_VALUE).
    for key, arr in (("obs", obs), ("action", act), ("reward", reward)):
        problem = value_problem(key, arr)
        if problem is not None:
            raise ValueError(f"{path}: {problem}")
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    episodes = [Episode(obs=obs[a:b], action=act[a:b], reward=reward[a:b], success=bool(s), episode_id=str(i), task=task,
                        intervention=None if intervention is None else intervention[a:b], source=source[i],
                        images={cam: frames[a:b] for cam, frames in images.items()})
                for i, (a, b, s) in enumerate(zip(bounds[:-1], bounds[1:], success))]
    return Dataset(episodes=episodes, obs_names=obs_names, action_names=action_names, task=task)


def synthetic_dataset(episodes: int = 50, steps: int = 150, obs_dim: int = 12, action_dim: int = 5, seed: int = 0) -> Dataset:
    """Smooth, learnable fake demos: the state drifts towards a per-episode goal and the action is a fixed
    nonlinear function of the state, plus a little noise. For tests, fixtures and benchmarks only."""
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(obs_dim, action_dim)) / np.sqrt(obs_dim)  # (obs_dim, action_dim)
    out = []
    for i in range(episodes):
        goal = rng.normal(size=obs_dim)
        x = rng.normal(size=obs_dim)
        obs, act = [], []
        for _ in range(steps):
            obs.append(x.copy())
            act.append(np.tanh(x @ W) + 0.02 * rng.normal(size=action_dim))
            x = x + 0.1 * (goal - x) + 0.02 * rng.normal(size=obs_dim)
        reward = np.zeros(steps, np.float32)
        reward[-1] = 1.0
        out.append(Episode(obs=np.array(obs, np.float32), action=np.array(act, np.float32), reward=reward,
                           success=True, episode_id=f"syn-{i}", seed=seed * 100_000 + i, task="synthetic"))
    return Dataset(episodes=out, obs_names=[f"obs{i}" for i in range(obs_dim)],
                   action_names=[f"act{i}" for i in range(action_dim)], task="synthetic")


def synthetic_pixel_dataset(episodes: int = 40, steps: int = 60, size: int = 48, seed: int = 0) -> Dataset:
    """Fake demos that need the camera: a bright square marks a per-episode goal on a noisy background, the state
    holds only the "joint" positions, and the action steers the joints toward the goal the image shows. A policy
    that ignores the image cannot do better than the mean goal. For tests only."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(episodes):
        goal = rng.uniform(-1, 1, size=2)  # where the square is, in [-1, 1]^2
        q = rng.uniform(-1, 1, size=2)
        px = ((goal + 1) / 2 * (size - 9)).astype(int)  # top-left corner of the 8-px square
        frames, obs, act = [], [], []
        for _ in range(steps):
            img = rng.integers(0, 40, size=(size, size, 3), dtype=np.uint8)
            img[px[1]:px[1] + 8, px[0]:px[0] + 8] = (230, 60, 40)
            frames.append(img)
            a = np.clip(0.3 * (goal - q), -0.2, 0.2)
            obs.append(q.copy())
            act.append(q + a)
            q = q + a + 0.01 * rng.normal(size=2)
        reward = np.zeros(steps, np.float32)
        reward[-1] = 1.0
        out.append(Episode(obs=np.array(obs, np.float32), action=np.array(act, np.float32), reward=reward, success=True,
                           episode_id=f"pix-{i}", seed=i, task="synthetic_pixels", images={"front": np.stack(frames)}))
    return Dataset(episodes=out, obs_names=["q.j0", "q.j1"], action_names=["j0", "j1"], task="synthetic_pixels")
