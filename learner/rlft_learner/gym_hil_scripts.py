"""Scripted expert and scripted operator for gym-hil's PandaPickCube (`gym_hil/PandaPickCube-v0`: 4-D action, the
end-effector step [-1, 1]^3 scaled by 0.025 m and the gripper command in [0, 2]), for `driver.kind: gym`
(`driver.expert: rlft_learner.gym_hil_scripts:PandaPickCubeExpert`). Both read the env's privileged state (the block's
and the pinch site's positions from MuJoCo's sensors, the gripper's actuator), never the observation, so demos and
interventions are reproducible without a gamepad. Imports neither gym_hil nor mujoco itself: it gets the env.
"""

from __future__ import annotations

from typing import Any

import numpy as np

STEP_M = 0.025  # gym-hil's DEFAULT_EE_STEP_SIZE: action 1.0 moves the target 2.5 cm
MAX_GRIPPER = 255.0


class PandaPickCubeExpert:
    """Above the block, down, close, lift: a state machine on the privileged state.

    `quality` < 1 adds seeded Gaussian noise of that scale (times 1 - quality) to the end-effector command, for demos
    that are not all alike.
    """

    def __init__(self, env: Any, quality: float = 1.0):
        self.env = env
        self.quality = quality
        self.rng = np.random.default_rng(0)
        self.phase = "approach"
        self.hold = 0
        self.z_init = 0.0

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.phase = "approach"
        self.hold = 0
        self.z_init = float(self._block()[2])

    def sync(self) -> None:
        """Picks the phase from the state alone (the operator takes over mid-episode): holding the block lifts it,
        anything else starts over above the block with the gripper open."""
        closed = float(self.env._data.ctrl[self.env._gripper_ctrl_id]) / MAX_GRIPPER > 0.5
        self.phase = "lift" if closed and np.linalg.norm(self._block() - self._pinch()) < 0.03 else "approach"
        self.hold = 0

    def _block(self) -> np.ndarray:
        return np.asarray(self.env._data.sensor("block_pos").data, dtype=np.float64)

    def _pinch(self) -> np.ndarray:
        return np.asarray(self.env._data.sensor("2f85/pinch_pos").data, dtype=np.float64)

    def act(self, obs: Any) -> np.ndarray:
        b, p = self._block(), self._pinch()
        close = 0.0  # gripper command: 0 opens, 2 closes (gym-hil subtracts 1)
        if self.phase == "approach":
            target = b + [0, 0, 0.06]
            if np.linalg.norm((target - p)[:2]) < 0.008 and abs((target - p)[2]) < 0.015:
                self.phase = "descend"
        if self.phase == "descend":
            target = b + [0, 0, 0.0]
            if np.linalg.norm(target - p) < 0.01:
                self.phase, self.hold = "grasp", 0
        if self.phase == "grasp":
            target, close = b.copy(), 2.0
            self.hold += 1
            if self.hold >= 4:
                self.phase = "lift"
        if self.phase == "lift":
            target, close = np.array([b[0], b[1], self.z_init + 0.2]), 2.0
        step = np.clip((target - p) / STEP_M, -1.0, 1.0)
        if self.quality < 1.0:
            step = np.clip(step + self.rng.normal(0.0, 1.0 - self.quality, 3), -1.0, 1.0)
        return np.concatenate([step, [close]])


class PandaPickCubeOperator:
    """A scripted person supervising the policy, as in HIL-SERL (Luo et al. 2024, arXiv 2410.21845): after a grace
    period, when the episode makes no progress for `patience_steps` (the pinch site no closer to the block and the
    block no higher), it takes over for `correction_steps` with the expert's strategy, then hands back.

    `observe(obs)` returns the operator's action while it has the robot, else None.
    """

    def __init__(self, env: Any, patience_steps: int = 15, correction_steps: int = 15, grace_steps: int = 10):
        self.env = env
        self.expert = PandaPickCubeExpert(env)
        self.patience, self.correction, self.grace = patience_steps, correction_steps, grace_steps
        self.reset(0)

    def reset(self, seed: int) -> None:
        self.expert.reset(seed)
        self.t = 0
        self.best = np.inf
        self.last_progress = 0
        self.until = -1
        self.takeovers = 0

    def _remaining(self) -> float:
        b, p = self.expert._block(), self.expert._pinch()
        return float(np.linalg.norm(p - b) + 2.0 * max(0.0, self.expert.z_init + 0.1 - b[2]))

    def observe(self, obs: Any) -> np.ndarray | None:
        self.t += 1
        r = self._remaining()
        if r < self.best - 0.005:
            self.best, self.last_progress = r, self.t
        if self.t < self.until:
            return self.expert.act(obs)
        if self.until >= 0 and self.t == self.until:
            # Hand back: a fresh patience window from where the correction left it.
            self.until, self.last_progress, self.best = -1, self.t, r
            return None
        if self.t > self.grace and self.t - self.last_progress >= self.patience:
            self.takeovers += 1
            self.until = self.t + self.correction
            self.expert.sync()
            return self.expert.act(obs)
        return None
