"""A tiny deterministic Gymnasium environment for the tests of `driver.kind: gym` (registered on import).

`rlft/PointReach-v0`: a point in the plane moves toward the commanded target (the action, in [-1, 1]^2) by at most
`speed` per step; the episode succeeds (terminated, info["is_success"]) when the point is within 0.05 of the goal.
Observation: {"agent_pos": (2,), "goal": (2,), "pixels": {"front": (H, W, 3) uint8}} where the image marks the point.
Fault knobs for the tests: `exit_at_step` (the process dies there), `raise_at_step` (step raises), `bad_obs_at_step`
(agent_pos has 3 values there), `image_shape`.
"""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class PointReach(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, speed: float = 0.2, image_shape: tuple[int, ...] = (8, 8, 3), exit_at_step: int = -1, raise_at_step: int = -1, bad_obs_at_step: int = -1):
        self.speed = speed
        self.image_shape = tuple(image_shape)
        self.exit_at_step = exit_at_step
        self.raise_at_step = raise_at_step
        self.bad_obs_at_step = bad_obs_at_step
        self.action_space = spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)
        self.observation_space = spaces.Dict(
            {
                "agent_pos": spaces.Box(-1.0, 1.0, (2,), dtype=np.float64),
                "goal": spaces.Box(-1.0, 1.0, (2,), dtype=np.float64),
                "pixels": spaces.Dict({"front": spaces.Box(0, 255, self.image_shape, dtype=np.uint8)}),
            }
        )
        self.pos = np.zeros(2)
        self.goal = np.zeros(2)
        self.steps = 0

    def _obs(self):
        img = np.zeros(self.image_shape, dtype=np.uint8)
        if len(self.image_shape) == 3 and self.image_shape[2] == 3:
            h, w = self.image_shape[:2]
            r = int(round((self.pos[1] + 1) / 2 * (h - 1)))
            c = int(round((self.pos[0] + 1) / 2 * (w - 1)))
            img[r, c] = (255, 255, 255)
        return {"agent_pos": self.pos.copy(), "goal": self.goal.copy(), "pixels": {"front": img}}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = np.zeros(2)
        self.goal = self.np_random.uniform(-0.8, 0.8, 2)
        self.steps = 0
        return self._obs(), {"is_success": False}

    def step(self, action):
        self.steps += 1
        if self.steps == self.exit_at_step:
            os._exit(3)
        if self.steps == self.raise_at_step:
            raise RuntimeError("simulated environment failure")
        target = np.clip(np.asarray(action, dtype=np.float64), -1, 1)
        d = target - self.pos
        n = float(np.linalg.norm(d))
        self.pos = self.pos + (d if n <= self.speed else d / n * self.speed)
        success = bool(np.linalg.norm(self.pos - self.goal) < 0.05)
        obs = self._obs()
        if self.steps == self.bad_obs_at_step:
            obs["agent_pos"] = np.zeros(3)
        return obs, float(-np.linalg.norm(self.pos - self.goal)), success, False, {"is_success": success}


class PointReachExpert:
    """The scripted expert of PointReach (driver.expert: rlft_learner.gym_testenv:PointReachExpert): command the goal,
    read from the env's privileged state (not from the observation)."""

    def __init__(self, env: PointReach):
        self.env = env

    def reset(self, seed: int) -> None:
        pass

    def act(self, obs) -> np.ndarray:
        return self.env.goal.copy()


class PointReachOperator:
    """A scripted operator for the tests (driver.operator: rlft_learner.gym_testenv:PointReachOperator): it has the robot
    on the observations numbered in `steps` (0 is the reset's) and commands `action` there."""

    def __init__(self, env: PointReach, steps: tuple[int, ...] = (2, 3), action: tuple[float, ...] = (-0.5, -0.5)):
        self.steps, self.action, self.t = set(steps), np.asarray(action, dtype=np.float64), -1

    def reset(self, seed: int) -> None:
        self.t = -1

    def observe(self, obs):
        self.t += 1
        return self.action.copy() if self.t in self.steps else None


if "rlft/PointReach-v0" not in gym.registry:
    gym.register("rlft/PointReach-v0", entry_point=PointReach, max_episode_steps=50)
