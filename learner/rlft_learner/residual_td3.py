"""Residual off-policy RL on top of a frozen BC policy: ResFiT (Ankile et al. 2025, arXiv 2509.19301) with
TD3 (Fujimoto et al. 2018, arXiv 1802.09477), a REDQ critic ensemble (Chen et al. 2021, arXiv 2101.05982),
RLPD 50/50 batches (Ball et al. 2023, arXiv 2302.02948) and HIL-SERL intervention routing (Luo et al. 2024,
arXiv 2410.21845). See docs/algorithms.md §1-2. The online loop that feeds it is `serve.py`.

The robot runs the base policy and adds `residual = tanh(MLP([obs_norm, a_base])) * scale`; it sends every step as a
transition (docs/protocol.md). Here the critic learns Q(s, executed action) from n-step sparse-reward returns and the
actor learns a residual that maximises the mean Q of the ensemble.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from dataclasses import dataclass, field, fields

import numpy as np
import torch

from .cli import allow, help_meta as _h
from .chunk_critic import ChunkCritic, mirrored_rows
from .finite import StepGuard
from .replay import Batch, ReplayBuffer, to_batch
from .server import DoorConfig
from .residual_nets import CriticEnsemble, ObsFeatures, ResidualActor, combine


#: The learner `algorithm`s: ours (residual over the BC base) and the HIL-SERL / RLPD SAC baseline (rlpd_sac.py).
ALGORITHMS = ("residual_td3", "rlpd_sac")


@dataclass
class Config(DoorConfig):
    """Everything `serve` reads from its YAML file (same names as keys; each also a --flag). Unknown keys are errors;
    what each key accepts is declared once, in the `allow` table below the class. The door's keys (curve_secret,
    curve_authorized, insecure_public_bind, max_message_mb) come from server.DoorConfig."""

    # --- sockets and files ---
    experience_bind: str = field(default="tcp://127.0.0.1:5555", metadata=_h("ROUTER address robots send hello/transitions/heartbeat/get_policy to"))
    policy_bind: str = field(default="tcp://127.0.0.1:5556", metadata=_h("PUB address every new residual package is published on (topic `policy`)"))
    base_package: str = field(default="", metadata=_h("REQUIRED: the BC package dir; its names and stats define normalisation, its version must match robots' hello"))
    run_dir: str = field(default="runs/residual", metadata=_h("checkpoints, packages/ and metrics.jsonl; an existing run is resumed"))
    demo_dataset: str = field(default="", metadata=_h("optional .npz of demos (train-bc format) put in the offline buffer, base actions relabelled by the base policy"))
    base_noise_scale: float = field(default=1.0, metadata=_h("sampling temperature the robot runs the base at (launch actor.noise_scale; rlft session passes it): demo base actions are relabelled with the initial DDIM noise x this, so offline rows match what the robot executes"))
    config_hash: str = field(default="", metadata=_h("robot config hash to require in hello; empty = accept any and record it"))
    max_robots: int = field(default=64, metadata=_h("robot ids this learner serves at once; a hello for one more is refused. Ids that never sent a transition are forgotten when their connection is gone and never checkpointed, so invented ids cannot pile up"))
    heartbeat_sec: float = field(default=2.0, metadata=_h("heartbeat period told to robots in welcome"))
    sign_key: str = field(default="", metadata=_h("ed25519 private key (keys/learner.sign.pem) that signs every published package (policy.sig); empty = unsigned"))
    # --- schedule ---
    publish_every: int = field(default=1000, metadata=_h("critic updates between residual package exports (none while the actor has not moved)"))
    keep_packages: int = field(default=5, metadata=_h("newest packages kept on disk; older ones are deleted"))
    checkpoint_every: int = field(default=5000, metadata=_h("critic updates between checkpoints (also on SIGINT/SIGTERM and at the end)"))
    checkpoint_every_s: float = field(default=30.0, metadata=_h("seconds between checkpoints while new transitions arrive. Robots keep every transition in their disk spool until a checkpoint holds it (durable_seq), so this bounds how much they keep"))
    max_updates: int = field(default=0, metadata=_h("stop after this many critic updates (0 = forever)"))
    max_seconds: float = field(default=0.0, metadata=_h("stop after this many seconds (0 = forever)"))
    json_progress: bool = field(default=False, metadata=_h("print JSON lines (progress every ~2 s, policy on publish) on stdout"))
    progress_every_s: float = field(default=2.0, metadata=_h("seconds between progress lines / metrics rows"))
    threads: int = field(default=1, metadata=_h("torch CPU threads (default 1: extra OpenMP threads spin-wait for cores the simulator or robot stack also uses)"))
    device: str = field(default="cpu", metadata=_h("torch device of the actor and critics: cpu or cuda"))
    seed: int = field(default=1, metadata=_h("random seed"))
    # --- residual actor (ResFiT) ---
    residual_scale: float = field(default=0.1, metadata=_h("residual bound: tanh(.) * scale in normalised action units (ResFiT 0.1-0.2)"))
    obs_features: str = field(default="", metadata=_h("relative observation features for actor and critic: comma-separated prefix pairs A-B, each adding A.s - B.s for the suffixes s both have and their distance, e.g. cube-target,ee-cube on push_cube (residual_nets.ObsFeatures). Computed inside the networks, so robots send the same observation. Empty = off"))
    exploration_std: float = field(default=0.05, metadata=_h("Gaussian noise the robot adds in training mode (ResFiT 0.025-0.05)"))
    exploration_rho: float = field(default=0.0, metadata=_h("temporal correlation of that noise per control step, in [0, 1): AR(1) / Ornstein-Uhlenbeck noise with the same stationary std (0 = white, as ResFiT; 0.9 holds a direction for about a second at 10 Hz)"))
    actor_hidden: int = field(default=256, metadata=_h("actor MLP width"))
    actor_layers: int = field(default=2, metadata=_h("actor hidden layers"))
    # --- critic ensemble (REDQ) ---
    critic_heads: int = field(default=10, metadata=_h("Q heads E (ResFiT 10); the target takes the min of 2 random heads"))
    critic_hidden: int = field(default=128, metadata=_h("critic hidden width (ResFiT: 1024)"))
    critic_layers: int = field(default=2, metadata=_h("critic hidden layers, each Linear-LayerNorm-ReLU"))
    # --- TD3 ---
    gamma: float = field(default=0.99, metadata=_h("discount (ResFiT 0.99-0.995)"))
    n_step: int = field(default=3, metadata=_h("n-step returns (ResFiT 3-5); success stops the bootstrap, truncation does not"))
    utd: float = field(default=2.0, metadata=_h("critic updates per received env step, the update-to-data ratio (ResFiT: 4)"))
    policy_delay: int = field(default=2, metadata=_h("critic updates per actor update (TD3)"))
    target_noise: float = field(default=0.2, metadata=_h("target policy smoothing std, as a fraction of residual_scale (TD3 0.2)"))
    target_noise_clip: float = field(default=0.3, metadata=_h("smoothing noise clip, as a fraction of residual_scale (ResFiT 0.3)"))
    tau: float = field(default=0.005, metadata=_h("Polyak rate of the target networks"))
    actor_lr: float = field(default=1e-4, metadata=_h("AdamW actor learning rate (ResFiT: 1e-6 over 300k+ steps; the zero-initialised residual head is bounded by tanh * residual_scale)"))
    actor_bc_weight: float = field(default=0.0, metadata=_h("TD3+BC (Fujimoto & Gu 2021) anchor for the residual: actor loss = -Q/mean|Q| + w * mean((res - clip(a_offline - a_base))^2) / scale^2 over the batch's offline rows (demos, interventions). 0 = plain TD3 actor loss"))
    actor_bc_source: str = field(default="offline", metadata=_h("rows the actor_bc_weight anchor uses: offline (demos and interventions) or interventions (the operators' corrections only: a_human - a_base is exactly the residual the operator wanted there, while a demo's action minus a relabelled base sample is mostly sampling noise)"))
    actor_residual_penalty: float = field(default=0.0, metadata=_h("trust region around the base: actor loss = -Q/mean|Q| + w * mean((residual/scale)^2). With Adam, the plain TD3 loss moves the actor a full step whatever the critic's gradient size, so a noisy critic drives the bounded residual to its box edges (bang-bang); with this term the residual settles where the critic's claimed gain balances the penalty, and stays near 0 where Q is flat. 0 = off"))
    actor_pessimism: float = field(default=0.0, metadata=_h("actor maximises mean(Q) - k * std(Q) over the ensemble's heads (lower confidence bound, as in SUNRISE / EDAC): heads agree where data is and disagree where the critic extrapolates, so the residual is not pulled out of the data's support. 0 = mean over heads (ResFiT)"))
    critic_lr: float = field(default=3e-4, metadata=_h("AdamW critic lr (RLPD 3e-4; ResFiT 1e-4)"))
    weight_decay: float = field(default=0.01, metadata=_h("AdamW weight decay (torch default)"))
    grad_clip: float = field(default=1.0, metadata=_h("max gradient norm, actor and critic"))
    batch_size: int = field(default=256, metadata=_h("transitions per update"))
    intervention_action: str = field(default="executed", metadata=_h("intervention steps store the operator's action as executed, or clipped to base +- residual_scale (clipped: docs/algorithms.md §2)"))
    chunk_critic: bool = field(default=False, metadata=_h("also train a chunk-level critic Q(s, the K base actions a chunk executes) on the online re-plan windows and export it as chunk_critic.onnx, for best-of-N base chunks ranked by it (launch actor.best_of_select: chunk_critic; chunk_critic.py)"))
    chunk_critic_every: int = field(default=4, metadata=_h("critic updates per chunk-critic update (a window is K steps, so 4 gives ~K/2 updates per window at UTD 2)"))
    offline_fraction: float = field(default=0.5, metadata=_h("share of each batch from the offline buffer (RLPD 50/50) when it has data"))
    # --- hindsight goal relabelling (her.py) ---
    her_goal: str = field(default="", metadata=_h("comma-separated observation names holding the goal, e.g. target.x,target.y on push_cube: turns on hindsight relabelling (HER) of every finished online episode, with the base re-run for each relabelled goal. Empty = off"))
    her_achieved: str = field(default="", metadata=_h("comma-separated observation names holding where the object is, in the goal's units and order, e.g. cube.x,cube.y"))
    her_radius: float = field(default=0.0, metadata=_h("success radius for relabelled goals, in the goal's units (the task's: push_cube 0.035 m); required with her_goal"))
    her_goals_per_episode: int = field(default=4, metadata=_h("relabelled copies per finished episode (HER's k)"))
    her_min_move: float = field(default=0.0, metadata=_h("a relabelled goal is where the object went at least this far from its start (0 = her_radius)"))
    her_fraction: float = field(default=0.5, metadata=_h("share of each batch's online part drawn from the relabelled rows once there are enough"))
    her_capacity: int = field(default=400_000, metadata=_h("relabelled ring buffer rows"))
    # --- mirror-symmetry augmentation (mirror.py) ---
    mirror_obs: str = field(default="", metadata=_h("comma-separated observation names that change sign under the task's mirror symmetry, e.g. q.shoulder_pan,ee.y,cube.y,target.y on push_cube: turns on mirrored copies of every demo and finished online episode, with the base re-run on the mirrored observations. Empty = off"))
    mirror_action: str = field(default="", metadata=_h("comma-separated action names that change sign under it, e.g. shoulder_pan"))
    mirror_fraction: float = field(default=0.5, metadata=_h("share of each batch's online part drawn from the mirrored rows (with her_goal too, her_fraction applies to both)"))
    learning_starts: int = field(default=500, metadata=_h("online transitions before the first update (ResFiT warms up with 10k env steps)"))
    warmup_env_steps: int = field(default=0, metadata=_h("env warm-up (ResFiT: 10k steps of base + uniform noise +-0.2): at start the learner publishes the zero residual with uniform exploration noise of half-width warmup_noise, and the actor does not move before this many online transitions arrived. 0 = off"))
    warmup_noise: float = field(default=0.2, metadata=_h("half-width of the uniform exploration noise during the env warm-up, in normalised action units (ResFiT 0.2)"))
    critic_warmup_updates: int = field(default=1000, metadata=_h("critic-only updates before the actor moves (ResFiT 10k)"))
    online_capacity: int = field(default=200_000, metadata=_h("online ring buffer rows"))
    offline_capacity: int = field(default=100_000, metadata=_h("offline ring buffer rows (demos + interventions)"))
    # --- cameras (pixel_residual.py; only with a base package whose policy.json has observation.images) ---
    image_encoder: str = field(default="base", metadata=_h("what turns camera frames into the actor's and critic's features: base (the frozen BC policy's encoder, computed once per frame without gradients: ResFiT) or own (a fresh encoder per camera trained by the critic loss, with DrQ random-shift augmentation; the actor reads its features detached, DrQ-v2)"))
    image_shift: int = field(default=4, metadata=_h("image_encoder own: random-shift augmentation, pixels of replicate padding (DrQ); 0 = off"))
    # --- algorithm: ours, or the HIL-SERL / RLPD baseline (rlpd_sac.py) ---
    algorithm: str = field(default="residual_td3", metadata=_h("residual_td3 (ours: residual over the BC base) or rlpd_sac (SAC from scratch with demos, the HIL-SERL/RLPD baseline; robots run it over a zero base). rlpd_sac uses actor_hidden/layers, critic_hidden/layers, gamma, n_step, utd, policy_delay, tau, batch_size, offline_fraction, learning_starts and the sac_* keys"))
    sac_critics: int = field(default=2, metadata=_h("rlpd_sac: Q networks (HIL-SERL 2; target = min of them)"))
    sac_lr: float = field(default=3e-4, metadata=_h("rlpd_sac: Adam lr of actor, critics and temperature (RLPD/HIL-SERL 3e-4)"))
    sac_init_temperature: float = field(default=1.0, metadata=_h("rlpd_sac: initial entropy temperature alpha (RLPD 1.0)"))
    sac_target_entropy: float = field(default=-0.5, metadata=_h("rlpd_sac: target entropy per action dimension (RLPD/HIL-SERL -|A|/2; CleanRL -|A|)"))
    sac_backup_entropy: bool = field(default=True, metadata=_h("rlpd_sac: subtract alpha*log pi in the TD target (CleanRL)"))
    sac_exploration_std: float = field(default=-1.0, metadata=_h("rlpd_sac: Gaussian std the robot adds around tanh(mu); < 0 = follow the policy's own spread, clipped to [sac_exploration_min, sac_exploration_max]"))
    sac_exploration_min: float = field(default=0.05, metadata=_h("rlpd_sac: lower clip of the adaptive exploration std"))
    sac_exploration_max: float = field(default=0.3, metadata=_h("rlpd_sac: upper clip of the adaptive exploration std"))


allow(Config, {  # cli.allow: what each key accepts, checked wherever the value is read
    "base_noise_scale": "[0, 2]", "max_robots": "[1, 100000]", "heartbeat_sec": "(0, 60]", "publish_every": ">= 1",
    "keep_packages": ">= 1", "checkpoint_every": ">= 1", "checkpoint_every_s": "> 0", "max_updates": ">= 0",
    "max_seconds": ">= 0", "progress_every_s": "> 0", "threads": ">= 1", "seed": ">= 0",
    "residual_scale": "(0, 1]", "exploration_std": "[0, 1]", "exploration_rho": "[0, 1)", "actor_hidden": ">= 1",
    "actor_layers": ">= 1", "critic_heads": ">= 2", "critic_hidden": ">= 1", "critic_layers": ">= 1",
    "gamma": "(0, 1]", "n_step": ">= 1", "utd": "> 0", "policy_delay": ">= 1", "target_noise": ">= 0",
    "target_noise_clip": ">= 0", "tau": "(0, 1]", "actor_lr": "> 0", "actor_bc_weight": ">= 0",
    "actor_bc_source": ('offline', 'interventions'), "actor_residual_penalty": ">= 0", "actor_pessimism": ">= 0",
    "critic_lr": "> 0", "weight_decay": ">= 0", "grad_clip": "> 0", "batch_size": ">= 2",
    "intervention_action": ('executed', 'clipped'), "chunk_critic_every": ">= 1", "offline_fraction": "[0, 1]",
    "her_radius": ">= 0", "her_goals_per_episode": ">= 1", "her_min_move": ">= 0", "her_fraction": "[0, 1]",
    "her_capacity": ">= 1", "mirror_fraction": "[0, 1]", "learning_starts": ">= 0", "warmup_env_steps": ">= 0",
    "warmup_noise": "(0, 1]", "critic_warmup_updates": ">= 0", "online_capacity": ">= 1",
    "offline_capacity": ">= 1", "algorithm": ALGORITHMS, "sac_critics": ">= 2", "sac_lr": "> 0",
    "sac_init_temperature": "> 0", "sac_exploration_std": "<= 1", "sac_exploration_min": "[0, 1]",
    "sac_exploration_max": "[0, 1]", "image_encoder": ("base", "own"), "image_shift": "[0, 32]",
})


def config_keys() -> set[str]:
    return {f.name for f in fields(Config)}


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

def route(rows: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """Split received rows into (online rows, offline rows): every step goes online; intervention steps (the operator's
    executed action) also go to the offline buffer. The policy's own steps around an intervention stay online only."""
    mask = rows["intervention"] > 0.5
    offline = {k: v[mask] for k, v in rows.items()} if mask.any() else None
    return rows, offline


def redq_target(q_next: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """min over 2 randomly chosen heads of the target ensemble (REDQ, M = 2); q_next (E, B) -> (B,)."""
    pick = torch.randperm(q_next.shape[0], generator=gen)[:2]
    return q_next[pick].min(dim=0).values


# ---------------------------------------------------------------------------------------------------------------------
# The agent.

class ResidualTD3:
    """Networks, optimisers, buffers and counters; `add()` takes received rows, `update()` runs one critic update
    (and every `policy_delay`-th time, after the critic warm-up, one actor update)."""

    #: Intervention actions can be clipped to the residual's box (see clip_interventions); a full policy keeps them.
    clips_interventions = True
    #: The optional chunk-level critic (enable_chunk_critic); None for subclasses that never enable it (RlpdSAC).
    chunk: ChunkCritic | None = None
    #: Relabelled copies of finished episodes: hindsight goals (her.py, `her_goal`) and mirrored episodes (mirror.py,
    #: `mirror_obs`), each kind under its own pseudo-robot; None when neither is set.
    her: ReplayBuffer | None = None

    def __init__(self, cfg: Config, obs_dim: int, act_dim: int, features: ObsFeatures | None = None,
                 net_obs_dim: int | None = None):
        """`features`: the relative observation features of `obs_features` (built from the base package by
        serve.make_agent), shared by actor and critic; None = the normalised observation alone. `net_obs_dim`: the
        networks' observation width when it is not the buffers' obs_dim (pixel_residual: state + camera features)."""
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
        self.online = ReplayBuffer(cfg.online_capacity, obs_dim, act_dim)
        self.offline = ReplayBuffer(cfg.offline_capacity, obs_dim, act_dim)
        self.her = ReplayBuffer(cfg.her_capacity, obs_dim, act_dim) if cfg.her_goal or cfg.mirror_obs else None
        self.rng = np.random.default_rng(cfg.seed)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.updates = 0  # critic updates
        self._n_off = 0  # offline rows in the last sampled batch
        self.actor_updates = 0
        self.env_steps = 0  # online transitions received (the UTD clock)
        self.intervention_steps = 0
        self.chunk = None
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

    # -- data --
    def add(self, rows: dict[str, np.ndarray]) -> None:
        if self.clips_interventions and self.cfg.intervention_action == "clipped":
            rows = clip_interventions(rows, self.cfg.residual_scale)
        if self.chunk is not None and "step" in rows:
            self.chunk.windows.add(rows)
            if self.chunk_mirror is not None:
                self.chunk.windows.add(mirrored_rows(rows, self.chunk_mirror))
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

    def updates_due(self) -> int:
        """Critic updates owed by the UTD ratio (0 until `learning_starts` online transitions arrived)."""
        if len(self.online) < max(self.cfg.learning_starts, 1):
            return 0
        return max(0, int(self.cfg.utd * self.env_steps) - self.updates)

    def sample(self) -> Batch:
        cfg = self.cfg
        n_off = int(round(cfg.batch_size * cfg.offline_fraction)) if len(self.offline) else 0
        self._n_off = n_off  # offline rows are the batch's last n_off rows (see the actor's BC anchor)
        n_on = cfg.batch_size - n_off
        # Hindsight rows take her_fraction of the online share once there are a batch's worth of them.
        share = cfg.her_fraction if cfg.her_goal else cfg.mirror_fraction
        n_her = int(round(n_on * share)) if self.her is not None and len(self.her) >= cfg.batch_size else 0
        parts = [self.online.nstep(self.online.sample_idx(n_on - n_her, self.rng), cfg.n_step, cfg.gamma)]
        if n_her:
            parts.append(self.her.nstep(self.her.sample_idx(n_her, self.rng), cfg.n_step, cfg.gamma))
        if n_off:
            idx = self.offline.sample_idx(n_off, self.rng)
            # Which offline rows are online interventions (a robot index) rather than demos (robot -1).
            self._off_intervention = torch.from_numpy(self.offline.data["robot"][idx] >= 0).to(self.device)
            parts.append(self.offline.nstep(idx, cfg.n_step, cfg.gamma))
        return to_batch(parts, self.device)

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
        """The TD3 step on batch `b`. `actor_obs`: what the actor update reads instead of b.obs (pixel_residual's own
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
            self._polyak(self.critic, self.critic_target)
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
            n_off, s = self._n_off, cfg.residual_scale
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
                mask = (self._off_intervention if cfg.actor_bc_source == "interventions" else torch.ones(n_off, dtype=torch.bool, device=b.action.device))
                if bool(mask.any()):
                    target = (b.action[-n_off:][mask] - b.base_action[-n_off:][mask]).clamp(-s, s)  # (M, A)
                    bc = ((residual[-n_off:][mask] - target) ** 2).mean() / (s * s)
                    actor_loss = actor_loss + cfg.actor_bc_weight * bc
                    out["losses/actor_bc"] = bc.item()
            if self.guard.step("actor", actor_loss, self.actor_opt, self.actor.parameters(), cfg.grad_clip):
                self._polyak(self.actor, self.actor_target)
                self.actor_updates += 1
                out["losses/actor"] = actor_loss.item()
                out["charts/residual_abs"] = residual.detach().abs().mean().item()
            else:
                out.pop("losses/actor_residual_penalty", None)
                out.pop("losses/actor_bc", None)
        return out

    def _polyak(self, net: torch.nn.Module, target: torch.nn.Module) -> None:
        with torch.no_grad():
            for p, pt in zip(net.parameters(), target.parameters()):
                pt.lerp_(p, self.cfg.tau)

    # -- checkpoints --
    def state_dict(self) -> dict:
        return {"actor": self.actor.state_dict(), "critic": self.critic.state_dict(),
                "actor_target": self.actor_target.state_dict(), "critic_target": self.critic_target.state_dict(),
                "actor_opt": self.actor_opt.state_dict(), "critic_opt": self.critic_opt.state_dict(),
                "counters": {"updates": self.updates, "actor_updates": self.actor_updates, "env_steps": self.env_steps,
                             "intervention_steps": self.intervention_steps},
                "torch_rng": self.gen.get_state(), "np_rng": json.dumps(self.rng.bit_generator.state),
                **({"chunk": self.chunk.state_dict()} if self.chunk is not None else {})}

    def load_state_dict(self, state: dict) -> None:
        for name in ("actor", "critic", "actor_target", "critic_target", "actor_opt", "critic_opt"):
            getattr(self, name).load_state_dict(state[name])
        for k, v in state["counters"].items():
            setattr(self, k, int(v))
        self.gen.set_state(state["torch_rng"])
        self.rng.bit_generator.state = json.loads(state["np_rng"])
        if self.chunk is not None and "chunk" in state:
            self.chunk.load_state_dict(state["chunk"])


# ---------------------------------------------------------------------------------------------------------------------
# Demonstrations -> offline rows (optional).

def demo_rows(path: str, base: BasePackage, noise_scale: float = 1.0, mirror=None) -> dict[str, np.ndarray]:
    """Offline rows from a train-bc .npz. As in ResFiT, base_action is relabelled by running the frozen base policy on
    the demo observations once at load: chunks predicted every `execute_steps` steps and executed open-loop, as the robot
    does, from initial noise x `noise_scale` (the robot's sampling temperature). Success ends an episode (terminated);
    other episode ends are truncations. With `mirror` (mirror.Mirror), every demo is followed by its mirrored copy,
    whose base actions are the base's on the mirrored observations."""
    from .data import load_npz
    from .her import base_actions, load_base_sampler

    data = load_npz(path)
    if data.obs_names != base.obs_names or data.action_names != base.action_names:
        raise ValueError(f"{path}: obs/action names differ from the base package's; record demos for the same task")
    sampler, mcfg = load_base_sampler(base.path)
    execute = base.execute_steps
    gen = torch.Generator().manual_seed(0)
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("obs", "next_obs", "base_action", "action", "next_base_action",
                                                         "reward", "terminated", "truncated")}
    for ep in data.episodes:
        T = len(ep.obs)
        for flip in (False, True) if mirror is not None else (False,):
            obs_n = base.norm_obs(ep.obs)  # (T, obs_dim)
            act_n = base.norm_action(ep.action)  # (T, A)
            if flip:
                obs_n, act_n = mirror.obs(obs_n), mirror.action(act_n)
            base_a = base_actions(sampler, mcfg, obs_n[None], execute, noise_scale, gen)[0]  # (T, A)
            nxt = np.minimum(np.arange(T) + 1, T - 1)
            term = np.zeros(T, np.float32)
            trunc = np.zeros(T, np.float32)
            (term if ep.success else trunc)[-1] = 1.0
            for k, v in (("obs", obs_n), ("next_obs", obs_n[nxt]), ("base_action", base_a), ("action", act_n),
                         ("next_base_action", base_a[nxt]), ("reward", ep.reward.astype(np.float32)), ("terminated", term),
                         ("truncated", trunc)):
                cols[k].append(v)
    rows = {k: np.concatenate(v) for k, v in cols.items()}
    n = len(rows["reward"])
    rows.update(intervention=np.ones(n, np.float32), robot=np.full(n, -1, np.int64), seq=np.arange(n, dtype=np.int64))
    return rows
