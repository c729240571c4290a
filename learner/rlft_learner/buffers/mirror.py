"""Mirror-symmetry augmentation: every finished online episode and every demo is also stored reflected across the
task's symmetry plane, so each episode the robot runs teaches the critic and the actor about two.

Many table-top tasks are mirror-symmetric about the robot's sagittal plane: on push_cube (the sim arm's base at the
origin facing +x, the scene symmetric in y) reflecting y maps every trajectory to another valid trajectory with the
same reward. Under that reflection the base's pan joint and every y coordinate change sign (`mirror_obs`:
`q.shoulder_pan,ee.y,cube.y,target.y`) and so does the pan target (`mirror_action`: `shoulder_pan`). Reflection acts
on physical values: normalised observations and actions are un-normalised with the package's stats, reflected and
normalised again (an action that falls outside the package's [min, max] is clipped to it, as the robot would).
Symmetry augmentation of this kind is standard for equivariant manipulation (e.g. Wang et al. 2022, arXiv 2203.04439,
who build it into the network instead; RL from augmented data: Laskin et al. 2020, arXiv 2004.14990).

The residual learner has one thing to add: the stored base actions are the base's for the real observations, and the
frozen base need not be symmetric. So, as for hindsight relabelling (her.py), each mirrored copy re-runs the base on
the mirrored observations at the robot's re-plan steps; the executed action is the reflected one, reward and episode
end are kept. Copies go to the relabelled-rows buffer (ResidualTD3.her) under their own pseudo-robot; mirrored demos
go to the offline buffer with the demos.

Only declare a symmetry the task has: a reflected trajectory of an asymmetric scene (an obstacle on one side, a
handed gripper) is data from a different task.
"""

from __future__ import annotations

import numpy as np

from .her import EpisodeRelabeler, base_actions

#: Robot index of mirrored online rows (HER's copies use -2, demos -1).
MIRROR_ROBOT = -3


class Mirror:
    """Reflection of normalised observations and actions of a base package."""

    def __init__(self, base, obs: list[str], action: list[str]):
        missing = [n for n in obs if n not in base.obs_names]
        missing_a = [n for n in action if n not in base.action_names]
        if missing or missing_a or not obs:
            raise ValueError(f"config: mirror_obs / mirror_action must name observations and actions of the base package "
                             f"(mirror_obs is required); unknown {missing + missing_a}; its observations are "
                             f"{base.obs_names}, its actions {base.action_names}")
        self.base = base
        self.oi = np.array([base.obs_names.index(n) for n in obs], dtype=np.int64)
        self.ai = np.array([base.action_names.index(n) for n in action], dtype=np.int64)

    def obs(self, obs_n: np.ndarray) -> np.ndarray:
        """Normalised observations (..., obs_dim) -> the mirrored ones."""
        b, i = self.base, self.oi
        out = np.array(obs_n, np.float32, copy=True)
        raw = out[..., i] * b.obs_std[i] + b.obs_mean[i]
        out[..., i] = (-raw - b.obs_mean[i]) / b.obs_std[i]
        return out

    def action(self, act_n: np.ndarray) -> np.ndarray:
        """Normalised actions in [-1, 1] (..., A) -> the mirrored ones, clipped to [-1, 1]."""
        b, i = self.base, self.ai
        out = np.array(act_n, np.float32, copy=True)
        lo, hi = b.act_min[i], b.act_max[i]
        raw = (out[..., i] + 1) / 2 * (hi - lo) + lo
        out[..., i] = np.clip(2 * (-raw - lo) / (hi - lo) - 1, -1, 1)
        return out


class MirrorRelabeler(EpisodeRelabeler):
    """The mirrored copy of every finished episode, with the base re-run on the mirrored observations."""

    robot = MIRROR_ROBOT

    def __init__(self, base, mirror: Mirror, noise_scale: float, seed: int):
        super().__init__(base, noise_scale, seed + 7)
        self.mirror = mirror

    def relabel(self, ep: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
        t_len = len(ep["seq"])
        obs = self.mirror.obs(ep["obs"])  # (T, obs_dim)
        nxt = self.mirror.obs(ep["next_obs"])
        sampler, mcfg = self.sampler()
        # One more step than the episode: the base action at next_obs of the last step, for a truncated episode's
        # bootstrap (from the chunk the robot would have been executing then).
        seq_obs = np.concatenate([obs, nxt[-1:]])[None]  # (1, T+1, obs_dim)
        base_a = base_actions(sampler, mcfg, seq_obs, self.execute, self.noise_scale, self.gen)[0]  # (T+1, A)
        rows = {"obs": obs, "next_obs": nxt, "base_action": base_a[:t_len], "next_base_action": base_a[1:t_len + 1],
                "action": self.mirror.action(ep["action"])}
        for k in ("reward", "terminated", "truncated", "intervention"):
            rows[k] = np.asarray(ep[k], np.float32)
        rows.update(robot=np.full(t_len, self.robot, np.int64), seq=np.arange(self._seq, self._seq + t_len, dtype=np.int64))
        self._seq += t_len
        self.episodes += 1
        return rows
