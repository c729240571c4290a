"""What the two off-policy learners of `serve` share, by composition: the config keys both read (`OffPolicyConfig`)
and their experience (`Experience`): the online, offline and relabelled buffers, HIL-SERL intervention routing
(Luo et al. 2024, arXiv 2410.21845), RLPD's 50/50 n-step batches (Ball et al. 2023, arXiv 2302.02948) and the
update-to-data clock. See docs/algorithms.md §1-2. Residual TD3 (residual_td3/) and RLPD-SAC (rlpd_sac/) each own
one `Experience` and their networks; neither derives from the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
import torch

from ..buffers.replay import Batch, ReplayBuffer, to_batch
from ..options import allow, help_meta as _h


@dataclass
class OffPolicyConfig:
    """Keys both off-policy algorithms read (same names as serve's YAML keys and --flags)."""

    device: str = field(default="cpu", metadata=_h("torch device of the actor and critics: cpu or cuda"))
    seed: int = field(default=1, metadata=_h("random seed"))
    actor_hidden: int = field(default=256, metadata=_h("actor MLP width"))
    actor_layers: int = field(default=2, metadata=_h("actor hidden layers"))
    critic_hidden: int = field(default=128, metadata=_h("critic hidden width (ResFiT: 1024)"))
    critic_layers: int = field(default=2, metadata=_h("critic hidden layers, each Linear-LayerNorm-ReLU"))
    gamma: float = field(default=0.99, metadata=_h("discount (ResFiT 0.99-0.995)"))
    n_step: int = field(default=3, metadata=_h("n-step returns (ResFiT 3-5); success stops the bootstrap, truncation does not"))
    utd: float = field(default=2.0, metadata=_h("critic updates per received env step, the update-to-data ratio (ResFiT: 4)"))
    policy_delay: int = field(default=2, metadata=_h("critic updates per actor update (TD3)"))
    tau: float = field(default=0.005, metadata=_h("Polyak rate of the target networks"))
    batch_size: int = field(default=256, metadata=_h("transitions per update"))
    offline_fraction: float = field(default=0.5, metadata=_h("share of each batch from the offline buffer (RLPD 50/50) when it has data"))
    learning_starts: int = field(default=500, metadata=_h("online transitions before the first update (ResFiT warms up with 10k env steps)"))
    online_capacity: int = field(default=200_000, metadata=_h("online ring buffer rows"))
    offline_capacity: int = field(default=100_000, metadata=_h("offline ring buffer rows (demos + interventions)"))
    # --- cameras (algorithms/pixels/; only with a base package whose policy.json has observation.images) ---
    image_encoder: str = field(default="base", metadata=_h("what turns camera frames into the actor's and critic's features: base (the frozen BC policy's encoder, computed once per frame without gradients: ResFiT) or own (a fresh encoder per camera trained by the critic loss, with DrQ random-shift augmentation; the actor reads its features detached, DrQ-v2)"))
    image_shift: int = field(default=4, metadata=_h("image_encoder own: random-shift augmentation, pixels of replicate padding (DrQ); 0 = off"))


allow(OffPolicyConfig, {  # options.allow: what each key accepts, checked wherever the value is read
    "seed": ">= 0", "actor_hidden": ">= 1", "actor_layers": ">= 1", "critic_hidden": ">= 1", "critic_layers": ">= 1",
    "gamma": "(0, 1]", "n_step": ">= 1", "utd": "> 0", "policy_delay": ">= 1", "tau": "(0, 1]", "batch_size": ">= 2",
    "offline_fraction": "[0, 1]", "learning_starts": ">= 0", "online_capacity": ">= 1", "offline_capacity": ">= 1",
    "image_encoder": ("base", "own"), "image_shift": "[0, 32]",
})


def route(rows: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """Split received rows into (online rows, offline rows): every step goes online; intervention steps (the operator's
    executed action) also go to the offline buffer. The policy's own steps around an intervention stay online only."""
    mask = rows["intervention"] > 0.5
    offline = {k: v[mask] for k, v in rows.items()} if mask.any() else None
    return rows, offline


def demo_rows_from(path: str, base, copies: Callable[[object], Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]]
                   ) -> dict[str, np.ndarray]:
    """Offline rows (demos: intervention 1, robot -1) from a train-bc .npz recorded for the base package's task.
    `copies(episode)` yields the episode's stored copies as (normalised obs (T, obs_dim), normalised action (T, A),
    base action (T, A)). Success ends an episode (terminated); other episode ends are truncations. Over a base that
    sees cameras every row also carries its step's frame (`image.<cam>`) and the next step's (`next_image.<cam>`).
    Observation columns the base does not read are left out, by name: train-bc --save-dataset keeps the demos as
    received, so a pixel base trained with aux_targets (sim-only cube and target positions as training targets of its
    camera encoders, never its input) has them in its .npz; the learner must not see them either."""
    from dataclasses import replace

    from ..data import load_npz

    data = load_npz(path)
    missing = [n for n in base.obs_names if n not in data.obs_names]
    if missing or data.action_names != base.action_names:
        why = f"it lacks the base's observation {', '.join(missing)}" if missing else f"its actions are {data.action_names}, the base's {base.action_names}"
        raise ValueError(f"{path}: obs/action names differ from the base package's ({why}); record demos for the same task")
    if data.obs_names != base.obs_names:
        keep = [data.obs_names.index(n) for n in base.obs_names]
        data.episodes = [replace(ep, obs=ep.obs[:, keep]) for ep in data.episodes]
        data.obs_names = list(base.obs_names)
    cams = base.cameras
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("obs", "next_obs", "base_action", "action", "next_base_action",
                                                         "reward", "terminated", "truncated")}
    cols.update({f"{p}.{c}": [] for c in cams for p in ("image", "next_image")})
    for i, ep in enumerate(data.episodes):
        frames = episode_frames(path, i, ep, cams)
        for obs_n, act_n, base_a in copies(ep):
            T = len(obs_n)
            nxt = np.minimum(np.arange(T) + 1, T - 1)
            term, trunc = np.zeros(T, np.float32), np.zeros(T, np.float32)
            (term if ep.success else trunc)[-1] = 1.0
            for k, v in (("obs", obs_n), ("next_obs", obs_n[nxt]), ("base_action", base_a), ("action", act_n),
                         ("next_base_action", base_a[nxt]), ("reward", ep.reward.astype(np.float32)),
                         ("terminated", term), ("truncated", trunc),
                         *((f"{p}.{c}", f if p == "image" else f[nxt]) for c, f in frames.items() for p in ("image", "next_image"))):
                cols[k].append(v)
    rows = {k: np.concatenate(v) for k, v in cols.items()}
    n = len(rows["reward"])
    rows.update(intervention=np.ones(n, np.float32), robot=np.full(n, -1, np.int64), seq=np.arange(n, dtype=np.int64))
    return rows


def episode_frames(path: str, index: int, ep, cameras: dict[str, tuple[int, int]]) -> dict[str, np.ndarray]:
    """Episode `index`'s frames of `cameras` {name: (H, W)} (uint8 (T, H, W, 3) each); raises naming the camera and the
    fix when the demos were recorded without it or at another size."""
    out = {}
    for cam, (h, w) in cameras.items():
        f = ep.images.get(cam)
        if f is None:
            raise ValueError(f"{path}: episode {index} has no frames of camera {cam!r}; the base package sees cameras "
                             f"{sorted(cameras)}, so its demos need them too: record the demos with those cameras "
                             f"(launch file cameras), or leave demo_dataset empty")
        if f.dtype != np.uint8 or f.shape != (len(ep.obs), h, w, 3):
            raise ValueError(f"{path}: episode {index} camera {cam!r} frames are {f.dtype} {list(f.shape)}; the base "
                             f"package reads uint8 [{len(ep.obs)}, {h}, {w}, 3]: record {cam} at {w}x{h}")
        out[cam] = f
    return out


def polyak(net: torch.nn.Module, target: torch.nn.Module, tau: float) -> None:
    """target <- (1 - tau) * target + tau * net, parameter by parameter."""
    with torch.no_grad():
        for p, pt in zip(net.parameters(), target.parameters()):
            pt.lerp_(p, tau)


class Experience:
    """An off-policy learner's data: online and offline rings, optionally a ring of relabelled episode copies (`her`,
    drawn as `her_share` of each batch's online part once it holds a batch), the counters of the UTD clock and the
    batch sampler. `rng` is the sampler's generator (checkpointed by the agent with its other state)."""

    def __init__(self, cfg: OffPolicyConfig, obs_dim: int, act_dim: int, device: torch.device,
                 her_capacity: int = 0, her_share: float = 0.0):
        self.cfg, self.device, self.her_share = cfg, device, her_share
        self.online = ReplayBuffer(cfg.online_capacity, obs_dim, act_dim)
        self.offline = ReplayBuffer(cfg.offline_capacity, obs_dim, act_dim)
        self.her = ReplayBuffer(her_capacity, obs_dim, act_dim) if her_capacity else None
        self.rng = np.random.default_rng(cfg.seed)
        self.env_steps = 0  # online transitions received (the UTD clock)
        self.intervention_steps = 0
        self.n_off = 0  # offline rows in the last sampled batch: its last n_off rows
        self.off_intervention: torch.Tensor | None = None  # which of them are online interventions (not demos)

    def keep_frames(self, cameras: dict[str, tuple[int, int]], features=None) -> None:
        """Every buffer stores the frames of `cameras` {name: (H, W)} with its rows (buffers/frames.py), so `sample()`
        returns batches whose `images` hold `image.<cam>` / `next_image.<cam>` (an agent that sees cameras); with
        `features` (a frozen encoder: {cam: uint8 (N, 3, H, W)} -> (N, F)), `features` / `next_features` instead,
        each frame encoded once."""
        for buf in (self.online, self.offline, self.her):
            if buf is not None:
                buf.keep_frames(cameras)
                if features is not None:
                    buf.use_features(features)

    def add(self, rows: dict[str, np.ndarray]) -> None:
        """Received rows: every step online, intervention steps also offline (HIL-SERL)."""
        online, offline = route(rows)
        self.online.add(online)
        if offline is not None:
            self.offline.add(offline)
            self.intervention_steps += len(offline["seq"])
        self.env_steps += len(rows["seq"])

    def add_offline(self, rows: dict[str, np.ndarray]) -> None:
        """Demonstrations: offline buffer only (RLPD's prior data)."""
        self.offline.add(rows)

    def add_her(self, rows: dict[str, np.ndarray]) -> None:
        """Hindsight-relabelled (her.py) or mirrored (mirror.py) copies of finished episodes: their own buffer, never
        the offline one."""
        assert self.her is not None, "add_her needs her_goal or mirror_obs in the config"
        self.her.add(rows)

    def updates_due(self, updates: int) -> int:
        """Critic updates owed by the UTD ratio after `updates` (0 until `learning_starts` online transitions arrived)."""
        if len(self.online) < max(self.cfg.learning_starts, 1):
            return 0
        return max(0, int(self.cfg.utd * self.env_steps) - updates)

    def sample(self) -> Batch:
        """One n-step batch: offline_fraction of it from the offline ring when it holds rows (RLPD), the rest online,
        of which her_share from the relabelled ring once it holds a batch's worth."""
        cfg = self.cfg
        n_off = int(round(cfg.batch_size * cfg.offline_fraction)) if len(self.offline) else 0
        self.n_off = n_off
        n_on = cfg.batch_size - n_off
        n_her = int(round(n_on * self.her_share)) if self.her is not None and len(self.her) >= cfg.batch_size else 0
        parts = [self.online.nstep(self.online.sample_idx(n_on - n_her, self.rng), cfg.n_step, cfg.gamma)]
        if n_her:
            parts.append(self.her.nstep(self.her.sample_idx(n_her, self.rng), cfg.n_step, cfg.gamma))
        if n_off:
            idx = self.offline.sample_idx(n_off, self.rng)
            self.off_intervention = torch.from_numpy(self.offline.data["robot"][idx] >= 0).to(self.device)
            parts.append(self.offline.nstep(idx, cfg.n_step, cfg.gamma))
        return to_batch(parts, self.device)

    def counters(self) -> dict[str, int]:
        return {"env_steps": self.env_steps, "intervention_steps": self.intervention_steps}


class UsesExperience:
    """What an agent that owns an `Experience` as `self.data` answers from it (ResidualTD3 and RlpdSAC): the UTD
    clock, the intervention count, adding rows and sampling batches. An agent overrides `add` to transform rows first."""

    data: Experience
    updates: int

    @property
    def env_steps(self) -> int:
        """Online transitions received (the UTD clock)."""
        return self.data.env_steps

    @property
    def intervention_steps(self) -> int:
        return self.data.intervention_steps

    def add(self, rows: dict[str, np.ndarray]) -> None:
        self.data.add(rows)

    def add_offline(self, rows: dict[str, np.ndarray]) -> None:
        """Demonstrations: offline buffer only (RLPD's prior data)."""
        self.data.add_offline(rows)

    def updates_due(self) -> int:
        """Critic updates owed by the UTD ratio (0 until `learning_starts` online transitions arrived)."""
        return self.data.updates_due(self.updates)

    def sample(self) -> Batch:
        return self.data.sample()
