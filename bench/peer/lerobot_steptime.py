"""Time gym-hil PandaPickCube steps as LeRobot 0.4.4's make_robot_env builds the env (image_obs=True,
render_mode="human": two 128x128 cameras rendered every step) and as bench/peer_lerobot.py's actor does (state only,
no rendering). Random actions, 30 steps each after a reset; prints ms per step. Its own venv; MUJOCO_GL as set.
Usage: python bench/peer/lerobot_steptime.py
"""

import json
import time

import gymnasium as gym
import gym_hil  # noqa: F401

out = {}
for label, kw in [("lerobot_make_robot_env", {"image_obs": True, "render_mode": "human"}),
                  ("bench_peer_lerobot_actor", {"image_obs": False, "render_mode": "rgb_array", "random_block_position": True})]:
    env = gym.make("gym_hil/PandaPickCube-v0", use_gripper=True, gripper_penalty=-0.02, reset_delay_seconds=0, **kw)
    env.reset(seed=0)
    env.action_space.seed(0)
    t, n = time.perf_counter(), 30
    for _ in range(n):
        env.step(env.action_space.sample())
    out[label] = {"ms_per_step": round(1000 * (time.perf_counter() - t) / n, 1), "observation": sorted(env.observation_space.spaces)}
    env.close()
print(json.dumps(out))
