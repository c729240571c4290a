"""The residual learner's config keys (ResFiT TD3 over the frozen BC base, REDQ critics, HIL-SERL interventions, HER
and mirror relabelling, the chunk critic), the values each accepts and the checks that involve several of them. The keys
both off-policy learners read are in ../offpolicy.py; `serve`'s own (sockets, files, schedule) in commands/serve_config.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...options import allow, help_meta as _h
from ..offpolicy import OffPolicyConfig


@dataclass
class ResidualTD3Config(OffPolicyConfig):
    """What ResidualTD3 reads (same names as serve's YAML keys and --flags)."""

    residual_scale: float = field(default=0.1, metadata=_h("residual bound: tanh(.) * scale in normalised action units (ResFiT 0.1-0.2)"))
    obs_features: str = field(default="", metadata=_h("relative observation features for actor and critic: comma-separated prefix pairs A-B, each adding A.s - B.s for the suffixes s both have and their distance, e.g. cube-target,ee-cube on push_cube (residual_td3/nets.py ObsFeatures). Computed inside the networks, so robots send the same observation. Empty = off"))
    exploration_std: float = field(default=0.05, metadata=_h("Gaussian noise the robot adds in training mode (ResFiT 0.025-0.05)"))
    exploration_rho: float = field(default=0.0, metadata=_h("temporal correlation of that noise per control step, in [0, 1): AR(1) / Ornstein-Uhlenbeck noise with the same stationary std (0 = white, as ResFiT; 0.9 holds a direction for about a second at 10 Hz)"))
    critic_heads: int = field(default=10, metadata=_h("Q heads E (ResFiT 10); the target takes the min of 2 random heads"))
    target_noise: float = field(default=0.2, metadata=_h("target policy smoothing std, as a fraction of residual_scale (TD3 0.2)"))
    target_noise_clip: float = field(default=0.3, metadata=_h("smoothing noise clip, as a fraction of residual_scale (ResFiT 0.3)"))
    actor_lr: float = field(default=1e-4, metadata=_h("AdamW actor learning rate (ResFiT: 1e-6 over 300k+ steps; the zero-initialised residual head is bounded by tanh * residual_scale)"))
    actor_bc_weight: float = field(default=0.0, metadata=_h("TD3+BC (Fujimoto & Gu 2021) anchor for the residual: actor loss = -Q/mean|Q| + w * mean((res - clip(a_offline - a_base))^2) / scale^2 over the batch's offline rows (demos, interventions). 0 = plain TD3 actor loss"))
    actor_bc_source: str = field(default="offline", metadata=_h("rows the actor_bc_weight anchor uses: offline (demos and interventions) or interventions (the operators' corrections only: a_human - a_base is exactly the residual the operator wanted there, while a demo's action minus a relabelled base sample is mostly sampling noise)"))
    actor_residual_penalty: float = field(default=0.0, metadata=_h("trust region around the base: actor loss = -Q/mean|Q| + w * mean((residual/scale)^2). With Adam, the plain TD3 loss moves the actor a full step whatever the critic's gradient size, so a noisy critic drives the bounded residual to its box edges (bang-bang); with this term the residual settles where the critic's claimed gain balances the penalty, and stays near 0 where Q is flat. 0 = off"))
    actor_pessimism: float = field(default=0.0, metadata=_h("actor maximises mean(Q) - k * std(Q) over the ensemble's heads (lower confidence bound, as in SUNRISE / EDAC): heads agree where data is and disagree where the critic extrapolates, so the residual is not pulled out of the data's support. 0 = mean over heads (ResFiT)"))
    critic_lr: float = field(default=3e-4, metadata=_h("AdamW critic lr (RLPD 3e-4; ResFiT 1e-4)"))
    weight_decay: float = field(default=0.01, metadata=_h("AdamW weight decay (torch default)"))
    grad_clip: float = field(default=1.0, metadata=_h("max gradient norm, actor and critic"))
    intervention_action: str = field(default="executed", metadata=_h("intervention steps store the operator's action as executed, or clipped to base +- residual_scale (clipped: docs/algorithms.md §2)"))
    chunk_critic: bool = field(default=False, metadata=_h("also train a chunk-level critic Q(s, the K base actions a chunk executes) on the online re-plan windows and export it as chunk_critic.onnx, for best-of-N base chunks ranked by it (launch actor.best_of_select: chunk_critic; chunk_critic.py)"))
    chunk_critic_every: int = field(default=4, metadata=_h("critic updates per chunk-critic update (a window is K steps, so 4 gives ~K/2 updates per window at UTD 2)"))
    her_goal: str = field(default="", metadata=_h("comma-separated observation names holding the goal, e.g. target.x,target.y on push_cube: turns on hindsight relabelling (HER) of every finished online episode, with the base re-run for each relabelled goal. Empty = off"))
    her_achieved: str = field(default="", metadata=_h("comma-separated observation names holding where the object is, in the goal's units and order, e.g. cube.x,cube.y"))
    her_radius: float = field(default=0.0, metadata=_h("success radius for relabelled goals, in the goal's units (the task's: push_cube 0.035 m); required with her_goal"))
    her_goals_per_episode: int = field(default=4, metadata=_h("relabelled copies per finished episode (HER's k)"))
    her_min_move: float = field(default=0.0, metadata=_h("a relabelled goal is where the object went at least this far from its start (0 = her_radius)"))
    her_fraction: float = field(default=0.5, metadata=_h("share of each batch's online part drawn from the relabelled rows once there are enough"))
    her_capacity: int = field(default=400_000, metadata=_h("relabelled ring buffer rows"))
    mirror_obs: str = field(default="", metadata=_h("comma-separated observation names that change sign under the task's mirror symmetry, e.g. q.shoulder_pan,ee.y,cube.y,target.y on push_cube: turns on mirrored copies of every demo and finished online episode, with the base re-run on the mirrored observations. Empty = off"))
    mirror_action: str = field(default="", metadata=_h("comma-separated action names that change sign under it, e.g. shoulder_pan"))
    mirror_fraction: float = field(default=0.5, metadata=_h("share of each batch's online part drawn from the mirrored rows (with her_goal too, her_fraction applies to both)"))
    warmup_env_steps: int = field(default=0, metadata=_h("env warm-up (ResFiT: 10k steps of base + uniform noise +-0.2): at start the learner publishes the zero residual with uniform exploration noise of half-width warmup_noise, and the actor does not move before this many online transitions arrived. 0 = off"))
    warmup_noise: float = field(default=0.2, metadata=_h("half-width of the uniform exploration noise during the env warm-up, in normalised action units (ResFiT 0.2)"))
    critic_warmup_updates: int = field(default=1000, metadata=_h("critic-only updates before the actor moves (ResFiT 10k)"))

    def check(self) -> None:
        """What depends on several keys (each key's own range is in the `allow` table below)."""
        if self.her_goal and not self.her_radius > 0:
            raise ValueError(f"config: with her_goal, her_radius must be > 0 (the task's success radius, push_cube 0.035); "
                             f"found {self.her_radius}")

    @property
    def relabels(self) -> bool:
        """Finished episodes are copied into a relabelled buffer (hindsight goals or mirror symmetry)."""
        return bool(self.her_goal or self.mirror_obs)

    @property
    def relabelled_share(self) -> float:
        """Share of each batch's online part drawn from the relabelled rows (with her_goal, her_fraction covers both)."""
        return self.her_fraction if self.her_goal else self.mirror_fraction


allow(ResidualTD3Config, {  # options.allow: what each key accepts, checked wherever the value is read
    "residual_scale": "(0, 1]", "exploration_std": "[0, 1]", "exploration_rho": "[0, 1)", "critic_heads": ">= 2",
    "target_noise": ">= 0", "target_noise_clip": ">= 0", "actor_lr": "> 0", "actor_bc_weight": ">= 0",
    "actor_bc_source": ('offline', 'interventions'), "actor_residual_penalty": ">= 0", "actor_pessimism": ">= 0",
    "critic_lr": "> 0", "weight_decay": ">= 0", "grad_clip": "> 0", "intervention_action": ('executed', 'clipped'),
    "chunk_critic_every": ">= 1", "her_radius": ">= 0", "her_goals_per_episode": ">= 1", "her_min_move": ">= 0",
    "her_fraction": "[0, 1]", "her_capacity": ">= 1", "mirror_fraction": "[0, 1]", "warmup_env_steps": ">= 0",
    "warmup_noise": "(0, 1]", "critic_warmup_updates": ">= 0",
})
