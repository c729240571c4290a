"""The RLPD-SAC baseline's own config keys (sac_*), the values each accepts and the checks that involve several of
them. It also reads the keys both off-policy learners share (../offpolicy.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...options import allow, help_meta as _h
from ..offpolicy import OffPolicyConfig


@dataclass
class RlpdSacConfig(OffPolicyConfig):
    """What RlpdSAC reads (same names as serve's YAML keys and --flags)."""

    sac_critics: int = field(default=2, metadata=_h("rlpd_sac: Q networks (HIL-SERL 2; target = min of them)"))
    sac_lr: float = field(default=3e-4, metadata=_h("rlpd_sac: Adam lr of actor, critics and temperature (RLPD/HIL-SERL 3e-4)"))
    sac_init_temperature: float = field(default=1.0, metadata=_h("rlpd_sac: initial entropy temperature alpha (RLPD 1.0)"))
    sac_target_entropy: float = field(default=-0.5, metadata=_h("rlpd_sac: target entropy per action dimension (RLPD/HIL-SERL -|A|/2; CleanRL -|A|)"))
    sac_backup_entropy: bool = field(default=True, metadata=_h("rlpd_sac: subtract alpha*log pi in the TD target (CleanRL)"))
    sac_exploration_std: float = field(default=-1.0, metadata=_h("rlpd_sac: Gaussian std the robot adds around tanh(mu); < 0 = follow the policy's own spread, clipped to [sac_exploration_min, sac_exploration_max]"))
    sac_exploration_min: float = field(default=0.05, metadata=_h("rlpd_sac: lower clip of the adaptive exploration std"))
    sac_exploration_max: float = field(default=0.3, metadata=_h("rlpd_sac: upper clip of the adaptive exploration std"))

    def check(self) -> None:
        """What depends on several keys (each key's own range is in the `allow` table below)."""
        if self.sac_exploration_min > self.sac_exploration_max:
            raise ValueError(f"config: sac_exploration_min ({self.sac_exploration_min}) must not exceed sac_exploration_max "
                             f"({self.sac_exploration_max})")


allow(RlpdSacConfig, {  # options.allow: what each key accepts, checked wherever the value is read
    "sac_critics": ">= 2", "sac_lr": "> 0", "sac_init_temperature": "> 0", "sac_exploration_std": "<= 1",
    "sac_exploration_min": "[0, 1]", "sac_exploration_max": "[0, 1]",
})
